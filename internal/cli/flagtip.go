package cli

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagTip answers pflag's "unknown flag: --formt" with the flags of cmd it is close to, as cobra does
// for commands: "a similar flag exists: --format". A flag that belongs to another command says which
// ("--repeat is a flag of: run"). "" when nothing is close.
func flagTip(cmd *cobra.Command, err error) string {
	if cmd == nil || err == nil {
		return ""
	}
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	var close []string
	seen := map[string]bool{}
	visit := func(f *pflag.Flag) {
		if seen[f.Name] || f.Hidden {
			return
		}
		seen[f.Name] = true
		if d := editDistance(name, f.Name); d <= 1 || d == 2 && len(name) >= 5 || len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			close = append(close, "--"+f.Name)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if len(close) > 0 {
		sort.Strings(close)
		if len(close) == 1 {
			return "a similar flag exists: " + close[0]
		}
		return "similar flags exist: " + strings.Join(close, ", ")
	}
	// Not a flag of this command: perhaps of another one.
	var owners []string
	for _, c := range cmd.Root().Commands() {
		if c != cmd && c.Flags().Lookup(name) != nil {
			owners = append(owners, c.Name())
		}
	}
	if len(owners) > 0 {
		sort.Strings(owners)
		return "--" + name + " is a flag of: " + strings.Join(owners, ", ") + " (not of " + cmd.CommandPath() + ")"
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes (flag names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
