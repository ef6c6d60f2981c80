package check

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
)

func setByCargo(name string) bool { return unit.SetForScripts(name) }

// untrackedEnvChanged: a live build-script run's tools looked up an environment variable (cc-rs logs
// each lookup: `CFLAGS = None`) that the script does not declare with rerun-if-env-changed, and the
// environment stalecheck runs in gives it another value: Cargo will not rerun the script for it, so the
// next build keeps what was compiled with the old value. One finding per run, naming every variable.
func untrackedEnvChanged(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range liveSteps(g, graph.ScriptRun) {
		if !madeArchive(s) {
			// A script that only probes (cc -E of a version header, pkg-config) links nothing it
			// compiled: the variable cannot have changed the binary.
			continue
		}
		declared := map[string]bool{}
		for _, e := range s.Records().DeclaredEnv {
			declared[e] = true
		}
		changed, ev := envChanges(g, s.Script().EnvReads, s.Script().FlagsSeen, declared, s.Reference.Path, "the build script's output logs", "; not declared with rerun-if-env-changed")
		if len(changed) == 0 {
			continue
		}
		var names []string
		for _, c := range changed {
			names = append(names, strings.SplitN(c, " ", 2)[0])
		}
		f := Finding{
			Rule: "untracked-env-changed", Severity: Error,
			Message: fmt.Sprintf("the build script of %s read %s; Cargo does not watch %s (no rerun-if-env-changed), so a build in this environment keeps what the script made with the old value",
				s.Package, strings.Join(changed, ", "), plural(len(names), "it", "them")),
			Subjects: []string{unitDir(s)},
			Roots:    rootPaths(s),
			Evidence: append(ev, Evidence{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS,
				Detail: "the build script's last successful run, whose output logs the lookups"}),
			Fix: fmt.Sprintf("add %s to the build script of %s, then: touch %s && %s", rerunEnvLines(names), s.Package, displayScript(s), rebuildCmd(s)),
		}
		f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
		out = append(out, f)
	}
	return out
}

// envChanges compares what a build-script run's tools read from the environment (reads: cc-rs's logged
// lookups; flags: strings built from a variable without a logged lookup) with the environment now
// (g.Env), skipping the variables in declared and those Cargo sets. It returns "NAME (then, now)" texts
// and their evidence, whose Path is record and whose Detail starts with logs (where the values were read)
// and ends with note.
func envChanges(g *graph.Graph, reads []graph.EnvRead, flags []graph.FlagsSeen, declared map[string]bool, record, logs, note string) (changed []string, ev []Evidence) {
	seen := map[string]bool{}
	for _, e := range reads {
		if seen[e.Name] || declared[e.Name] || setByCargo(e.Name) {
			continue
		}
		seen[e.Name] = true
		now, ok := g.Env[e.Name]
		if !ok || now.Same(e) {
			continue
		}
		changed = append(changed, fmt.Sprintf("%s (%s when it ran, %s now)", e.Name, envText(e), envText(now)))
		ev = append(ev, Evidence{Kind: "env", Path: record,
			Detail: fmt.Sprintf("%s: %s %s; this environment has %s%s", e.Name, logs, envText(e), envText(now), note)})
	}
	for _, f := range flags {
		if seen[f.Var] || anyDeclared(declared, f.Names) {
			continue
		}
		seen[f.Var] = true
		then, ok := flagsChanged(f, g.Env)
		if !ok {
			continue
		}
		now := "unset"
		for _, n := range f.Names {
			if e := g.Env[n]; e.Set {
				now = n + "=" + e.Text()
				break
			}
		}
		changed = append(changed, fmt.Sprintf("%s (%s when it ran, %s now)", f.Var, then, now))
		ev = append(ev, Evidence{Kind: "env", Path: record,
			Detail: fmt.Sprintf("%s: %s the cmake configure line with %s=%s (the cmake crate appends %s last and does not log the lookup); this environment has %s%s",
				f.Var, logs, f.Define, flagsText(f), strings.Join(f.Names, ", first set of "), now, note)})
	}
	return changed, ev
}

func envText(e graph.EnvRead) string { return e.Text() }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func rerunEnvLines(names []string) string {
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("println!(\"cargo:rerun-if-env-changed=%s\")", n))
	}
	return strings.Join(out, " and ")
}

func displayScript(s *graph.Step) string {
	if s.Script().ScriptSource != "" {
		return s.Script().ScriptSource
	}
	return "build.rs"
}

// declarations lists what a script run declared to its build system (graph.Declarer), nil when the
// system does not say.
func declarations(s *graph.Step) []string {
	if d, ok := s.Origin.(graph.Declarer); ok {
		return d.Declarations(s)
	}
	return nil
}

// madeArchive reports whether a run left a static library in its OUT_DIR (native code it compiled).
func madeArchive(s *graph.Step) bool {
	for _, o := range s.Outputs {
		if isStaticLib(filepath.Base(o.Path)) {
			return true
		}
	}
	return false
}

func anyDeclared(declared map[string]bool, names []string) bool {
	for _, n := range names {
		if declared[n] {
			return true
		}
	}
	return false
}

// flagsChanged tells whether a flags string a tool handed on (graph.FlagsSeen) was built from another
// value of its variable than the environment has now, and describes the value it was built from. The
// cmake crate hands CMake its own cflags, then cc-rs's default flags, then the variable's tokens, with
// -O* and -g dropped. Set now: the string must end with those tokens. Unset now: the string must end
// with a cc-rs default flag; tokens after the last one came from the variable when it ran. A string
// with no default flag in it cannot be told apart, and is not judged (ok false).
func flagsChanged(f graph.FlagsSeen, env map[string]graph.EnvRead) (then string, ok bool) {
	seen := strings.Fields(f.Value)
	var now []string
	for _, n := range f.Names {
		if e := env[n]; e.Set {
			for _, t := range strings.Fields(e.Value) {
				if !(strings.HasPrefix(t, "-O") || strings.HasPrefix(t, "/O") || t == "-g") {
					now = append(now, t)
				}
			}
			break
		}
	}
	if len(now) > 0 {
		if len(seen) >= len(now) && strings.Join(seen[len(seen)-len(now):], " ") == strings.Join(now, " ") {
			return "", false
		}
		if f.Digest != "" && len(seen) < len(now) {
			return "", false // the store kept less of the string than the variable has now: not judged
		}
		return fmt.Sprintf("%s=%s without them", f.Define, flagsText(f)), true
	}
	last := -1
	for i, t := range seen {
		if ccDefaultFlag(t) {
			last = i
		}
	}
	if last < 0 || last == len(seen)-1 {
		return "", false
	}
	return graph.Quoted(strings.Join(seen[last+1:], " ")) + " after cc-rs's default flags", true
}

// flagsText quotes a flags string for a message: cut past a few hundred bytes, with its length and
// digest (also when the store kept only its end).
func flagsText(f graph.FlagsSeen) string {
	if f.Digest != "" {
		return fmt.Sprintf("a %d-byte string (%s…) ending %s", f.Len, f.Digest[:len("blake3:")+16], graph.Quoted(f.Value[max(0, len(f.Value)-80):]))
	}
	return graph.Quoted(f.Value)
}

// ccDefaultFlag reports whether t is one of the flags cc-rs 1.0.73 adds by default for a target
// (`add_default_flags`: sections, PIC, word size, architecture, ABI, target), none of which a CFLAGS
// value is taken for.
func ccDefaultFlag(t string) bool {
	switch t {
	case "-ffunction-sections", "-fdata-sections", "-fPIC", "-fno-plt", "-m64", "-m32", "-mthumb",
		"-fno-omit-frame-pointer", "-mstackrealign", "-fembed-bitcode", "-fvisibility=hidden":
		return true
	}
	for _, p := range []string{"-march=", "-mcpu=", "-mtune=", "-mabi=", "-mfloat-abi=", "-mfpu=", "--target=", "-mmacosx-version-min=", "-miphoneos-version-min="} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}
