// Package cmaketree reads the lists CMake's generators write into a build tree's records
// (CMakeFiles/Makefile.cmake's CMAKE_MAKEFILE_DEPENDS, OUTPUTS and PRODUCTS; a target's
// DependInfo.cmake's CMAKE_DEPENDS_DEPENDENCY_FILES): `set(NAME` on a line of its own, one quoted item
// per line, `)` on a line of its own. The Make reader (a "Unix Makefiles" tree) and the Cargo reader
// (the tree the cmake crate builds in OUT_DIR) share it. It also reads the file(GLOB) calls of a
// project's CMakeLists.txt (glob.go): sources a glob matches that nothing compiles, added after the
// configure step ran, are inputs of that step on every generator.
package cmaketree

import "strings"

// List returns the quoted items of `set(name … )` in text, in order, unquoted (nil when text sets no
// such list). An item may hold any character but a newline, `)` included.
func List(text, name string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "set("+name:
			in = true
		case in && l == ")":
			return out
		case in:
			// Items, each quoted; DependInfo.cmake writes four on one line.
			for l != "" {
				i := strings.IndexByte(l, '"')
				if i < 0 {
					break
				}
				j := strings.IndexByte(l[i+1:], '"')
				if j < 0 {
					break
				}
				out = append(out, l[i+1:i+1+j])
				l = l[i+j+2:]
			}
		}
	}
	return out
}
