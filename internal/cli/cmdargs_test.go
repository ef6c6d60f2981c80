package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGeneratorInputNamedOnCommandLine: a generator rule runs `sh gen.sh table.in table.h gen.log`;
// only gen.sh is declared (a prerequisite, an edge input, a DEPENDS), so editing table.in regenerates
// nothing, on every build system. The clean build carries no finding (gen.log, which the command also
// names, is written by the run: older than main.o, built after it); after the edit and a build that does
// nothing, check names table.in (known by command-arg, its content differing from the baseline the
// first check took); declaring it and building again leaves no finding.
func TestGeneratorInputNamedOnCommandLine(t *testing.T) {
	gen := "cp \"$1\" \"$2\"\necho generated > \"$3\"\n"
	main := "#include \"table.h\"\nint main(void) { return TABLE - 7; }\n"
	for _, tc := range []struct {
		name, build, fixed string
		tools              []string
		files              map[string]string
		build2             []string // the build command
	}{
		{name: "make", tools: []string{"make", "cc"}, build2: []string{"make"},
			files: map[string]string{"Makefile": "app: main.o\n\t$(CC) -o $@ main.o\nmain.o: main.c table.h\n\t$(CC) -I. -MMD -c main.c -o $@\n" +
				"table.h: gen.sh\n\tsh gen.sh table.in table.h gen.log\n-include main.d\n"},
			fixed: "table.h: gen.sh table.in"},
		{name: "ninja", tools: []string{"ninja", "cc"}, build2: []string{"ninja"},
			files: map[string]string{"build.ninja": "rule gen\n  command = sh gen.sh table.in $out gen.log\nrule cc\n  command = cc -I. -MD -MF $out.d -c $in -o $out\n  depfile = $out.d\n  deps = gcc\n" +
				"rule link\n  command = cc -o $out $in\nbuild table.h: gen gen.sh\nbuild main.o: cc main.c || table.h\nbuild app: link main.o\n"},
			fixed: "build table.h: gen gen.sh table.in"},
		{name: "cmake-make", tools: []string{"cmake", "make", "cc"}, build2: []string{"cmake", "--build", "build"},
			files: map[string]string{"CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(g C)\n" +
				"add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/table.h COMMAND sh ${CMAKE_SOURCE_DIR}/gen.sh ${CMAKE_SOURCE_DIR}/table.in ${CMAKE_BINARY_DIR}/table.h ${CMAKE_BINARY_DIR}/gen.log DEPENDS gen.sh)\n" +
				"add_executable(app main.c ${CMAKE_BINARY_DIR}/table.h)\ntarget_include_directories(app PRIVATE ${CMAKE_BINARY_DIR})\n"},
			fixed: "DEPENDS gen.sh table.in"},
		{name: "cmake-ninja", tools: []string{"cmake", "ninja", "cc"}, build2: []string{"cmake", "--build", "build"},
			files: map[string]string{"CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(g C)\n" +
				"add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/table.h COMMAND sh ${CMAKE_SOURCE_DIR}/gen.sh ${CMAKE_SOURCE_DIR}/table.in ${CMAKE_BINARY_DIR}/table.h ${CMAKE_BINARY_DIR}/gen.log DEPENDS gen.sh)\n" +
				"add_executable(app main.c ${CMAKE_BINARY_DIR}/table.h)\ntarget_include_directories(app PRIVATE ${CMAKE_BINARY_DIR})\n"},
			fixed: "DEPENDS gen.sh table.in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needTools(t, tc.tools...)
			dir := t.TempDir()
			files := map[string]string{"gen.sh": gen, "main.c": main, "table.in": "#define TABLE 7\n"}
			for k, v := range tc.files {
				files[k] = v
			}
			writeFiles(t, dir, files)
			build := func() {
				switch tc.name {
				case "cmake-ninja":
					shIn(t, dir, nil, "cmake", "-S", ".", "-B", "build", "-G", "Ninja")
				case "cmake-make":
					shIn(t, dir, nil, "cmake", "-S", ".", "-B", "build", "-G", "Unix Makefiles")
				}
				shIn(t, dir, nil, tc.build2[0], tc.build2[1:]...)
			}
			build()
			checkDir := dir
			if strings.HasPrefix(tc.name, "cmake") {
				checkDir = filepath.Join(dir, "build")
			}
			if fs, code := checkSystems(t, checkDir, "--fail-on", "warning"); code != 0 || len(find(fs, "untracked-input-changed", "")) != 0 {
				t.Fatalf("clean build: exit %d, %+v", code, fs)
			}
			in := filepath.Join(dir, "table.in")
			ns := editLater(t, in, "#undef TABLE\n#define TABLE 9\n")
			build()
			if _, err := os.Stat(filepath.Join(dir, "gen.log")); err != nil && !strings.HasPrefix(tc.name, "cmake") {
				t.Fatal(err)
			}
			fs, code := checkSystems(t, checkDir)
			got := find(fs, "untracked-input-changed", in)
			if code != 1 || len(got) != 1 || got[0].Severity != "error" {
				t.Fatalf("after the edit: exit %d, want one error naming table.in: %+v", code, fs)
			}
			if mt, how, ok := evidenceAt(got[0], "input", in); !ok || mt != ns || !strings.Contains(how, "command-arg") || !strings.Contains(how, "gen.sh") {
				t.Fatalf("input evidence %d %q", mt, how)
			}
			if _, d, ok := evidenceAt(got[0], "record", in); !ok || !strings.Contains(d, "differs from the content baseline") {
				t.Fatalf("no content-baseline evidence: %+v", got[0].Evidence)
			}
			if len(fs) != 1 {
				t.Fatalf("only table.in's finding wanted (gen.log is the command's output): %+v", fs)
			}
			// The fix: declare it; the build regenerates table.h and nothing is left.
			for name, body := range tc.files {
				old := strings.TrimSuffix(tc.fixed, " table.in")
				writeFiles(t, dir, map[string]string{name: strings.Replace(body, old, tc.fixed, 1)})
			}
			build()
			if fs, code := checkSystems(t, checkDir, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
				t.Fatalf("after the fix: exit %d, %+v", code, fs)
			}
		})
	}
}

// TestCMakeUnixMakefiles: CMake's "Unix Makefiles" generator builds through recursive makes (the top
// Makefile runs $(MAKE) -f CMakeFiles/Makefile2 in the same folder, which runs each target's
// build.make): check reads them all. The clean build has no finding; a CMakeLists.txt edit is pending
// (CMake's configure step, which no make rule names, runs first in every build); a header edit before the build is
// pending, also right after the first build, while compiler_depend.make is still empty (the target's
// depend step merges the depfiles DependInfo.cmake lists into it before each build); a header that a
// folder searched first now holds, which `cmake --build` does not see, is path-lookup-changed.
func TestCMakeUnixMakefiles(t *testing.T) {
	needTools(t, "cmake", "make", "cc")
	root := t.TempDir()
	src, bld := filepath.Join(root, "src"), filepath.Join(root, "build")
	writeFiles(t, src, map[string]string{
		"CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(p C)\nadd_executable(app main.c lib/util.c)\n" +
			"target_include_directories(app PRIVATE ${CMAKE_SOURCE_DIR}/inc0 ${CMAKE_SOURCE_DIR}/inc)\n",
		"inc/util.h":  "#define FACTOR 3\nint util(int x);\n",
		"inc0/README": "headers here come first\n",
		"lib/util.c":  "#include \"util.h\"\nint util(int x) { return x * FACTOR; }\n",
		"main.c":      "#include \"util.h\"\nint main(int c, char **v) { return util(c) - 3; }\n",
	})
	shIn(t, root, nil, "cmake", "-S", src, "-B", bld, "-G", "Unix Makefiles")
	shIn(t, root, nil, "cmake", "--build", bld)
	if fs, code := checkSystems(t, bld, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
		t.Fatalf("clean build: exit %d %+v", code, fs)
	}
	// CMakeLists.txt: no make rule names it, but cmake --check-build-system (CMAKE_MAKEFILE_DEPENDS)
	// reconfigures before the next build.
	lists := filepath.Join(src, "CMakeLists.txt")
	editLater(t, lists, "target_compile_definitions(app PRIVATE EXTRA=1)\n")
	fs, code := checkSystems(t, bld)
	if p := find(fs, "pending-rebuild", lists); code != 1 || len(p) != 1 || p[0].Severity != "error" || !strings.Contains(p[0].Message, "CMAKE_MAKEFILE_DEPENDS") {
		t.Fatalf("CMakeLists.txt edit: exit %d %+v", code, fs)
	}
	shIn(t, root, nil, "cmake", "--build", bld)
	if fs, code := checkSystems(t, bld, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
		t.Fatalf("after reconfiguring: exit %d %+v", code, fs)
	}
	hdr := filepath.Join(src, "inc", "util.h")
	editLater(t, hdr, "int util2(int x);\n")
	fs, code = checkSystems(t, bld)
	// Both objects, lib/util.c's too, whose depfile lies below the target's folder (DependInfo.cmake).
	if p := find(fs, "pending-rebuild", hdr); code != 1 || len(p) != 2 || p[0].System != "make" {
		t.Fatalf("header edit before the build: exit %d %+v", code, fs)
	}
	if out := shIn(t, root, nil, "cmake", "--build", bld); !strings.Contains(out, "Building C object") {
		t.Fatalf("cmake --build did not rebuild after the header edit (pending-rebuild was wrong):\n%s", out)
	}
	if fs, code := checkSystems(t, bld, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
		t.Fatalf("after the rebuild: exit %d %+v", code, fs)
	}
	shadow := filepath.Join(src, "inc0", "util.h")
	writeFiles(t, src, map[string]string{"inc0/util.h": "#define FACTOR 7\nint util(int x);\n"})
	if out := shIn(t, root, nil, "cmake", "--build", bld); strings.Contains(out, "Building C object") {
		t.Fatalf("cmake --build saw the new header (the scenario needs it not to):\n%s", out)
	}
	fs, code = checkSystems(t, bld)
	if p := find(fs, "path-lookup-changed", shadow); code != 1 || len(p) != 2 {
		t.Fatalf("shadowing header: exit %d, want path-lookup-changed for both objects: %+v", code, fs)
	}
}

// TestArchiveLinkedByLFlag: the program links lib/libz.a through `-Llib -lz` without naming it as a
// prerequisite (Make) or an input (Ninja: only order-only). An edit of lib/util.c rebuilds the archive
// and relinks nothing: check names the archive the link takes (binary-older-than-input, known by the
// command line's -l); `which` finds the copy and that the program holds none of it; naming the archive
// as a prerequisite and building again leaves no finding.
func TestArchiveLinkedByLFlag(t *testing.T) {
	for _, tc := range []struct{ name, file, body, fixFrom, fixTo string }{
		{"make", "Makefile", "all: lib/libz.a app\napp: main.o\n\t$(CC) -o $@ main.o -Llib -lz\nlib/libz.a: lib/util.o\n\tar crs $@ $^\n",
			"app: main.o\n", "app: main.o lib/libz.a\n"},
		{"ninja", "build.ninja", "rule cc\n  command = cc -c $in -o $out\nrule ar\n  command = rm -f $out; ar crs $out $in\nrule link\n  command = cc $in -o $out $libs\n" +
			"build main.o: cc main.c\nbuild lib/util.o: cc lib/util.c\nbuild lib/libz.a: ar lib/util.o\nbuild app: link main.o || lib/libz.a\n  libs = -Llib -lz\n",
			"build app: link main.o || lib/libz.a", "build app: link main.o | lib/libz.a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needTools(t, tc.name, "cc", "ar")
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{tc.file: tc.body,
				"lib/util.c": "int util(int x) { return x * 3; }\n",
				"main.c":     "int util(int);\nint main(int c, char **v) { return util(c) - 3; }\n"})
			shIn(t, dir, nil, tc.name)
			if fs, code := checkSystems(t, dir); code != 0 {
				t.Fatalf("clean build: exit %d %+v", code, fs)
			}
			editLater(t, filepath.Join(dir, "lib", "util.c"), "int util2(int x) { return x; }\n")
			shIn(t, dir, nil, tc.name)
			lib := filepath.Join(dir, "lib", "libz.a")
			fs, code := checkSystems(t, dir)
			var got *sysFinding
			for i, f := range fs {
				if f.Rule == "binary-older-than-input" && len(f.Subjects) > 1 && f.Subjects[1] == lib {
					got = &fs[i]
				}
			}
			if code != 1 || got == nil || got.Severity != "error" {
				t.Fatalf("after the archive was rebuilt: exit %d, want binary-older-than-input naming lib/libz.a: %+v", code, fs)
			}
			if _, how, ok := evidenceAt(*got, "input", lib); !ok || !strings.Contains(how, "-lz found in the -L folders") {
				t.Fatalf("input evidence %q", how)
			}
			out, _, _ := run(t, "which", filepath.Join(dir, "app"))
			if !strings.Contains(out, "libz.a") || strings.Contains(out, "links no static library") {
				t.Fatalf("which:\n%s", out)
			}
			b, _ := os.ReadFile(filepath.Join(dir, tc.file))
			writeFiles(t, dir, map[string]string{tc.file: strings.Replace(string(b), tc.fixFrom, tc.fixTo, 1)})
			shIn(t, dir, nil, tc.name)
			if fs, code := checkSystems(t, dir); code != 0 || len(find(fs, "binary-older-than-input", "")) != 0 {
				t.Fatalf("after the fix: exit %d %+v", code, fs)
			}
		})
	}
}

// TestSharedLibraryRebuiltAlone: the program links lib/libz.so through `-Llib -lz` with an rpath, and
// the library is no prerequisite of it; an edit of lib/util.c rebuilds the library alone. The program
// loads the new library when it starts (it prints the new value): no error, an info that says so.
func TestSharedLibraryRebuiltAlone(t *testing.T) {
	for _, tc := range []struct{ name, file, body string }{
		{"make", "Makefile", "all: lib/libz.so app\napp: main.o\n\t$(CC) -o $@ main.o -Llib -lz -Wl,-rpath,'$$ORIGIN/lib'\n" +
			"lib/libz.so: lib/util.c\n\t$(CC) -shared -fPIC -o $@ lib/util.c\n"},
		{"ninja", "build.ninja", "rule cc\n  command = cc -c $in -o $out\nrule so\n  command = cc -shared -fPIC -o $out $in\n" +
			"rule link\n  command = cc $in -o $out -Llib -lz -Wl,-rpath,'$$ORIGIN/lib'\n" +
			"build main.o: cc main.c\nbuild lib/libz.so: so lib/util.c\nbuild app: link main.o || lib/libz.so\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needTools(t, tc.name, "cc")
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{tc.file: tc.body,
				"lib/util.c": "int util(int x) { return x * 3; }\n",
				"main.c":     "int util(int);\nint main(int c, char **v) { return util(c) - 3; }\n"})
			shIn(t, dir, nil, tc.name)
			app := filepath.Join(dir, "app")
			editLater(t, filepath.Join(dir, "lib", "util.c"), "int util2(int x) { return x; }\n")
			shIn(t, dir, nil, tc.name)
			if !mtimeOf(t, app).Before(mtimeOf(t, filepath.Join(dir, "lib", "libz.so"))) { // the premise
				t.Fatal("the program was relinked")
			}
			fs, code := checkSystems(t, dir)
			got := find(fs, "binary-older-than-input", app)
			if code != 0 || len(got) != 1 || got[0].Severity != "info" || !strings.Contains(got[0].Message, "shared library") {
				t.Fatalf("a shared library rebuilt after the program: exit %d, want one info: %+v", code, fs)
			}
		})
	}
}

// TestNinjaRestatUnchangedOutput: a restat generator edge rewrites its output only when it changes. An
// input edit that leaves the output the same: ninja runs the edge, keeps gen.h's old mtime and records
// the newest input's in .ninja_log, which it compares against from then on ("no work to do"); the binary
// is current. check compares against the log's mtime too: no finding. An edit that changes the output
// is pending before the build, as ever.
func TestNinjaRestatUnchangedOutput(t *testing.T) {
	needTools(t, "ninja", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"spec.txt": "v=7\n",
		"gen.sh":   "v=$(grep ^v= spec.txt | cut -d= -f2); echo \"#define SPEC $v\" > gen.h.tmp; cmp -s gen.h.tmp gen.h && rm gen.h.tmp || mv gen.h.tmp gen.h\n",
		"main.c":   "#include \"gen.h\"\nint main(void) { return SPEC - 7; }\n",
		"build.ninja": "rule gen\n  command = sh gen.sh\n  restat = 1\nrule cc\n  command = cc -MMD -MF $out.d -c $in -o $out\n  depfile = $out.d\n  deps = gcc\n" +
			"rule link\n  command = cc $in -o $out\nbuild gen.h: gen spec.txt gen.sh\nbuild main.o: cc main.c || gen.h\nbuild app: link main.o\n",
	})
	shIn(t, dir, nil, "ninja")
	spec := filepath.Join(dir, "spec.txt")
	editLater(t, spec, "# a note the generator ignores\n")
	shIn(t, dir, nil, "ninja")
	if out := shIn(t, dir, nil, "ninja", "-n"); !strings.Contains(out, "no work to do") {
		t.Fatalf("ninja has work after the restat build (the scenario needs none):\n%s", out)
	}
	if fs, code := checkSystems(t, dir, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
		t.Fatalf("restat edge whose output stayed: exit %d %+v", code, fs)
	}
	b, _ := os.ReadFile(spec)
	writeFiles(t, dir, map[string]string{"spec.txt": strings.Replace(string(b), "v=7", "v=8", 1)})
	when := time.Now().Add(2 * time.Second)
	os.Chtimes(spec, when, when)
	fs, code := checkSystems(t, dir)
	if p := find(fs, "pending-rebuild", spec); code != 1 || len(p) != 1 || p[0].Severity != "error" {
		t.Fatalf("an edit that changes the output: exit %d %+v", code, fs)
	}
}

// TestMakeCopyIfDifferentGenerator: CMake's Unix Makefiles generator and a custom command that writes
// gen.h.tmp and copies it over gen.h with `cmake -E copy_if_different`. An input edit that leaves the
// output the same: make runs the command, gen.h keeps its old mtime (make will run it again on every
// build, as it does), and the binary is current: no error, an info naming the temporary file. An edit
// after that build, not built yet, is pending as ever.
func TestMakeCopyIfDifferentGenerator(t *testing.T) {
	needTools(t, "cmake", "make", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"spec.txt": "v=7\n",
		"gen.sh":   "v=$(grep ^v= \"$1\" | cut -d= -f2); echo \"#define SPEC $v\" > \"$2\"\n",
		"main.c":   "#include \"gen.h\"\nint main(void) { return SPEC - 7; }\n",
		"CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(g C)\n" +
			"add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/gen.h\n  COMMAND sh ${CMAKE_SOURCE_DIR}/gen.sh ${CMAKE_SOURCE_DIR}/spec.txt ${CMAKE_BINARY_DIR}/gen.h.tmp\n" +
			"  COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CMAKE_BINARY_DIR}/gen.h.tmp ${CMAKE_BINARY_DIR}/gen.h\n  DEPENDS ${CMAKE_SOURCE_DIR}/gen.sh ${CMAKE_SOURCE_DIR}/spec.txt)\n" +
			"add_executable(app main.c ${CMAKE_BINARY_DIR}/gen.h)\ntarget_include_directories(app PRIVATE ${CMAKE_BINARY_DIR})\n",
	})
	bld := filepath.Join(dir, "build")
	shIn(t, dir, nil, "cmake", "-S", ".", "-B", "build", "-G", "Unix Makefiles")
	shIn(t, dir, nil, "cmake", "--build", "build")
	spec := filepath.Join(dir, "spec.txt")
	editLater(t, spec, "# a note the generator ignores\n")
	shIn(t, dir, nil, "cmake", "--build", "build")
	gen, tmp := filepath.Join(bld, "gen.h"), filepath.Join(bld, "gen.h.tmp")
	if g, s, m := mtimeOf(t, gen), mtimeOf(t, spec), mtimeOf(t, tmp); !(g.Before(s) && !m.Before(s)) { // the premise
		t.Fatalf("want gen.h older than spec.txt and gen.h.tmp newer: %v %v %v", g, s, m)
	}
	fs, code := checkSystems(t, bld)
	p := find(fs, "pending-rebuild", spec)
	if code != 0 || len(p) != 1 || p[0].Severity != "info" || !strings.Contains(p[0].Message, "gen.h.tmp") {
		t.Fatalf("an edit the generator's output did not change: exit %d, want one info naming gen.h.tmp: %+v", code, fs)
	}
	b, _ := os.ReadFile(spec)
	writeFiles(t, dir, map[string]string{"spec.txt": strings.Replace(string(b), "v=7", "v=8", 1)})
	when := time.Now().Add(2 * time.Second)
	os.Chtimes(spec, when, when)
	fs, code = checkSystems(t, bld)
	if p := find(fs, "pending-rebuild", spec); code != 1 || len(p) != 1 || p[0].Severity != "error" {
		t.Fatalf("an edit that changes the output, not built: exit %d %+v", code, fs)
	}
}

// TestDebugInfoMacroOnlyHeader: objects compiled with -g and no depfile; inc/f.h holds only a macro,
// so the DWARF line tables never list it. The #include lines are still followed: its edit is an
// untracked-input-changed error on Make and Ninja, as without -g.
func TestDebugInfoMacroOnlyHeader(t *testing.T) {
	for _, tc := range []struct{ tool, file, body string }{
		{"make", "Makefile", "app: main.o\n\t$(CC) -o $@ main.o\nmain.o: main.c\n\t$(CC) -g -Iinc -c main.c -o $@\n"},
		{"ninja", "build.ninja", "rule cc\n  command = cc -g -Iinc -c $in -o $out\nrule link\n  command = cc $in -o $out\nbuild main.o: cc main.c\nbuild app: link main.o\n"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			needTools(t, tc.tool, "cc")
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{tc.file: tc.body, "inc/f.h": "#define FACTOR 3\n",
				"main.c": "#include \"f.h\"\nint main(int c, char **v) { return c * FACTOR - 3; }\n"})
			shIn(t, dir, nil, tc.tool)
			hdr := filepath.Join(dir, "inc", "f.h")
			editLater(t, hdr, "#undef FACTOR\n#define FACTOR 5\n")
			shIn(t, dir, nil, tc.tool)
			fs, code := checkSystems(t, dir)
			if u := find(fs, "untracked-input-changed", hdr); code != 1 || len(u) != 1 || u[0].Severity != "error" {
				t.Fatalf("exit %d, want untracked-input-changed for inc/f.h: %+v", code, fs)
			}
		})
	}
}

// TestMakeOutOfTreeBuildFolder: objects and the program in build/, made by `make -C build -f
// ../Makefile` with VPATH to src/ and depfiles. check of the project folder (whose makefile's targets
// do not exist beside it) and of build/ (which has no makefile) both read the build in build/: a header
// edit is pending, with the make command that builds there.
func TestMakeOutOfTreeBuildFolder(t *testing.T) {
	needTools(t, "make", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile":    "SRC := $(dir $(lastword $(MAKEFILE_LIST)))src\nVPATH = $(SRC)\nCFLAGS = -O2 -MMD -MP -I$(SRC)/inc\napp: main.o util.o\n\t$(CC) -o $@ $^\n-include main.d util.d\n",
		"src/inc/f.h": "#define FACTOR 3\n",
		"src/util.c":  "#include \"f.h\"\nint util(int x) { return x * FACTOR; }\n",
		"src/main.c":  "int util(int);\nint main(int c, char **v) { return util(c) - 3; }\n",
		"build/.keep": "",
	})
	shIn(t, dir, nil, "make", "-C", "build", "-f", "../Makefile")
	bld := filepath.Join(dir, "build")
	for _, at := range []string{dir, bld} {
		if fs, code := checkSystems(t, at, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
			t.Fatalf("check %s of the clean build: exit %d %+v", at, code, fs)
		}
	}
	hdr := filepath.Join(dir, "src", "inc", "f.h")
	editLater(t, hdr, "#undef FACTOR\n#define FACTOR 5\n")
	for _, at := range []string{dir, bld} {
		fs, code := checkSystems(t, at)
		p := find(fs, "pending-rebuild", hdr)
		if code != 1 || len(p) != 1 || p[0].Subjects[1] != filepath.Join(bld, "util.o") || !strings.Contains(p[0].Fix, "-f ../Makefile") {
			t.Fatalf("check %s after the header edit: exit %d %+v", at, code, fs)
		}
	}
}

// TestGoBuildEnvChanged: a cgo program built with CGO_CFLAGS=-DVAL=1 (its build info records it),
// checked where CGO_CFLAGS is -DVAL=2: go build here makes another binary, so the one on disk is old
// (pending-rebuild naming the variable and both values); checked with -DVAL=1, nothing.
func TestGoBuildEnvChanged(t *testing.T) {
	needTools(t, "go", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/app\n\ngo 1.21\n",
		"main.go": "package main\n\n// static int val(void) { return VAL; }\nimport \"C\"\nimport \"fmt\"\n\nfunc main() { fmt.Println(int(C.val())) }\n",
	})
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("CGO_CFLAGS", "-DVAL=1")
	shIn(t, dir, []string{"GOCACHE=" + filepath.Join(dir, ".gocache")}, "go", "build", "-o", "app", ".")
	app := filepath.Join(dir, "app")
	if fs, code := checkSystems(t, dir); code != 0 || len(find(fs, "pending-rebuild", "")) != 0 {
		t.Fatalf("same environment: exit %d %+v", code, fs)
	}
	t.Setenv("CGO_CFLAGS", "-DVAL=2")
	fs, code := checkSystems(t, dir)
	got := find(fs, "pending-rebuild", app)
	if code != 1 || len(got) != 1 || got[0].Severity != "error" || !strings.Contains(got[0].Message, `CGO_CFLAGS "-DVAL=1" and it is "-DVAL=2"`) {
		t.Fatalf("CGO_CFLAGS changed: exit %d, want one error naming both values: %+v", code, fs)
	}
}

// TestGoBinaryInRepoBin: the module is a subfolder of the repository (app/go.mod) and the program is
// built into the repository's bin/ (go build -o ../bin/app): it is found there by its build info, and
// an edit of a header its cgo code includes from ../include is an error (it was "nothing to judge").
func TestGoBinaryInRepoBin(t *testing.T) {
	needTools(t, "go", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"app/go.mod":    "module example.com/app\n\ngo 1.21\n",
		"app/main.go":   "package main\n\n// #cgo CFLAGS: -I${SRCDIR}/../include\n// #include \"val.h\"\nimport \"C\"\nimport \"fmt\"\n\nfunc main() { fmt.Println(int(C.val())) }\n",
		"include/val.h": "static int val(void) { return 1; }\n",
	})
	mod := filepath.Join(dir, "app")
	shIn(t, mod, []string{"GOCACHE=" + filepath.Join(dir, ".gocache")}, "go", "build", "-o", "../bin/app", ".")
	if fs, code := checkSystems(t, mod); code != 0 || len(fs) != 0 {
		t.Fatalf("clean build: exit %d %+v", code, fs)
	}
	hdr := filepath.Join(dir, "include", "val.h")
	editLater(t, hdr, "/* v2 */ static int val2(void) { return 2; }\n")
	fs, code := checkSystems(t, mod)
	if got := find(fs, "untracked-input-changed", hdr); code != 1 || len(got) != 1 || got[0].Severity != "error" {
		t.Fatalf("header edited: exit %d, want an error naming include/val.h: %+v", code, fs)
	}
	// which, from the binary: no module above it; it says so in Go's words.
	if _, errOut, code := run(t, "which", filepath.Join(dir, "bin", "app")); code != 2 || !strings.Contains(errOut, "is a Go binary of module example.com/app") {
		t.Fatalf("which: exit %d, stderr %q", code, errOut)
	}
}

// TestGoPkgConfigHeader: a cgo preamble takes its include folder from `#cgo pkg-config: vallib`; the
// scan runs pkg-config as go build does, so an edit of the header it finds there (which Go does not
// hash) is an error naming it (it was a warning that pkg-config is not run, with Cargo's fix).
func TestGoPkgConfigHeader(t *testing.T) {
	needTools(t, "go", "cc", "pkg-config")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":                 "module example.com/app\n\ngo 1.21\n",
		"main.go":                "package main\n\n// #cgo pkg-config: vallib\n// #include \"vallib.h\"\nimport \"C\"\nimport \"fmt\"\n\nfunc main() { fmt.Println(int(C.VAL)) }\n",
		"third/include/vallib.h": "#define VAL 1\n",
		"third/pc/vallib.pc":     "prefix=" + filepath.Join(dir, "third") + "\nName: vallib\nDescription: t\nVersion: 1\nCflags: -I${prefix}/include\n",
	})
	t.Setenv("PKG_CONFIG_PATH", filepath.Join(dir, "third", "pc"))
	shIn(t, dir, []string{"GOCACHE=" + filepath.Join(dir, ".gocache")}, "go", "build", "-o", "app", ".")
	if fs, code := checkSystems(t, dir, "--fail-on", "warning"); code != 0 {
		t.Fatalf("clean build: exit %d %+v", code, fs)
	}
	hdr := filepath.Join(dir, "third", "include", "vallib.h")
	editLater(t, hdr, "#undef VAL\n#define VAL 2\n")
	fs, code := checkSystems(t, dir)
	if got := find(fs, "untracked-input-changed", hdr); code != 1 || len(got) != 1 || got[0].Severity != "error" {
		t.Fatalf("header edited: exit %d, want an error naming vallib.h: %+v", code, fs)
	}
}

// TestSymlinkIncludeRetargeted: the include folder inc is a symbolic link to v1; switching it to v2,
// whose val.h is older than main.o, makes make do nothing (the depfile's inc/val.h is not newer), and the
// program is old. A check before the switch recorded the file inc/val.h named then: the path names
// another file now, with other content, and no time of it moved: changed-with-older-mtime says so.
func TestSymlinkIncludeRetargeted(t *testing.T) {
	needTools(t, "make", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"v1/val.h": "#define VAL 1\n", "v2/val.h": "#define VAL 2\n",
		"main.c":   "#include \"val.h\"\nint main(void) { return VAL - 1; }\n",
		"Makefile": "CFLAGS = -MMD -MP -Iinc\napp: main.o\n\t$(CC) -o $@ $^\n-include main.d\n",
	})
	if err := os.Symlink("v1", filepath.Join(dir, "inc")); err != nil {
		t.Fatal(err)
	}
	shIn(t, dir, nil, "make")
	if fs, code := checkSystems(t, dir); code != 0 { // records the baseline of inc/val.h
		t.Fatalf("clean build: exit %d %+v", code, fs)
	}
	os.Remove(filepath.Join(dir, "inc"))
	if err := os.Symlink("v2", filepath.Join(dir, "inc")); err != nil {
		t.Fatal(err)
	}
	if out := shIn(t, dir, nil, "make", "-n"); strings.Contains(out, "main.c") { // the premise
		t.Fatalf("make would rebuild:\n%s", out)
	}
	hdr := filepath.Join(dir, "inc", "val.h")
	fs, code := checkSystems(t, dir)
	got := find(fs, "changed-with-older-mtime", hdr)
	if code != 1 || len(got) != 1 || got[0].Severity != "error" || !strings.Contains(got[0].Message, "names another file") {
		t.Fatalf("include folder switched: exit %d, want an error naming inc/val.h: %+v", code, fs)
	}
}

// TestCMakeGlobNewSource: CMakeLists.txt collects src/*.c with file(GLOB) and no CONFIGURE_DEPENDS; a
// source added after the configure step is compiled by nobody (the build does not configure again):
// an error naming it and the CMakeLists.txt to touch, on both generators; after the fix, nothing.
func TestCMakeGlobNewSource(t *testing.T) {
	for _, gen := range []string{"Unix Makefiles", "Ninja"} {
		t.Run(strings.Fields(gen)[0], func(t *testing.T) {
			tool := "make"
			if gen == "Ninja" {
				tool = "ninja"
			}
			needTools(t, "cmake", tool, "cc")
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(g C)\nfile(GLOB SRCS \"${CMAKE_CURRENT_SOURCE_DIR}/src/*.c\")\nadd_executable(app ${SRCS})\n",
				"src/main.c":     "int extra(void) __attribute__((weak));\nint main(void) { return extra ? extra() : 0; }\n",
			})
			bld := filepath.Join(dir, "build")
			shIn(t, dir, nil, "cmake", "-S", ".", "-B", "build", "-G", gen)
			shIn(t, dir, nil, "cmake", "--build", "build")
			if fs, code := checkSystems(t, bld, "--fail-on", "warning"); code != 0 {
				t.Fatalf("clean build: exit %d %+v", code, fs)
			}
			extra := filepath.Join(dir, "src", "extra.c")
			writeFiles(t, dir, map[string]string{"src/extra.c": "int extra(void) { return 3; }\n"})
			when := time.Now().Add(2 * time.Second)
			os.Chtimes(extra, when, when)
			time.Sleep(time.Until(when) + 10*time.Millisecond)
			shIn(t, dir, nil, "cmake", "--build", "build")
			if out := shIn(t, dir, nil, "find", "build", "-name", "extra.c.o"); strings.TrimSpace(out) != "" { // the premise
				t.Fatalf("the build compiled extra.c: %s", out)
			}
			fs, code := checkSystems(t, bld)
			got := find(fs, "untracked-input-changed", extra)
			if code != 1 || len(got) != 1 || got[0].Severity != "error" || !strings.Contains(got[0].Fix, "CMakeLists.txt") {
				t.Fatalf("a source the glob matches, added after configuring: exit %d, want one error: %+v", code, fs)
			}
			shIn(t, dir, nil, "touch", "CMakeLists.txt")
			shIn(t, dir, nil, "cmake", "--build", "build")
			if fs, code := checkSystems(t, bld, "--fail-on", "warning"); code != 0 || len(find(fs, "untracked-input-changed", extra)) != 0 {
				t.Fatalf("after the fix: exit %d %+v", code, fs) // CMake's progress lines moved: info at most
			}
		})
	}
}

// TestNinjaResponseFileContent: ninja hashes an edge's response file content with its command
// (";rspfile=" and the content): an edit of rspfile_content alone makes it redo the edge, and the
// build judged without a run of ninja -n (which would write the response file) says so; after the
// build, nothing.
func TestNinjaResponseFileContent(t *testing.T) {
	needTools(t, "ninja", "cc")
	dir := t.TempDir()
	manifest := func(val string) string {
		return "rule cc\n  command = cc @$out.rsp -MMD -MF $out.d -c $in -o $out\n  depfile = $out.d\n  deps = gcc\n  rspfile = $out.rsp\n  rspfile_content = -O2 -DVAL=" + val + "\n" +
			"rule link\n  command = cc $in -o $out\nbuild main.o: cc main.c\nbuild app: link main.o\n"
	}
	writeFiles(t, dir, map[string]string{
		"main.c":      "int main(void) { return VAL - 1; }\n",
		"build.ninja": manifest("1"),
	})
	shIn(t, dir, nil, "ninja")
	if fs, code := checkSystems(t, dir, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
		t.Fatalf("fresh build: exit %d %+v", code, fs)
	}
	writeFiles(t, dir, map[string]string{"build.ninja": manifest("2")})
	if out := shIn(t, dir, nil, "ninja", "-n"); !strings.Contains(out, "main.o") {
		t.Fatalf("premise: ninja -n would not redo main.o:\n%s", out)
	}
	os.Remove(filepath.Join(dir, "main.o.rsp")) // what ninja -n wrote
	fs, code := checkSystems(t, dir)
	if p := find(fs, "pending-rebuild", ""); code != 1 || len(p) == 0 || p[0].Severity != "error" {
		t.Fatalf("rspfile_content changed, not built: exit %d %+v", code, fs)
	}
	shIn(t, dir, nil, "ninja")
	if fs, code := checkSystems(t, dir, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
		t.Fatalf("after the build: exit %d %+v", code, fs)
	}
}

// TestNinjaFixNamesNonDefaultTarget: a manifest whose `default` builds app1 only; both programs link
// util.o; after an edit of util.c and a plain ninja, app2 is stale and only a build naming it relinks
// it: the fix names it, and running the fix clears the error.
func TestNinjaFixNamesNonDefaultTarget(t *testing.T) {
	needTools(t, "ninja", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"util.c": "int util(int x) { return x * 3; }\n",
		"m1.c":   "int util(int);\nint main(int c, char **v) { return util(c) - 3; }\n",
		"m2.c":   "int util(int);\nint main(int c, char **v) { return util(c) - 3; }\n",
		"build.ninja": "rule cc\n  command = cc -MD -MF $out.d -c $in -o $out\n  depfile = $out.d\n  deps = gcc\nrule link\n  command = cc $in -o $out\n" +
			"build util.o: cc util.c\nbuild m1.o: cc m1.c\nbuild m2.o: cc m2.c\nbuild app1: link m1.o util.o\nbuild app2: link m2.o util.o\ndefault app1\n",
	})
	shIn(t, dir, nil, "ninja", "app1", "app2")
	editLater(t, filepath.Join(dir, "util.c"), "/* edited */ int util2(void) { return 0; }\n")
	shIn(t, dir, nil, "ninja")
	fs, code := checkSystems(t, dir)
	app2 := filepath.Join(dir, "app2")
	var fix string
	for _, f := range fs {
		if f.Severity == "error" && slices.Contains(f.Subjects, app2) {
			fix = f.Fix
		}
	}
	if code != 1 || fix != "ninja -C "+dir+" app2" {
		t.Fatalf("app2 left stale by the default build: exit %d, fix %q, %+v", code, fix, fs)
	}
	shIn(t, dir, nil, "ninja", "app2")
	if fs, code := checkSystems(t, dir); code != 0 {
		t.Fatalf("after the fix: exit %d %+v", code, fs)
	}
}
