package graph

import "path/filepath"

// LinkerPick returns the file GNU ld takes for `-l<name>` given the search folders in order and the
// library files known there (Graph.LibFiles), "" when none holds it. ld walks the folders in order
// and, in each, takes lib<name>.so before lib<name>.a unless the link is static (-Bstatic, rustc's
// `static=` kind), which looks for the .a only (GNU ld manual, "-l namespec" and "-Bdynamic"; observed
// with binutils 2.40 through rustc 1.95: `rustc-link-lib=f` with both files in OUT_DIR links libf.so).
// Folders after the -L ones (LIBRARY_PATH, the compiler's defaults) are searched only when no -L
// folder holds the name, so they never shadow a copy a build script put on the search path.
func LinkerPick(dirs []string, name, kind string, files map[string]FileInfo) string {
	names := []string{"lib" + name + ".so", "lib" + name + ".a"}
	switch kind {
	case "static":
		names = names[1:]
	case "framework":
		return ""
	}
	for _, d := range dirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			if f, ok := files[p]; ok && f.Exists {
				return p
			}
		}
	}
	return ""
}
