package unit

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// What a Unit answers of the adapter contract (internal/graph/origin.go): Cargo's words, what reruns a
// build script, how Cargo decides (by its fingerprints), the neutral records, the cargo command that
// builds a unit's configuration, what a build script sees differently between two configurations,
// which output of a dependency Cargo compares a unit against, and the script's own declarations.
var _ interface {
	graph.Worded
	graph.Watcher
	graph.Decider
	graph.RecordKeeper
	graph.Rebuilder
	graph.ConfigDiffer
	graph.DepOutputChooser
	graph.Declarer
} = (*Unit)(nil)

// Rebuild is the cargo build that builds s's configuration: its profile folder's flags and the
// features of the first root's unit that reaches s (the package the user builds), or s's own when no
// root reaches it.
// A root whose package a plain cargo build leaves out (default-members) is named with -p.
func (u *Unit) Rebuild(s *graph.Step) string {
	features := u.Features
	for _, r := range s.Roots {
		if r.Step != nil {
			features = r.Step.Records().Features
			break
		}
	}
	cmd := BuildCommand(s.ProfileDir, features)
	if u.BuildFlags != nil {
		cmd += *u.BuildFlags
	}
	var pkgs []string
	for _, r := range s.Roots {
		if ru, ok := r.Step.Origin.(*Unit); ok && ru.NotBuiltByDefault && !slices.Contains(pkgs, r.Step.Package) {
			pkgs = append(pkgs, r.Step.Package)
		}
	}
	for _, p := range pkgs {
		cmd += " -p " + p
	}
	return cmd + targetFlags(s)
}

// targetFlags selects the targets of s's roots that a plain cargo build does not build: examples
// (--example NAME), integration tests (--test NAME), unit-test binaries of a library or binary
// (--tests), benches (--bench NAME), with --bins beside them when a binary is among the roots too
// (naming a target builds only what is named). "" when every root is a library or binary.
func targetFlags(s *graph.Step) string {
	var flags []string
	add := func(f string) {
		if !slices.Contains(flags, f) {
			flags = append(flags, f)
		}
	}
	bins := false
	for _, r := range s.Roots {
		ru, ok := r.Step.Origin.(*Unit)
		if !ok {
			continue
		}
		t := ru.Target
		switch {
		case strings.HasPrefix(t, "bin-"):
			bins = true
		case strings.HasPrefix(t, "example-"):
			add("--example " + strings.TrimPrefix(t, "example-"))
		case strings.HasPrefix(t, "test-integration-test-"):
			add("--test " + strings.TrimPrefix(t, "test-integration-test-"))
		case strings.HasPrefix(t, "test-"):
			add("--tests")
		case strings.HasPrefix(t, "bench-"):
			add("--bench " + strings.TrimPrefix(t, "bench-"))
		}
	}
	if len(flags) == 0 {
		return ""
	}
	if slices.Contains(flags, "--tests") {
		// --tests builds every test target: the single ones are in it.
		flags = slices.DeleteFunc(flags, func(f string) bool { return strings.HasPrefix(f, "--test ") })
	}
	if bins {
		flags = append(flags, "--bins")
	}
	sort.Strings(flags)
	return " " + strings.Join(flags, " ")
}

// ForceRebuild makes Cargo see input: a newer mtime on a file it watches, then the build.
func (u *Unit) ForceRebuild(s *graph.Step, input string) string {
	return "touch " + input + " && " + u.Rebuild(s)
}

// BuildCommand is the cargo build of profile folder prof ("release", "x86_64-unknown-linux-gnu/debug")
// with the features named (Cargo's "default" feature is on unless switched off: it is never named).
func BuildCommand(prof string, features []string) string {
	cmd := "cargo build"
	if f := profileFlags(prof); f != "" {
		cmd += " " + f
	}
	var named []string
	for _, f := range features {
		if f != "default" {
			named = append(named, f)
		}
	}
	if len(named) > 0 {
		cmd += " --features " + strings.Join(named, ",")
	}
	return cmd
}

// profileFlags are the cargo build flags that select a profile folder.
func profileFlags(prof string) string {
	var flags []string
	p := prof
	if i := strings.IndexByte(prof, '/'); i >= 0 {
		flags = append(flags, "--target "+prof[:i])
		p = prof[i+1:]
	}
	switch p {
	case "debug":
	case "release":
		flags = append(flags, "--release")
	default:
		flags = append(flags, "--profile "+p)
	}
	return strings.Join(flags, " ")
}

// ConfigDiff names the settings two units differ in, as the environment variables Cargo hands a build
// script for them: CARGO_FEATURE_<NAME> per feature on one side only, PROFILE/OPT_LEVEL/DEBUG for the
// profile, CARGO_ENCODED_RUSTFLAGS for the flags, TARGET for the compile kind.
func (u *Unit) ConfigDiff(a, b *graph.Step) []string {
	var out []string
	ub := Of(b)
	for _, f := range symmetricDiff(u.Features, ub.Features) {
		out = append(out, "CARGO_FEATURE_"+strings.ToUpper(strings.ReplaceAll(f, "-", "_")))
	}
	if a.ProfileDir != b.ProfileDir {
		out = append(out, "PROFILE", "OPT_LEVEL", "DEBUG")
	}
	if strings.Join(u.Rustflags, " ") != strings.Join(ub.Rustflags, " ") {
		out = append(out, "CARGO_ENCODED_RUSTFLAGS")
	}
	if u.CompileKind != ub.CompileKind {
		out = append(out, "TARGET")
	}
	return out
}

func symmetricDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// ComparedOutput: when s builds only an rlib and d is a library built only as an rlib, the edge needs
// only d's metadata (DepFingerprint.only_requires_rmeta) and Cargo looks at d's .rmeta alone
// (Fingerprint::check_filesystem, docs/cargo-target-dir.md §11.4 item 3). Pipelining starts s as soon
// as that .rmeta is written, so d's .rlib is routinely newer than s on a clean build.
func (u *Unit) ComparedOutput(s, d *graph.Step) (path string, ns int64, why string, ok bool) {
	if !rlibOnly(s) || !rlibOnly(d) {
		return "", 0, "", false
	}
	for _, o := range d.Outputs {
		if strings.HasSuffix(o.Path, ".rmeta") {
			return o.Path, o.MTimeNS, "the dependency's .rmeta: " + s.Name + " builds an rlib, which needs only its dependencies' metadata, so Cargo compares this file (pipelining)", true
		}
	}
	return "", 0, "", false
}

// rlibOnly reports whether a rustc unit builds a library as an rlib only (fingerprint `lib-<name>`,
// every output a .rlib or .rmeta): Cargo's `!requires_upstream_objects()` in Build mode. Proc-macros,
// dylibs, cdylibs, binaries and tests need their dependencies' objects.
func rlibOnly(s *graph.Step) bool {
	if s.Kind != graph.Compile || !strings.HasPrefix(Of(s).Target, "lib-") || len(s.Outputs) == 0 {
		return false
	}
	rlib := false
	for _, o := range s.Outputs {
		switch {
		case strings.HasSuffix(o.Path, ".rlib"):
			rlib = true
		case strings.HasSuffix(o.Path, ".rmeta"):
		default:
			return false
		}
	}
	return rlib
}

// Declarations lists what a build-script run declared to Cargo, as the script printed it:
// "rerun-if-changed=<path relative to the package root>" then "rerun-if-env-changed=<VAR>".
func (u *Unit) Declarations(s *graph.Step) []string {
	var out []string
	for _, p := range u.DeclaredPaths {
		rel, err := filepath.Rel(s.PackageRoot, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = p
		}
		out = append(out, "rerun-if-changed="+rel)
	}
	for _, e := range u.DeclaredEnv {
		out = append(out, "rerun-if-env-changed="+e)
	}
	return out
}
