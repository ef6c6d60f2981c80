package check_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/testutil/golden"
)

// Golden files for the rules over small in-memory graphs: each case is a build as an adapter would read
// it (steps with their Origin's contract, inputs with their clues, a reference, roots), judged by
// check.Run and written as text and JSON. They pin what each rule says and why in seconds, beside the
// real-build scenario tests; `go test ./internal/check -run TestRuleGolden -update` rewrites them.

// mtimeOrigin is the Origin of a system that redoes a step when a prerequisite is newer than its target
// (graph.ByMtime, the default), with Make's words and commands.
type mtimeOrigin struct{ target string }

func (mtimeOrigin) Words() graph.Words {
	return graph.Words{Tool: "Make", Watched: "make watches it (a prerequisite of the rule)", NotWatched: "no rule of the makefile names it",
		Reference: "the target whose mtime make compares prerequisites against"}
}
func (o mtimeOrigin) Rebuild(*graph.Step) string { return "make " + o.target }
func (o mtimeOrigin) ForceRebuild(s *graph.Step, input string) string {
	return "add " + input + " to the prerequisites of " + o.target + " (or generate depfiles), then: make -B " + o.target
}

// depfileOrigin is a Ninja-like Origin whose compile rule writes no depfile (graph.DepfileGapper).
type depfileOrigin struct{ mtimeOrigin }

func (depfileOrigin) Words() graph.Words {
	return graph.Words{Tool: "Ninja", Watched: "Ninja watches it (an input of the edge)", NotWatched: "the Ninja edge has no depfile naming it",
		Reference: "the edge's first output, whose mtime Ninja compares inputs against"}
}
func (depfileOrigin) DepfileGap() (rule, command, depfile string, onDisk bool, why string) {
	return "cc (build.ninja:3)", "cc -c main.c -o main.o", "", false, "the rule sets no depfile"
}
func (depfileOrigin) DepfileFix() string {
	return "add depfile = $out.d and -MD -MF $out.d to rule cc in build.ninja, then: ninja -t clean && ninja"
}

// contentOrigin is the Origin of a system that compares content (graph.ByContent), with Go's words.
type contentOrigin struct{ mtimeOrigin }

func (contentOrigin) ComparesContent() bool { return true }
func (contentOrigin) Words() graph.Words {
	return graph.Words{Tool: "Go", Watched: "Go's build cache hashes it", NotWatched: "Go's build cache does not hash it",
		Reference: "the program go build wrote"}
}

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC).UnixNano()

func file(p string, at int64) graph.FileInfo {
	return graph.FileInfo{Path: p, Size: 100, MTimeNS: at, Exists: true}
}

func input(p string, at int64, watched bool, how graph.How, detail string) *graph.Input {
	return &graph.Input{File: file(p, at), How: []graph.How{how}, Detail: []string{detail}, Watched: watched}
}

// program is a two-step build in /w: main.o from main.c (and the headers it includes), app linked from
// main.o and libfoo.a; both steps of origin o, app the root.
func program(o any, system string, edit func(g *graph.Graph, obj, link *graph.Step)) *graph.Graph {
	obj := &graph.Step{System: system, ID: "obj", Kind: graph.Compile, Name: "main.o", Label: "main.o", Reference: file("/w/main.o", t0),
		Outputs: []graph.FileInfo{file("/w/main.o", t0)}, Origin: o, PathPackage: true,
		Inputs: []*graph.Input{input("/w/main.c", t0-2e9, true, graph.Declared, "prerequisite of main.o")}}
	link := &graph.Step{System: system, ID: "app", Kind: graph.Compile, Name: "app", Label: "app", Reference: file("/w/app", t0+1e9),
		Outputs: []graph.FileInfo{file("/w/app", t0+1e9)}, Origin: o, PathPackage: true,
		Inputs: []*graph.Input{input("/w/main.o", t0, true, graph.Declared, "prerequisite of app"),
			input("/w/libfoo.a", t0-5e9, true, graph.Declared, "prerequisite of app")},
		Deps: []*graph.Step{obj}}
	obj.Dependents = []*graph.Step{link}
	root := &graph.Root{File: file("/w/app", t0+1e9), Kind: "bin", Step: link, TiedBy: "name"}
	obj.Roots, link.Roots = []*graph.Root{root}, []*graph.Root{root}
	g := &graph.Graph{System: system, Workspace: "/w", TargetDir: "/w", BuildDir: "/w", Steps: []*graph.Step{obj, link}, Roots: []*graph.Root{root}}
	if edit != nil {
		edit(g, obj, link)
	}
	return g
}

// generated is program with a generator step before main.o: table.h from gen.sh (its prerequisite) by
// `sh gen.sh table.in table.h` at t0-1s, main.o built from table.h; table.in is named only on the
// command line (graph.CommandArg), given to edit with the generator step, at t0-2s unless edit moves it.
func generated(o any, edit func(gen *graph.Step, in *graph.Input)) *graph.Graph {
	return program(o, "make", func(g *graph.Graph, obj, link *graph.Step) {
		in := input("/w/table.in", t0-2e9, false, graph.CommandArg, "named by the command: sh gen.sh table.in table.h")
		gen := &graph.Step{System: "make", ID: "gen", Kind: graph.Compile, Name: "table.h", Label: "table.h", Reference: file("/w/table.h", t0-1e9),
			Outputs: []graph.FileInfo{file("/w/table.h", t0-1e9)}, Origin: o, PathPackage: true,
			Command: "sh gen.sh table.in table.h", CommandData: &graph.CommandRecords{CommandDir: "/w"},
			Inputs: []*graph.Input{input("/w/gen.sh", t0-3e9, true, graph.Declared, "prerequisite of table.h"), in},
			Roots:  obj.Roots, Dependents: []*graph.Step{obj}}
		obj.Inputs = append(obj.Inputs, input("/w/table.h", t0-1e9, true, graph.Declared, "prerequisite of main.o"))
		obj.Deps = append(obj.Deps, gen)
		g.Steps = append([]*graph.Step{gen}, g.Steps...)
		edit(gen, in)
	})
}

// cargoBuild is a Cargo workspace /ws, target /ws/target: ksys's build script (run ksys-1111…)
// compiles native/k.c into libk.a in its OUT_DIR, declaring rerun-if-changed=build.rs; app (bin) links
// ksys. Origins are unit.Unit, as internal/cargo reads them.
func cargoBuild(edit func(g *graph.Graph, run, bin *graph.Step)) *graph.Graph {
	const runDir = "/ws/target/release/build/ksys-1111111111111111"
	run := &graph.Step{System: unit.System, ID: "run", Kind: graph.ScriptRun, Package: "ksys", Name: "ksys-1111111111111111",
		Label: "run-build-script-build-script-build", ProfileDir: "release", PathPackage: true, PackageRoot: "/ws/ksys",
		RecordDir: "/ws/target/release/.fingerprint/ksys-1111111111111111",
		ScriptData: &graph.ScriptDetails{RunDir: runDir, OutDir: runDir + "/out", ScriptSource: "/ws/ksys/build.rs",
			Links: []graph.Link{{Name: "k", Kind: "static", Path: runDir + "/out/libk.a"}}},
		Reference: file(runDir+"/output", t0), Outputs: []graph.FileInfo{file(runDir+"/out/libk.a", t0+1e8)},
		Inputs: []*graph.Input{input("/ws/ksys/build.rs", t0-9e9, true, graph.Declared, "rerun-if-changed=build.rs")},
		Origin: &unit.Unit{Hash: "1111111111111111", Target: "run-build-script-build-script-build", FingerprintDir: "/ws/target/release/.fingerprint/ksys-1111111111111111",
			Records: graph.Records{DeclaredPaths: []string{"/ws/ksys/build.rs"}}}}
	bin := &graph.Step{System: unit.System, ID: "bin", Kind: graph.Compile, Package: "app", Name: "app-2222222222222222", Label: "bin-app",
		ProfileDir: "release", PathPackage: true, PackageRoot: "/ws/app", RecordDir: "/ws/target/release/.fingerprint/app-2222222222222222",
		Reference: file("/ws/target/release/deps/app-2222222222222222.d", t0+2e9), Outputs: []graph.FileInfo{file("/ws/target/release/app", t0+2e9)},
		Inputs: []*graph.Input{input("/ws/app/src/main.rs", t0-9e9, true, graph.Depfile, "dep-info")},
		Deps:   []*graph.Step{run},
		Origin: &unit.Unit{Hash: "2222222222222222", Target: "bin-app", FingerprintDir: "/ws/target/release/.fingerprint/app-2222222222222222"}}
	run.Dependents = []*graph.Step{bin}
	root := &graph.Root{File: file("/ws/target/release/app", t0+2e9), Kind: "bin", Step: bin, TiedBy: "dep-info"}
	run.Roots, bin.Roots = []*graph.Root{root}, []*graph.Root{root}
	g := &graph.Graph{System: unit.System, Workspace: "/ws", TargetDir: "/ws/target", BuildDir: "/ws/target", ProfileDirs: []string{"release"},
		Steps: []*graph.Step{run, bin}, Roots: []*graph.Root{root}}
	if edit != nil {
		edit(g, run, bin)
	}
	return g
}

type ruleCase struct {
	name  string
	g     *graph.Graph
	rules []string // the rules the case must draw (none: a clean build)
}

// TestEveryRuleHasAGoldenCase fails when a rule draws in no golden case and is not listed as to do.
func TestEveryRuleHasAGoldenCase(t *testing.T) {
	drawn := map[string]bool{}
	for _, c := range ruleCases() {
		for _, r := range c.rules {
			drawn[r] = true
		}
	}
	for _, r := range check.Rules {
		if !drawn[r.Name] {
			t.Errorf("rule %s has no golden case over an in-memory graph (golden_test.go)", r.Name)
		}
	}
}

func ruleCases() []ruleCase {
	make_ := mtimeOrigin{target: "app"}
	return []ruleCase{
		{"clean-mtime", program(make_, "make", nil), nil},
		{"untracked-input-changed-mtime", program(make_, "make", func(_ *graph.Graph, obj, _ *graph.Step) {
			// A header the include scan reaches, not a prerequisite, edited after main.o was built.
			obj.Inputs = append(obj.Inputs, input("/w/util.h", t0+5e9, false, graph.IncludeScan, "#include \"util.h\" in main.c"))
		}), []string{"untracked-input-changed"}},
		{"pending-rebuild-mtime", program(make_, "make", func(_ *graph.Graph, obj, _ *graph.Step) {
			obj.Inputs[0].File.MTimeNS = t0 + 5e9 // main.c edited after main.o: make redoes it
		}), []string{"pending-rebuild"}},
		{"pending-rebuild-missing-input", program(make_, "make", func(_ *graph.Graph, obj, _ *graph.Step) {
			obj.Inputs[0].File = graph.FileInfo{Path: "/w/main.c"}
		}), []string{"pending-rebuild"}},
		{"binary-older-than-input-mtime", program(make_, "make", func(_ *graph.Graph, obj, link *graph.Step) {
			// main.o rebuilt after app was linked (an interrupted build: the compile ran, the link did not).
			obj.Reference.MTimeNS, obj.Outputs[0].MTimeNS, link.Inputs[0].File.MTimeNS = t0+5e9, t0+5e9, t0+5e9
		}), []string{"binary-older-than-input"}},
		{"archive-member-without-rule", program(make_, "make", func(g *graph.Graph, obj, link *graph.Step) {
			// libfoo.a, made by a rule from foo.o, still holds old.o: its source was removed from the rule.
			lib := &graph.Step{System: "make", ID: "lib", Kind: graph.Compile, Name: "libfoo.a", Label: "libfoo.a", Reference: file("/w/libfoo.a", t0-5e9),
				Outputs: []graph.FileInfo{file("/w/libfoo.a", t0-5e9)}, Origin: mtimeOrigin{target: "libfoo.a"}, PathPackage: true, Roots: link.Roots,
				Inputs: []*graph.Input{input("/w/foo.o", t0-6e9, true, graph.Declared, "prerequisite of libfoo.a"),
					{File: graph.FileInfo{Path: "/w/old.o"}, How: []graph.How{graph.ArchiveMember}, Detail: []string{"old.o"}}}}
			link.Deps = append(link.Deps, lib)
			g.Steps = append(g.Steps, lib)
			lib.Dependents = []*graph.Step{link}
		}), []string{"archive-member-without-rule"}},
		{"path-lookup-changed", program(make_, "make", func(_ *graph.Graph, obj, _ *graph.Step) {
			// The traced compile found cc in /usr/bin; a cc now earlier on PATH would be run instead.
			obj.OwnCmd().Lookups = []graph.Lookup{{Kind: graph.LookupPATH, Name: "cc", Search: "/opt/tools/bin:/usr/bin", Then: "/usr/bin/cc", Tried: 2,
				Now: "/opt/tools/bin/cc", TraceFile: "/w/.stalecheck/trace", PID: 42, Exe: "/usr/bin/make", TimeNS: t0 - 3e9}}
		}), []string{"path-lookup-changed"}},
		{"clean-cargo", cargoBuild(nil), nil},
		{"untracked-input-changed-cargo", cargoBuild(func(_ *graph.Graph, run, _ *graph.Step) {
			// native/k.c, compiled by the script (its logged command line names it), edited after the run.
			run.Inputs = append(run.Inputs, input("/ws/ksys/native/k.c", t0+5e9, false, graph.CommandLine, "running: cc -c native/k.c"))
		}), []string{"untracked-input-changed"}},
		{"pending-rebuild-cargo", cargoBuild(func(_ *graph.Graph, run, _ *graph.Step) {
			run.Inputs[0].File.MTimeNS = t0 + 5e9 // build.rs, declared, edited after the run: Cargo reruns it
		}), []string{"pending-rebuild"}},
		{"pending-rebuild-cargo-dependency-rebuilt", cargoBuild(func(g *graph.Graph, _, bin *graph.Step) {
			// klib's src/lib.rs edited and klib rebuilt (cargo build -p klib), app not: Cargo rebuilds app
			// for its dependency, and what moved is lib.rs, not klib's records.
			lib := &graph.Step{System: unit.System, ID: "lib", Kind: graph.Compile, Package: "klib", Name: "klib-3333333333333333", Label: "lib-klib",
				ProfileDir: "release", PathPackage: true, PackageRoot: "/ws/klib", RecordDir: "/ws/target/release/.fingerprint/klib-3333333333333333",
				Reference:  file("/ws/target/release/deps/klib-3333333333333333.d", t0+6e9),
				Outputs:    []graph.FileInfo{file("/ws/target/release/deps/libklib-3333333333333333.rlib", t0+6e9)},
				Inputs:     []*graph.Input{input("/ws/klib/src/lib.rs", t0+5e9, true, graph.Depfile, "dep-info")},
				Dependents: []*graph.Step{bin}, Roots: bin.Roots,
				Origin: &unit.Unit{Hash: "3333333333333333", Target: "lib-klib", FingerprintDir: "/ws/target/release/.fingerprint/klib-3333333333333333"}}
			bin.Deps = append(bin.Deps, lib)
			g.Steps = append(g.Steps, lib)
		}), []string{"pending-rebuild", "binary-older-than-input"}},
		{"last-build-failed", cargoBuild(func(_ *graph.Graph, run, _ *graph.Step) {
			run.Failed = "the build script exited with status 1 (target/release/build/ksys-1111111111111111/stderr: cc: error: native/k.c: no such file)"
		}), []string{"last-build-failed"}},
		{"unreadable-record", cargoBuild(func(g *graph.Graph, _, _ *graph.Step) {
			g.Problems = []graph.Problem{{Path: "/ws/target/release/.fingerprint/app-2222222222222222/bin-app.json", Err: "invalid character 'x' at offset 0"}}
		}), []string{"unreadable-record"}},
		{"orphaned-build-dir", cargoBuild(func(g *graph.Graph, _, _ *graph.Step) {
			// A run folder of another configuration (features ["fast"]) that no root reaches any more.
			old := &graph.Step{System: unit.System, ID: "old", Kind: graph.ScriptRun, Package: "ksys", Name: "ksys-3333333333333333",
				Label: "run-build-script-build-script-build", ProfileDir: "release", ScriptData: &graph.ScriptDetails{RunDir: "/ws/target/release/build/ksys-3333333333333333"},
				Config: graph.Config{{Key: "features", Value: `["fast"]`}}, Reference: file("/ws/target/release/build/ksys-3333333333333333/output", t0-3e10),
				Origin: &unit.Unit{Hash: "3333333333333333", Target: "run-build-script-build-script-build", Records: graph.Records{Features: []string{"fast"}}}}
			g.Steps = append(g.Steps, old)
			g.BuildDirs = []*graph.BuildDir{{Path: old.Script().RunDir, ProfileDir: "release", Package: "ksys", Hash: "3333333333333333", Bytes: 3 << 20, Steps: []*graph.Step{old}}}
		}), []string{"orphaned-build-dir"}},
		{"untracked-env-changed", cargoBuild(func(g *graph.Graph, run, _ *graph.Step) {
			// The script's cc read CFLAGS=-O2; the shell now has -O3, and the script declares no rerun-if-env-changed.
			run.OwnScript().EnvReads = []graph.EnvRead{{Name: "CFLAGS", Value: "-O2", Set: true}}
			g.Env = map[string]graph.EnvRead{"CFLAGS": {Name: "CFLAGS", Value: "-O3", Set: true}}
		}), []string{"untracked-env-changed"}},
		{"duplicate-native-artifact", cargoBuild(func(g *graph.Graph, _, _ *graph.Step) {
			// The run of another configuration left its own libk.a: two copies, the linked one known by its run.
			const dir = "/ws/target/release/build/ksys-4444444444444444"
			old := &graph.Step{System: unit.System, ID: "old", Kind: graph.ScriptRun, Package: "ksys", Name: "ksys-4444444444444444",
				Label: "run-build-script-build-script-build", ProfileDir: "release", ScriptData: &graph.ScriptDetails{RunDir: dir, OutDir: dir + "/out"},
				Config: graph.Config{{Key: "features", Value: `["fast"]`}}, Reference: file(dir+"/output", t0-3e10),
				Outputs: []graph.FileInfo{file(dir+"/out/libk.a", t0-3e10)},
				Origin:  &unit.Unit{Hash: "4444444444444444", Target: "run-build-script-build-script-build", Records: graph.Records{Features: []string{"fast"}}}}
			g.Steps = append(g.Steps, old)
		}), []string{"duplicate-native-artifact"}},
		{"missing-depfile", program(make_, "ninja", func(_ *graph.Graph, obj, _ *graph.Step) {
			obj.Origin = depfileOrigin{make_}
			obj.Inputs = append(obj.Inputs, input("/w/util.h", t0-4e9, false, graph.IncludeScan, "#include \"util.h\" in main.c"))
		}), []string{"missing-depfile"}},
		{"untracked-input-changed-command-arg", generated(make_, func(gen *graph.Step, in *graph.Input) {
			// table.in, named only on the generator's command line, edited after table.h was made: its
			// content differs from the baseline of the generator's run.
			in.File.MTimeNS = t0 + 5e9
			in.Content = &graph.InputContent{Verdict: graph.ContentDiffers, Digest: "blake3:" + strings.Repeat("d", 64),
				Baseline: "blake3:" + strings.Repeat("c", 64), BaselineNS: t0 + 3e9}
		}), []string{"untracked-input-changed"}},
		{"command-arg-no-baseline", generated(make_, func(gen *graph.Step, in *graph.Input) {
			in.File.MTimeNS = t0 + 5e9 // after every step, and no earlier check: read or written, cannot tell
		}), []string{"untracked-input-changed"}},
		{"clean-command-arg-written", generated(make_, func(gen *graph.Step, in *graph.Input) {
			// Newer than table.h but older than main.o, built from table.h: what the generator wrote.
			in.File.MTimeNS = t0 - 5e8
		}), nil},
		{"changed-with-older-mtime", program(make_, "make", func(_ *graph.Graph, obj, _ *graph.Step) {
			// main.c restored from a cache with cp -p: other content, its old mtime, a new ctime.
			obj.Inputs[0].Content = &graph.InputContent{Verdict: graph.ContentDiffers, Digest: "blake3:" + strings.Repeat("b", 64),
				Baseline: "blake3:" + strings.Repeat("a", 64), BaselineNS: t0 + 3e8, CTimeNS: t0 + 7e9}
		}), []string{"changed-with-older-mtime"}},
		{"out-dir-leftover", cargoBuild(func(_ *graph.Graph, run, _ *graph.Step) {
			// The last run did not write libk.a (a script that skips a build it thinks is done): it predates the run.
			run.Outputs[0].MTimeNS = t0 - 6e10
		}), []string{"out-dir-leftover"}},
		{"rerun-scan-disabled", cargoBuild(func(_ *graph.Graph, run, _ *graph.Step) {
			// rerun-if-changed=build.rs turned off Cargo's package scan; native/k.c lies in the package unwatched.
			run.Origin.(*unit.Unit).DeclarationsKnown = true
			run.Inputs = append(run.Inputs, input("/ws/ksys/native/k.c", t0-9e9, false, graph.PackageFolder, "a native source in the package folder"))
		}), []string{"rerun-scan-disabled"}},
		{"output-outside-out-dir", cargoBuild(func(_ *graph.Graph, run, _ *graph.Step) {
			// The script builds libk.a with make inside the package and prints that folder as a link-search folder.
			run.OwnScript().LinkSearch = []string{"/ws/ksys/native/build"}
			run.OwnScript().Links = []graph.Link{{Name: "k", Kind: "static", Path: "/ws/ksys/native/build/libk.a"}}
			run.Outputs = nil
			run.OwnScript().WroteOutside = []graph.FileInfo{file("/ws/ksys/native/build/libk.a", t0+1e8)}
		}), []string{"output-outside-out-dir"}},
		{"linked-library-shadowed", cargoBuild(func(g *graph.Graph, run, _ *graph.Step) {
			// An earlier configuration left libk.so in OUT_DIR; the last run wrote libk.a; a link name
			// without a kind lets ld take the shared object first.
			const out = "/ws/target/release/build/ksys-1111111111111111/out"
			run.OwnScript().LinkSearch = []string{out}
			run.OwnScript().Links = []graph.Link{{Name: "k", Path: out + "/libk.a"}}
			old := file(out+"/libk.so", t0-6e10)
			run.Outputs = append(run.Outputs, old)
			g.LibFiles = map[string]graph.FileInfo{out + "/libk.a": run.Outputs[0], out + "/libk.so": old}
		}), []string{"linked-library-shadowed"}},
		{"link-search-shadowing", cargoBuild(func(g *graph.Graph, run, bin *graph.Step) {
			// Another -sys crate's run also writes a libk.a into its OUT_DIR: -lk finds the first folder's.
			const dir = "/ws/target/release/build/zsys-5555555555555555"
			run.OwnScript().LinkSearch = []string{run.Script().OutDir}
			z := &graph.Step{System: unit.System, ID: "z", Kind: graph.ScriptRun, Package: "zsys", Name: "zsys-5555555555555555",
				Label: "run-build-script-build-script-build", ProfileDir: "release", PathPackage: true,
				ScriptData: &graph.ScriptDetails{RunDir: dir, OutDir: dir + "/out", ScriptSource: "/ws/zsys/build.rs",
					LinkSearch: []string{dir + "/out"}, Links: []graph.Link{{Name: "k", Kind: "static", Path: dir + "/out/libk.a"}}},
				Reference: file(dir+"/output", t0+5e8), Outputs: []graph.FileInfo{file(dir+"/out/libk.a", t0+6e8)},
				Origin: &unit.Unit{Hash: "5555555555555555", Target: "run-build-script-build-script-build"}, Roots: bin.Roots, Dependents: []*graph.Step{bin}}
			bin.Deps = append(bin.Deps, z)
			g.Steps = append(g.Steps, z)
		}), []string{"duplicate-native-artifact", "link-search-shadowing"}},
		{"unkeyed-output", cargoBuild(func(g *graph.Graph, run, _ *graph.Step) {
			// Both configurations of ksys's script write target/include/k_config.h (cargo:include=target/include):
			// the release run with features ["fast"] wrote it last, so the live run's consumers read its version.
			const inc = "/ws/target/include"
			const dir = "/ws/target/release/build/ksys-6666666666666666"
			run.OwnScript().PointsAt = []string{inc}
			fast := &graph.Step{System: unit.System, ID: "fast", Kind: graph.ScriptRun, Package: "ksys", Name: "ksys-6666666666666666",
				Label: "run-build-script-build-script-build", ProfileDir: "release", PathPackage: true,
				ScriptData: &graph.ScriptDetails{RunDir: dir, OutDir: dir + "/out", ScriptSource: "/ws/ksys/build.rs",
					PointsAt: []string{inc}, WroteOutside: []graph.FileInfo{file(inc+"/k_config.h", t0+3e9+1e8)}},
				Config: graph.Config{{Key: "features", Value: `["fast"]`}}, Reference: file(dir+"/output", t0+3e9),
				Origin: &unit.Unit{Hash: "6666666666666666", Target: "run-build-script-build-script-build", Records: graph.Records{Features: []string{"fast"}}}}
			g.Steps = append(g.Steps, fast)
		}), []string{"unkeyed-output"}},
		{"duplicate-archive-member", cargoBuild(func(g *graph.Graph, run, _ *graph.Step) {
			// The script appends with `ar q`: libk.a holds two k.o; the symbol table names the first (the old
			// code) for k_run, and the binary's bytes hold that copy, while k.o on disk is the second.
			lib := run.Outputs[0]
			g.DuplicateMembers = []graph.DuplicateMember{{Archive: lib, Step: run, Name: "k.o", Taken: 0, Current: 1,
				Object: file(run.Script().OutDir+"/k.o", t0+5e7),
				Copies: []graph.MemberCopy{
					{Index: 0, Offset: 68, Size: 1200, Symbols: []string{"k_run"}, Digest: "blake3:" + strings.Repeat("1", 64)},
					{Index: 1, Offset: 1336, Size: 1240, Symbols: []string{"k_run"}, Digest: "blake3:" + strings.Repeat("2", 64)}},
				Holds: []graph.MemberHolding{{Root: g.Roots[0], Copy: 0, Detail: "copy 1: holds (code of k_run equal); copy 2: differs"}}}}
		}), []string{"duplicate-archive-member"}},
		{"built-in-other-tree", cargoBuild(func(g *graph.Graph, run, _ *graph.Step) {
			// ksys's live run was made in the worktree /ws2 that shares /ws/target; k.c differs between the trees.
			u := run.Origin.(*unit.Unit)
			u.OwnOtherTree().BuiltInTree, u.OwnOtherTree().BuiltInTreeEvidence = "/ws2", "/ws2/ksys/native/k.c"
			u.OwnOtherTree().OtherTreeDiffers = []string{"/ws/ksys/native/k.c"}
		}), []string{"built-in-other-tree"}},
		{"other-config-library", cargoBuild(func(g *graph.Graph, run, _ *graph.Step) {
			// ksys's script runs make in ksys/csrc and links csrc/libkc.a; the run for features ["fast"] wrote
			// it, and this configuration's run found nothing to redo, though its source reads CARGO_FEATURE_FAST.
			const lib = "/ws/ksys/csrc/libkc.a"
			const dir = "/ws/target/release/build/ksys-8888888888888888"
			run.OwnScript().Links = append(run.Script().Links, graph.Link{Name: "kc", Kind: "static", Path: lib})
			run.Origin.(*unit.Unit).SourceNames = []string{"CARGO_FEATURE_FAST"}
			fast := &graph.Step{System: unit.System, ID: "fast", Kind: graph.ScriptRun, Package: "ksys", Name: "ksys-8888888888888888",
				Label: "run-build-script-build-script-build", ProfileDir: "release", PathPackage: true, PackageRoot: "/ws/ksys",
				ScriptData: &graph.ScriptDetails{RunDir: dir, OutDir: dir + "/out", ScriptSource: "/ws/ksys/build.rs", WroteOutside: []graph.FileInfo{file(lib, t0-2e9+1e8)}},
				Config:     graph.Config{{Key: "features", Value: `["fast"]`}},
				Reference:  file(dir+"/output", t0-2e9),
				Origin:     &unit.Unit{Hash: "8888888888888888", Target: "run-build-script-build-script-build", Records: graph.Records{Features: []string{"fast"}, RunEndNS: t0 - 2e9 + 5e8}}}
			g.Steps = append(g.Steps, fast)
		}), []string{"other-config-library"}},
		{"edited-copy-not-built", cargoBuild(func(g *graph.Graph, run, _ *graph.Step) {
			// ksys comes from a registry source; a file there was edited after the run: Cargo never looks at it.
			const root = "/home/u/.cargo/registry/src/index-0123456789abcdef/ksys-1.0.0"
			run.PathPackage, run.PackageRoot = false, root
			u := run.Origin.(*unit.Unit)
			u.Version, u.Source, u.SourceID = "1.0.0", "registry", "registry+file:///srv/index"
			g.Origins = map[string]any{unit.System: &unit.Tree{Copies: []*graph.PackageCopy{{Name: "ksys", Version: "1.0.0", Root: root,
				Source: "registry", SourceID: "registry+file:///srv/index", Used: true, Since: t0,
				Edited: []graph.FileInfo{file(root+"/native/k.c", t0+5e9)}, EditedCount: 1}}}}
		}), []string{"edited-copy-not-built"}},
		{"linked-copy-not-newest", cargoBuild(func(g *graph.Graph, run, _ *graph.Step) {
			// A later run of ksys (features ["timing"]) made a newer libk.a; the binary's bytes hold the older copy.
			const dir = "/ws/target/release/build/ksys-7777777777777777"
			newer := &graph.Step{System: unit.System, ID: "newer", Kind: graph.ScriptRun, Package: "ksys", Name: "ksys-7777777777777777",
				Label: "run-build-script-build-script-build", ProfileDir: "release", PathPackage: true,
				ScriptData: &graph.ScriptDetails{RunDir: dir, OutDir: dir + "/out", ScriptSource: "/ws/ksys/build.rs"}, Config: graph.Config{{Key: "features", Value: `["timing"]`}}, Reference: file(dir+"/output", t0+4e9),
				Outputs: []graph.FileInfo{file(dir+"/out/libk.a", t0+4e9+1e8)},
				Origin:  &unit.Unit{Hash: "7777777777777777", Target: "run-build-script-build-script-build", Records: graph.Records{Features: []string{"timing"}}}}
			g.Steps = append(g.Steps, newer)
			g.Content = []graph.ContentMatch{{Root: g.Roots[0], Library: "k", Copies: []string{run.Outputs[0].Path, newer.Outputs[0].Path},
				Matched: []string{run.Outputs[0].Path}, Outcome: "matched", Confidence: "certain", Evidence: []string{"string \"k 1.0\" (only in this copy)"}}}
		}), []string{"duplicate-native-artifact", "linked-copy-not-newest"}},
		{"linked-copy-not-rewritten", cargoBuild(func(g *graph.Graph, run, _ *graph.Step) {
			// ksys's script builds libk.a with CMake in out/build and installs it into out/lib, which the
			// link takes; the last run rebuilt out/build/libk.a from an edited k.c, and the install kept the
			// old out/lib/libk.a (mtimes within a second): the binary's bytes hold the old copy.
			dir := run.Script().OutDir
			run.Script().Links[0].Path = dir + "/lib/libk.a"
			run.Outputs = []graph.FileInfo{file(dir+"/build/libk.a", t0+1e8), file(dir+"/lib/libk.a", t0-5e8)}
			run.OwnScript().Written = map[string]string{dir + "/lib/libk.a": "-- Up-to-date: " + dir + "/lib/libk.a (output)"}
			run.Inputs = append(run.Inputs,
				input("/ws/ksys/native/k.c", t0-2e8, true, graph.Depfile, dir+"/build/CMakeFiles/k.dir/native/k.c.o.d"),
				input("/usr/include/stdio.h", t0-9e10, true, graph.Depfile, dir+"/build/CMakeFiles/k.dir/native/k.c.o.d"))
			g.Content = []graph.ContentMatch{{Root: g.Roots[0], Library: "k", Copies: []string{dir + "/build/libk.a", dir + "/lib/libk.a"},
				Matched: []string{dir + "/lib/libk.a"}, Outcome: "matched", Confidence: "certain", Evidence: []string{"string \"k 1.0\" is present"},
				Members: []string{"k.c.o"}}}
		}), []string{"linked-copy-not-newest"}},
		{"linked-library-gone", program(contentOrigin{make_}, "go", func(_ *graph.Graph, _, link *graph.Step) {
			// The program links /w/rs/target/release/librs.a by -L/-l (its cgo LDFLAGS), which a clean of
			// the Cargo build removed: nothing on disk tells whether the program holds what the sources make.
			link.Inputs = append(link.Inputs, &graph.Input{File: graph.FileInfo{Path: "/w/rs/target/release/librs.a"},
				How: []graph.How{graph.CommandLine}, Detail: []string{"-lrs in #cgo LDFLAGS of /w/main.go"}})
		}), []string{"untracked-input-changed"}},
		{"linked-library-gone-sources-changed", program(contentOrigin{make_}, "go", func(_ *graph.Graph, _, link *graph.Step) {
			// As linked-library-gone, and the content baselines of the library's last build show one of
			// the sources it read changed since: the program holds the old library's code.
			link.Inputs = append(link.Inputs, &graph.Input{File: graph.FileInfo{Path: "/w/rs/target/release/librs.a"},
				How: []graph.How{graph.CommandLine}, Detail: []string{"-lrs in #cgo LDFLAGS of /w/main.go"},
				Content: &graph.InputContent{Verdict: graph.ContentDiffers, BaselineNS: t0 - 5e9,
					Through: []string{"/w/rs/include/lib.h", "/w/rs/src/a.c"}, Changed: []string{"/w/rs/include/lib.h"},
					Why: "1 of the 2 sources its last build read differ from the content recorded then"}})
		}), []string{"untracked-input-changed"}},
		{"linked-library-gone-sources-same", program(contentOrigin{make_}, "go", func(_ *graph.Graph, _, link *graph.Step) {
			// As linked-library-gone, and everything the library's last build read is as it was: info.
			link.Inputs = append(link.Inputs, &graph.Input{File: graph.FileInfo{Path: "/w/rs/target/release/librs.a"},
				How: []graph.How{graph.CommandLine}, Detail: []string{"-lrs in #cgo LDFLAGS of /w/main.go"},
				Content: &graph.InputContent{Verdict: graph.ContentSame, BaselineNS: t0 - 5e9,
					Through: []string{"/w/rs/include/lib.h", "/w/rs/src/a.c"},
					Why:     "the 2 sources its last build read have the content recorded then, no folder searched before one of its headers holds a file of that name now, and the environment it read is the same"}})
		}), []string{"untracked-input-changed"}},
		{"clean-content", program(contentOrigin{make_}, "go", func(_ *graph.Graph, obj, _ *graph.Step) {
			obj.Inputs[0].File.MTimeNS = t0 + 5e9 // a newer mtime is no reason of its own where content is compared
		}), nil},
	}
}

func TestRuleGolden(t *testing.T) {
	for _, c := range ruleCases() {
		t.Run(c.name, func(t *testing.T) {
			fs := check.Run(c.g, check.Options{})
			var drawn []string
			for _, f := range fs {
				drawn = append(drawn, f.Rule)
			}
			if !cmp.Equal(drawn, c.rules, cmp.Comparer(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })) {
				t.Errorf("rules drawn %v, want %v", drawn, c.rules)
			}
			var text, js bytes.Buffer
			if err := report.WriteText(&text, c.g, fs, report.TextOptions{Verbose: true}); err != nil {
				t.Fatal(err)
			}
			if err := report.WriteJSON(&js, report.NewCheckDoc(report.Tool{Name: "stalecheck", Version: "test"}, c.g, fs)); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, c.name+".txt", text.Bytes())
			golden.Check(t, c.name+".json", js.Bytes())
		})
	}
}
