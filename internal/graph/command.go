package graph

import "strings"

// CommandProgram is the program a shell command line runs first when it names it without a folder
// ("cc" in "CCACHE_DIR=/c cc -c a.c"; variable assignments before it skipped); "" when it names a path or
// the line starts with shell syntax this reading does not follow (quotes, expansions, redirections).
func CommandProgram(cmd string) string {
	for _, w := range strings.Fields(cmd) {
		if i := strings.IndexByte(w, '='); i > 0 && !strings.ContainsAny(w[:i], "/-'\"$`") {
			continue // NAME=value before the program
		}
		if strings.ContainsAny(w, "/'\"$`\\(){}<>|;&*?=") {
			return ""
		}
		return w
	}
	return ""
}
