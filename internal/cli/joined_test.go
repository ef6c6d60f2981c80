package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// Tests of the joined graph through the CLI: a Go module whose binary links a Cargo staticlib of a
// sibling Rust workspace (not at or above the Go module), whose build.rs compiles native/x.c with
// Debian's cc crate. Real go, cargo and cc builds in t.TempDir().

// goRustChain writes and builds the chain in a fresh folder and returns the folder; the Rust workspace
// is <dir>/rs, the Go module <dir>/go, its binary <dir>/go/chain (prints rcalc(2) = 6).
func goRustChain(t *testing.T) string {
	t.Helper()
	need.Tools(t, "go", "cargo", "cc", "ar")
	if _, err := os.Stat(filepath.Join(testutil.CCCrate, "Cargo.toml")); err != nil {
		t.Skipf("Debian's librust-cc-dev is not installed: %v", err)
	}
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=readonly")
	t.Setenv("GOWORK", "off")
	t.Setenv("CGO_ENABLED", "1")
	t.Setenv("CARGO_NET_OFFLINE", "true")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"rs/.cargo/config.toml": testutil.DirectorySourceConfig(testutil.DebianRegistry),
		"rs/Cargo.toml": "[package]\nname = \"rcalc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\ncrate-type = [\"staticlib\"]\n\n" +
			"[build-dependencies]\ncc = \"1.0\"\n\n[profile.dev]\npanic = \"abort\"\n",
		"rs/build.rs":   "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    println!(\"cargo:rerun-if-changed=native/x.c\");\n    cc::Build::new().file(\"native/x.c\").compile(\"x\");\n}\n",
		"rs/native/x.c": xTagged("xtag: version one"),
		"rs/src/lib.rs": "extern \"C\" { fn x_compute(v: i32) -> i32; }\n#[no_mangle]\npub extern \"C\" fn rcalc(x: i32) -> i32 { unsafe { x_compute(x) } }\n",
		"go/go.mod":     "module example.com/chain\n\ngo 1.26\n",
		"go/rbridge/rbridge.go": "package rbridge\n\n/*\n#cgo LDFLAGS: -L${SRCDIR}/../../rs/target/debug -lrcalc -lpthread -ldl -lm\nint rcalc(int);\n*/\nimport \"C\"\n\n" +
			"func Calc(x int) int { return int(C.rcalc(C.int(x))) }\n",
		"go/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/chain/rbridge\"\n)\n\nfunc main() { fmt.Println(rbridge.Calc(2)) }\n",
	})
	cargoShIn(t, filepath.Join(dir, "rs"), "build", "--offline")
	shIn(t, filepath.Join(dir, "go"), nil, "go", "build")
	if out := shIn(t, filepath.Join(dir, "go"), nil, filepath.Join(dir, "go", "chain")); out != "6\n" {
		t.Fatalf("the first build prints %q", out)
	}
	return dir
}

// cargoShIn runs cargo ARGS in dir (shIn) in the build-dir layout testutil's projects build in
// (testutil.CargoLayoutEnv).
func cargoShIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	argv, env := testutil.ProjectAt(t, dir).CargoCommand(args...)
	return shIn(t, dir, env, argv[0], argv[1:]...)
}

// checkDoc runs `check --format json DIR` and returns the findings with their roots, and the notes.
func checkDoc(t *testing.T, dir string) ([]sysFinding, [][]string, []string, int) {
	t.Helper()
	fs, code := checkSystems(t, dir)
	out, _, _ := run(t, "check", "--format", "json", dir)
	var doc struct {
		Findings []struct {
			Roots []string `json:"roots"`
		} `json:"findings"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var roots [][]string
	for _, f := range doc.Findings {
		roots = append(roots, f.Roots)
	}
	return fs, roots, doc.Notes, code
}

// TestCheckGoModuleNamesCFileBehindRustStaticlib: `stalecheck check GO_MODULE_DIR` reads the sibling
// Cargo workspace the Go binary links librcalc.a from (a note says so), names the edited native/x.c
// with the Go binary among the roots before cargo build (Cargo's pending rebuild) and behind the
// rebuilt staticlib after it (binary-older-than-input on the Go binary); relinking the Go binary fixes it.
func TestCheckGoModuleNamesCFileBehindRustStaticlib(t *testing.T) {
	dir := goRustChain(t)
	gomod, rs := filepath.Join(dir, "go"), filepath.Join(dir, "rs")
	app, xc := filepath.Join(gomod, "chain"), filepath.Join(rs, "native", "x.c")
	lib := filepath.Join(rs, "target", "debug", "librcalc.a")

	fs, _, notes, code := checkDoc(t, gomod)
	if code != 0 {
		t.Fatalf("fresh builds: exit %d: %+v", code, fs)
	}
	pulled := false
	for _, n := range notes {
		pulled = pulled || strings.Contains(n, filepath.Join(rs, "target")) && strings.Contains(n, lib) && strings.Contains(n, app)
	}
	if !pulled {
		t.Fatalf("no note says the Cargo build at %s was read for %s: %q", filepath.Join(rs, "target"), app, notes)
	}

	// Edit the C file behind the staticlib; no cargo build yet.
	if err := os.WriteFile(xc, []byte("int x_compute(int v) { return v * 3 + 1000; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ns := editLater(t, xc, "\n")
	fs, roots, _, code := checkDoc(t, gomod)
	hit := -1
	for i, f := range fs {
		if (f.Rule == "pending-rebuild" || f.Rule == "untracked-input-changed") && f.Severity == "error" && slices.Contains(roots[i], app) {
			if mt, _, ok := evidenceAt(f, "input", xc); ok && mt == ns {
				hit = i
			}
		}
	}
	if code != 1 || hit < 0 {
		t.Fatalf("exit %d; x.c (mtime %d) is not named with the Go binary among the roots:\n%+v\nroots %v", code, ns, fs, roots)
	}
	t.Logf("before cargo build: %s: %s", fs[hit].Rule, fs[hit].Message)

	// cargo build rebuilds librcalc.a; the Go binary is not relinked.
	cargoShIn(t, rs, "build", "--offline")
	fs, _, _, code = checkDoc(t, gomod)
	b := find(fs, "binary-older-than-input", app)
	if code != 1 || len(b) != 1 || b[0].Severity != "error" || !slices.Contains(b[0].Subjects, lib) {
		t.Fatalf("exit %d; the rebuilt staticlib is not binary-older-than-input against the Go binary: %+v", code, fs)
	}
	if mt, _, ok := evidenceAt(b[0], "input", xc); !ok || mt != ns || !strings.Contains(b[0].Message, "native/x.c") {
		t.Fatalf("x.c (mtime %d) is not named behind the staticlib: %+v", ns, b[0])
	}
	t.Logf("after cargo build: %s", b[0].Message)

	// The fix: relink the Go binary (the finding's fix forces it; an edit of the bridge does too).
	shIn(t, gomod, nil, "go", "build", "-a")
	if out := shIn(t, gomod, nil, app); out != "1006\n" {
		t.Fatalf("after the fix the binary prints %q", out)
	}
	fs, _, _, code = checkDoc(t, gomod)
	for _, f := range fs {
		if f.Severity == "error" || f.Severity == "warning" {
			t.Fatalf("after relinking: exit %d: %+v", code, fs)
		}
	}
}

// xTagged is native/x.c with a string literal the code reads through a volatile pointer, so every
// build (debug or release) keeps it and `which` can tell copies apart by it.
func xTagged(tag string) string {
	return "const char *volatile x_tag = \"" + tag + "\";\nint x_compute(int v) { return v * 3 + (x_tag[0] == 'x' ? 0 : 1); }\n"
}

type joinedWhichJSON struct {
	Libraries []struct {
		Name       string `json:"name"`
		Outcome    string `json:"outcome"`
		Candidates []struct {
			Path          string `json:"path"`
			Matched       bool   `json:"matched"`
			Configuration string `json:"configuration"`
			Evidence      []struct {
				Feature  string `json:"feature"`
				Presence string `json:"presence"`
			} `json:"evidence"`
		} `json:"candidates"`
	} `json:"libraries"`
}

func whichOf(t *testing.T, binary string, args ...string) joinedWhichJSON {
	t.Helper()
	out, stderr, code := run(t, append([]string{"which", "--format", "json", binary}, args...)...)
	if code != 0 {
		t.Fatalf("which %s: exit %d: %s", binary, code, stderr)
	}
	var doc joinedWhichJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("which JSON: %v\n%s", err, out)
	}
	return doc
}

// TestWhichGoBinaryRustStaticlib: the Go binary links rs/target/debug/librcalc.a; a release build
// with another tag makes a second copy. `which` (no Cargo workspace above the Go binary) finds both
// copies through the joined graph and proves from the binary's bytes that the debug copy is inside;
// after the Go binary is relinked against the release copy, it names that one.
func TestWhichGoBinaryRustStaticlib(t *testing.T) {
	dir := goRustChain(t)
	gomod, rs := filepath.Join(dir, "go"), filepath.Join(dir, "rs")
	app := filepath.Join(gomod, "chain")
	writeFiles(t, rs, map[string]string{"native/x.c": xTagged("xtag: version two")})
	cargoShIn(t, rs, "build", "--offline", "--release")
	matched := func(doc joinedWhichJSON) (inside, others []string) {
		if len(doc.Libraries) != 1 || doc.Libraries[0].Name != "rcalc" || doc.Libraries[0].Outcome != "matched" {
			t.Fatalf("want one library rcalc, matched: %+v", doc)
		}
		for _, c := range doc.Libraries[0].Candidates {
			if c.Matched {
				inside = append(inside, c.Path)
			} else {
				others = append(others, c.Path)
			}
		}
		return inside, others
	}
	inside, others := matched(whichOf(t, app))
	debug, release := filepath.Join(rs, "target", "debug"), filepath.Join(rs, "target", "release")
	if !slices.Contains(inside, filepath.Join(debug, "librcalc.a")) || !slices.Contains(others, filepath.Join(release, "librcalc.a")) {
		t.Fatalf("inside %v, others %v: want the debug copy inside, the release one not", inside, others)
	}
	for _, p := range inside {
		if !strings.HasPrefix(p, debug+string(filepath.Separator)) {
			t.Fatalf("a release copy is called inside: %v", inside)
		}
	}
	t.Logf("inside: %v; not inside: %v", inside, others)
	// The unit's own file is a copy too, in either layout: deps/librcalc-<hash>.a (legacy),
	// build/rcalc/<hash>/out/librcalc-<hash>.a (new; a staticlib-only unit keeps the hash suffix);
	// where Cargo hard-links it to the uplifted file, that one file is one candidate.
	sameAsACandidate := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && slices.ContainsFunc(append(append([]string{}, inside...), others...), func(c string) bool {
			cs, err := os.Stat(c)
			return err == nil && os.SameFile(st, cs)
		})
	}
	for _, prof := range []string{"debug", "release"} {
		own := testutil.ProjectAt(t, rs).UnitFiles(prof, "rcalc", "librcalc-*.a")
		if len(own) != 1 || !sameAsACandidate(own[0]) {
			t.Errorf("%s: the unit's own staticlib %v is not among the candidates (inside %v, others %v)", prof, own, inside, others)
		}
	}

	// Relink against the release copy: which now names it.
	writeFiles(t, gomod, map[string]string{"rbridge/rbridge.go": "package rbridge\n\n/*\n#cgo LDFLAGS: -L${SRCDIR}/../../rs/target/release -lrcalc -lpthread -ldl -lm\nint rcalc(int);\n*/\nimport \"C\"\n\n" +
		"func Calc(x int) int { return int(C.rcalc(C.int(x))) }\n"})
	shIn(t, gomod, nil, "go", "build")
	inside, _ = matched(whichOf(t, app))
	if !slices.Contains(inside, filepath.Join(release, "librcalc.a")) || slices.Contains(inside, filepath.Join(debug, "librcalc.a")) {
		t.Fatalf("after relinking against the release copy, inside %v", inside)
	}
}

// makeTwoArchives is a Make build of app from main.c and lib/libk.a (k.c, KTAG "ktag: current"), and
// of old/libk.a from old/k.c (KTAG "ktag: old"), another copy of the same library no rule links.
func makeTwoArchives(t *testing.T) string {
	t.Helper()
	need.Tools(t, "make", "cc", "ar")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "CFLAGS = -O1 -MMD\nall: app old/libk.a\napp: main.o lib/libk.a\n\t$(CC) main.o -Llib -lk -o $@\n" +
			"lib/libk.a: lib/k.o\n\tar rcs $@ $^\nold/libk.a: old/k.o\n\tar rcs $@ $^\n-include main.d lib/k.d old/k.d\n",
		"main.c":  "#include <stdio.h>\nconst char *k_tag(void);\nint main(void) { puts(k_tag()); return 0; }\n",
		"lib/k.c": "const char *k_tag(void) { return \"ktag: current\"; }\n",
		"old/k.c": "const char *k_tag(void) { return \"ktag: old\"; }\n",
	})
	shIn(t, dir, nil, "make")
	return dir
}

// TestWhichMakeProgram: `which` on a Make program names, of the two libk.a copies the Make build
// writes, the one its link rule uses (lib/libk.a), from the binary's bytes.
func TestWhichMakeProgram(t *testing.T) {
	dir := makeTwoArchives(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	doc := whichOf(t, filepath.Join(dir, "app"))
	if len(doc.Libraries) != 1 || doc.Libraries[0].Name != "k" || doc.Libraries[0].Outcome != "matched" || len(doc.Libraries[0].Candidates) != 2 {
		t.Fatalf("want libk.a matched among two copies: %+v", doc)
	}
	for _, c := range doc.Libraries[0].Candidates {
		want := c.Path == filepath.Join(dir, "lib", "libk.a")
		if c.Matched != want || !strings.Contains(c.Configuration, "make step") {
			t.Fatalf("candidate %s: matched %v (want %v), configuration %q", c.Path, c.Matched, want, c.Configuration)
		}
	}
	// --lib and text output work on the joined graph too.
	out, _, code := run(t, "which", "--lib", "k", filepath.Join(dir, "app"))
	if code != 0 || !strings.Contains(out, "libk.a: matched") || !strings.Contains(out, filepath.Join(dir, "lib", "libk.a")) {
		t.Fatalf("text: exit %d\n%s", code, out)
	}
}

// TestExplainMakeHeader: explain PATH on a header a Make build reads only through a depfile make never
// includes (S12): each object's step is listed as a make step that does not watch it, with the depfile
// clue, and an edit after the build is named; for main.c (a prerequisite) touched later, explain says
// make redoes main.o. Including the depfiles (the fix) makes the header watched.
func TestExplainMakeHeader(t *testing.T) {
	need.Tools(t, "make", "cc")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "CFLAGS = -O0 -MMD\nOBJS = main.o point.o\napp: $(OBJS)\n\t$(CC) $(OBJS) -o $@\n",
		"point.h":  "int norm(int x, int y);\n",
		"point.c":  "#include \"point.h\"\nint norm(int x, int y) { return x + y; }\n",
		"main.c":   "#include \"point.h\"\nint main(void) { return norm(1, 2) - 3; }\n",
	})
	shIn(t, dir, nil, "make")
	hdr := filepath.Join(dir, "point.h")
	ns := editLater(t, hdr, "/* edited */\n")
	type verdict struct {
		Unit, Kind, System string
		Declared           bool   `json:"declared"`
		WillRerun          bool   `json:"will_rerun"`
		LastRun            string `json:"last_run_path"`
		Reads              []struct{ How, Detail string }
		Reasons            []struct{ Code, Message string }
	}
	explainOf := func(p string) []verdict {
		t.Helper()
		out, stderr, code := run(t, "explain", "--format", "json", "-w", dir, p)
		if code != 0 {
			t.Fatalf("explain %s: exit %d: %s", p, code, stderr)
		}
		var doc struct {
			Path struct {
				MTimeNS int64     `json:"mtime_ns"`
				Steps   []verdict `json:"steps"`
			} `json:"path"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if doc.Path.MTimeNS == 0 {
			t.Fatalf("no mtime for %s: %s", p, out)
		}
		return doc.Path.Steps
	}
	vs := explainOf(hdr)
	objs := map[string]bool{}
	for _, v := range vs {
		if v.System != "make" || v.Declared || v.WillRerun || len(v.Reasons) == 0 || v.Reasons[0].Code != "undeclared" {
			t.Fatalf("step %+v", v)
		}
		depfile := false
		for _, r := range v.Reads {
			depfile = depfile || r.How == "depfile"
		}
		if !depfile || !strings.Contains(v.Reasons[0].Message, "make does not have it as a prerequisite") || !strings.Contains(v.Reasons[0].Message, "after") {
			t.Fatalf("step %+v: want the depfile clue and the edit after the build", v)
		}
		objs[filepath.Base(v.LastRun)] = true
	}
	if !objs["main.o"] || !objs["point.o"] {
		t.Fatalf("want main.o and point.o among the steps reading point.h (edited at %d): %+v", ns, vs)
	}
	out, _, _ := run(t, "explain", "-w", dir, hdr)
	if !strings.Contains(out, "make step") || !strings.Contains(out, "rebuild:") {
		t.Fatalf("text:\n%s", out)
	}
	// A prerequisite touched after the build: make redoes main.o.
	editLater(t, filepath.Join(dir, "main.c"), "/* touched */\n")
	rerun := false
	for _, v := range explainOf(filepath.Join(dir, "main.c")) {
		if filepath.Base(v.LastRun) == "main.o" {
			rerun = v.Declared && v.WillRerun && v.Reasons[0].Code == "changed"
		}
	}
	if !rerun {
		t.Fatalf("main.c: want make to redo main.o: %+v", explainOf(filepath.Join(dir, "main.c")))
	}
	// The fix: include the depfiles; point.h is now a prerequisite make watches.
	f, _ := os.OpenFile(filepath.Join(dir, "Makefile"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("-include $(OBJS:.o=.d)\n")
	f.Close()
	shIn(t, dir, nil, "make")
	for _, v := range explainOf(hdr) {
		if !v.Declared || v.WillRerun {
			t.Fatalf("after the fix: %+v", v)
		}
	}
}

// TestRunRefusesStaleMakeProgram: `run -- ./app` on a Make program whose header changed without make
// seeing it is refused (125) with the finding; after the fix (depfiles included, make) it runs.
func TestRunRefusesStaleMakeProgram(t *testing.T) {
	need.Tools(t, "make", "cc")
	runEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "CFLAGS = -O0 -MMD\nOBJS = main.o\napp: $(OBJS)\n\t$(CC) $(OBJS) -o $@\n",
		"v.h":      "#define V 1\n",
		"main.c":   "#include <stdio.h>\n#include \"v.h\"\nint main(void) { printf(\"v%d\\n\", V); return 0; }\n",
	})
	shIn(t, dir, nil, "make")
	db := filepath.Join(t.TempDir(), "runs.db")
	if out, stderr, code := runIn(t, dir, "run", "--ledger", db, "--", "./app"); code != 0 || out != "v1\n" {
		t.Fatalf("fresh build: exit %d, out %q: %s", code, out, stderr)
	}
	writeFiles(t, dir, map[string]string{"v.h": "#define V 2\n"})
	editLater(t, filepath.Join(dir, "v.h"), "")
	out, stderr, code := runIn(t, dir, "run", "--ledger", db, "--", "./app")
	if code != 125 || out != "" || !strings.Contains(stderr, "refusing to run") || !strings.Contains(stderr, "untracked-input-changed") || !strings.Contains(stderr, "v.h") {
		t.Fatalf("stale Make program: exit %d, out %q:\n%s", code, out, stderr)
	}
	f, _ := os.OpenFile(filepath.Join(dir, "Makefile"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("-include $(OBJS:.o=.d)\n")
	f.Close()
	shIn(t, dir, nil, "make")
	if out, stderr, code := runIn(t, dir, "run", "--ledger", db, "--", "./app"); code != 0 || out != "v2\n" {
		t.Fatalf("after the fix: exit %d, out %q: %s", code, out, stderr)
	}
}

// TestCleanSaysCargoOnly: clean on a Make folder outside any Cargo workspace says that clean is
// Cargo's only and names the Make build it found.
func TestCleanSaysCargoOnly(t *testing.T) {
	dir := makeTwoArchives(t)
	_, stderr, code := run(t, "clean", dir)
	if code != 2 || !strings.Contains(stderr, "Cargo build folders only") || !strings.Contains(stderr, "a make build at "+dir) || !strings.Contains(stderr, "make clean") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "app")); err != nil {
		t.Fatalf("clean touched the Make build: %v", err)
	}
}

// TestGoneStaticlibJudgedBySources: `cargo clean -p rcalc` removes the staticlib the Go binary links.
// With the sources its last build read unchanged (and no header shadowing one, the environment it read
// the same), rebuilding it makes what the binary holds: info that says what was compared. With
// native/x.c edited after a check recorded its content (its mtime set back, so no mtime shows it), the
// binary holds old code: an error naming x.c.
func TestGoneStaticlibJudgedBySources(t *testing.T) {
	dir := goRustChain(t)
	gomod, rs := filepath.Join(dir, "go"), filepath.Join(dir, "rs")
	xc, lib := filepath.Join(rs, "native", "x.c"), filepath.Join(rs, "target", "debug", "librcalc.a")
	if fs, _, _, code := checkDoc(t, gomod); code != 0 { // records the content baselines
		t.Fatalf("fresh builds: exit %d: %+v", code, fs)
	}
	cargoShIn(t, rs, "clean", "-p", "rcalc")
	if _, err := os.Stat(lib); err == nil {
		t.Fatal("the premise: cargo clean -p removed librcalc.a")
	}
	fs, _, _, code := checkDoc(t, gomod)
	u := find(fs, "untracked-input-changed", lib)
	if code != 0 || len(u) != 1 || u[0].Severity != "info" || !strings.Contains(u[0].Message, "sources its last build read have the content recorded then") {
		t.Fatalf("library gone, sources unchanged: exit %d, want one info saying what was compared: %+v", code, fs)
	}
	st, err := os.Stat(xc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(xc, []byte(xTagged("xtag: version two")), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(xc, st.ModTime(), st.ModTime()) // cp -p: new content, the old mtime
	fs, _, _, code = checkDoc(t, gomod)
	u = find(fs, "untracked-input-changed", lib)
	if code != 1 || len(u) != 1 || u[0].Severity != "error" {
		t.Fatalf("library gone, x.c changed: exit %d, want one error: %+v", code, fs)
	}
	if _, _, ok := evidenceAt(u[0], "input", xc); !ok {
		t.Fatalf("the error does not name native/x.c: %+v", u[0])
	}
}
