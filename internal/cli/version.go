package cli

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// versionText is what `stalecheck --version` prints: stalecheck's version, then the main module's
// path and version as the Go toolchain recorded them in the binary (runtime/debug.ReadBuildInfo:
// "v1.2.3" from `go install …@v1.2.3`, a pseudo-version or "(devel)" from a local build), then the
// VCS revision, commit time and whether the tree had uncommitted changes (the vcs.* build settings,
// present when built inside a git checkout without -buildvcs=false), and the Go version. Lines whose
// facts the binary does not carry are left out.
func versionText(bi *debug.BuildInfo, ok bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stalecheck %s\n", Version)
	if !ok || bi == nil {
		b.WriteString("build info: not recorded in this binary\n")
		return b.String()
	}
	mv := bi.Main.Version
	if mv == "" {
		mv = "(devel)"
	}
	path := bi.Main.Path
	if path == "" {
		path = "github.com/stalecheck/stalecheck"
	}
	fmt.Fprintf(&b, "module %s %s\n", path, mv)
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	if rev := set["vcs.revision"]; rev != "" {
		vcs := set["vcs"]
		if vcs == "" {
			vcs = "vcs"
		}
		line := vcs + " revision " + rev
		if t := set["vcs.time"]; t != "" {
			line += ", committed " + t
		}
		switch set["vcs.modified"] {
		case "true":
			line += ", modified (uncommitted changes)"
		case "false":
			line += ", unmodified"
		}
		b.WriteString(line + "\n")
	} else {
		b.WriteString("vcs: no revision recorded (built outside a checkout or with -buildvcs=false)\n")
	}
	if bi.GoVersion != "" {
		fmt.Fprintf(&b, "built with %s\n", bi.GoVersion)
	}
	return b.String()
}

// buildVersion is versionText of the running binary.
func buildVersion() string { return versionText(debug.ReadBuildInfo()) }
