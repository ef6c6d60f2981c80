package makefile

import (
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cmaketree"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
	"github.com/stalecheck/stalecheck/internal/sysdirs"
)

// CMake's "Unix Makefiles" generator writes no make rule for its own configure step. The top Makefile's
// `all` depends on the phony cmake_check_build_system, whose recipe runs `cmake --check-build-system
// CMakeFiles/Makefile.cmake`: CMake reads the lists that file sets (CMAKE_MAKEFILE_DEPENDS: the
// CMakeLists.txt files, configure_file templates, the cache; CMAKE_MAKEFILE_OUTPUTS: Makefile and
// CMakeFiles/cmake.check_cache; CMAKE_MAKEFILE_PRODUCTS: what configure_file wrote, config.h) and runs
// the configure step again when a dependency is newer than the oldest output. So a template or
// CMakeLists.txt edit is pending for every build of the tree, though no rule make reads says so.
//
// cmakeConfigure gives that step to the graph of the tree's top Makefile: one step whose inputs are
// the dependencies outside the system's folders (watched), whose outputs are the outputs and products,
// and whose reference is the oldest output; every step of the tree keeps it live (the sub-makes'
// steps through internal/systems, which ties the steps of a recursive make to the step that makes its
// top makefile, as GNU make remakes a makefile before it reads it).

// cmakeConfigure returns the configure step of the CMake tree whose top Makefile b read, nil when b's
// folder is no such tree (or b read another makefile of it: Makefile2, a build.make).
func (b *Build) cmakeConfigure() *graph.Step {
	if b.Folder == nil || filepath.Base(b.Folder.Makefile) != "Makefile" {
		return nil
	}
	info := filepath.Join(b.Folder.Dir, "CMakeFiles", "Makefile.cmake")
	data, err := safeio.ReadFile(info, safeio.MaxRecord)
	if err != nil {
		return nil
	}
	text := string(data)
	if !strings.Contains(text, `set(CMAKE_DEPENDS_GENERATOR "Unix Makefiles")`) {
		return nil
	}
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join(b.Folder.Dir, p)
		}
		return filepath.Clean(p)
	}
	outputs := cmaketree.List(text, "CMAKE_MAKEFILE_OUTPUTS")
	if len(outputs) == 0 {
		return nil
	}
	s := &graph.Step{System: System, ID: "make:cmake-configure:" + b.Folder.Dir, Kind: graph.Compile,
		Name: "cmake-configure", Label: "CMake's configure step", RecordDir: filepath.Dir(info), PathPackage: true,
		Origin: &cmakeOrigin{dir: b.Folder.Dir, info: info}}
	s.Reference = graph.FileInfo{Exists: true}
	for _, o := range outputs {
		st := b.stat(abs(o))
		s.Outputs = append(s.Outputs, fileInfo(st))
		if !st.Exists {
			s.Reference = graph.FileInfo{Path: st.Path}
		} else if s.Reference.Exists && (s.Reference.Path == "" || st.MTimeNS < s.Reference.MTimeNS) {
			s.Reference = fileInfo(st)
		}
	}
	for _, p := range cmaketree.List(text, "CMAKE_MAKEFILE_PRODUCTS") {
		if st := b.stat(abs(p)); st.Exists {
			s.Outputs = append(s.Outputs, fileInfo(st))
		}
	}
	for _, p := range cmaketree.List(text, "CMAKE_MAKEFILE_DEPENDS") {
		p = abs(p)
		if sysdirs.System(p, b.Folder.Dir) {
			continue // CMake's own modules: an upgrade of CMake, not an edit of the project
		}
		s.Inputs = append(s.Inputs, &graph.Input{File: fileInfo(b.stat(p)), How: []graph.How{graph.Declared},
			Detail: []string{"CMAKE_MAKEFILE_DEPENDS in " + info}, Watched: true,
			WatchedBy: "CMAKE_MAKEFILE_DEPENDS in " + info})
	}
	return s
}

// cmakeTree reports whether dir is the top of a CMake "Unix Makefiles" build tree.
func cmakeTree(dir string) bool {
	return fileExists(filepath.Join(dir, "CMakeFiles", "Makefile.cmake"))
}

// cmakeOrigin is the configure step's Origin: CMake's words and its rebuild command.
type cmakeOrigin struct{ dir, info string }

var _ interface {
	graph.Worded
	graph.Rebuilder
} = (*cmakeOrigin)(nil)

func (o *cmakeOrigin) Words() graph.Words {
	return graph.Words{
		Tool:       "CMake",
		Watched:    "CMake lists it in CMAKE_MAKEFILE_DEPENDS (" + o.info + "), and every make of the tree runs cmake --check-build-system first",
		NotWatched: "CMake does not list it in CMAKE_MAKEFILE_DEPENDS (" + o.info + ")",
		Reference:  "the oldest of CMAKE_MAKEFILE_OUTPUTS, whose mtime cmake --check-build-system compares the dependencies against",
	}
}

func (o *cmakeOrigin) Rebuild(*graph.Step) string { return "cmake --build " + o.dir }

func (o *cmakeOrigin) ForceRebuild(_ *graph.Step, input string) string {
	return "name " + filepath.Base(input) + " in the CMake project (configure_file, CMAKE_CONFIGURE_DEPENDS), then: cmake " + o.dir
}
