// Package makefile reads a folder built by GNU make without building anything: which objects,
// archives and programs its rules make, what make knows each one depends on, what the compiler says
// it really read, and where the two disagree.
//
//   - detect.go: Detect finds the makefile GNU make would read (GNUmakefile, makefile, Makefile) and
//     the built files next to it or up to two folders below (objects, archives, shared libraries, ELF
//     programs).
//   - query.go: RunMake learns the rules from GNU make's data base (`make -p -q -n -k`, two passes,
//     under a deadline, with a guard makefile that makes every recipe fail to start; the doc comment
//     says what was verified about what make runs under -n and -q).
//   - database.go: ParseDatabase parses that data base (GNU make 4.3's print_data_base layout,
//     C locale): the makefiles read (MAKEFILE_LIST), variables with their origin, and the "# Files"
//     section with prerequisites, recipes, "# Not a target", target-specific variables and make's -q
//     verdict per file.
//   - read.go: Read joins the data base with the disk: Steps (compile, archive, link) with declared
//     inputs (make's prerequisites), discovered inputs (the `.d` file through internal/depfile,
//     DWARF compile units and archive members through internal/binfmt), the output's mtime as the
//     reference; and Facts: missing-depfile, untracked-input-changed, pending-rebuild,
//     binary-older-than-input, archive-member-without-rule, each with paths and mtimes in nanoseconds.
//   - graph.go: ReadGraph and Build.Graph turn a Build into the neutral graph (internal/graph), with an
//     Origin per step that supplies Make's words and fix commands.
//
// The reader has its own types; only graph.go uses the neutral graph.
package makefile
