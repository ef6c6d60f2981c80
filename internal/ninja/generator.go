package ninja

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Generator is the configuration tool that wrote a build folder: CMake (CMakeCache.txt; observed
// cmake 3.25) or Meson (meson-info/meson-info.json; observed meson 1.0).
type Generator struct {
	// System is "cmake" or "meson".
	System string
	// Generator is CMake's CMAKE_GENERATOR ("Ninja", "Unix Makefiles", ...) or "Ninja" for Meson.
	Generator string
	// Source is the source folder (CMAKE_HOME_DIRECTORY; Meson's directories.source).
	Source string
	// Record is the file read (CMakeCache.txt or meson-info.json).
	Record string
	// Version is Meson's meson_version.full ("" for CMake: the cache does not hold it reliably).
	Version string
	// Cache holds the CMakeCache.txt entries of interest (compilers, flags, build type), KEY → value.
	Cache map[string]string
	// Intro lists Meson's intro-*.json files in meson-info/.
	Intro []string
	// CompileDB is compile_commands.json in the build folder ("" when absent); CompileEntries reads it
	// when asked (it can be tens of megabytes, and detection runs on every check).
	CompileDB string
	// Err is the record's read error (a damaged cache or JSON), naming the file.
	Err error
	// Meanings maps a record of the tool whose bytes are not reproducible to the file the tool writes
	// with it stating the same settings reproducibly (graph.Input.Meaning). Meson pickles its options
	// into meson-private/coredata.dat, whose set order varies from run to run (a `meson configure` of
	// the value an option already has rewrites other bytes), and writes them as JSON to
	// meson-info/intro-buildoptions.json in the same run (observed meson 1.0).
	Meanings map[string]string
}

// CompileEntry is one compile_commands.json entry (clang's JSON compilation database).
type CompileEntry struct {
	Directory string   `json:"directory"`
	File      string   `json:"file"`
	Output    string   `json:"output"`
	Command   string   `json:"command"`
	Arguments []string `json:"arguments"`
}

var cacheKeys = map[string]bool{"CMAKE_GENERATOR": true, "CMAKE_HOME_DIRECTORY": true, "CMAKE_BUILD_TYPE": true,
	"CMAKE_C_COMPILER": true, "CMAKE_CXX_COMPILER": true, "CMAKE_CUDA_COMPILER": true, "CMAKE_CUDA_HOST_COMPILER": true,
	"CMAKE_C_FLAGS": true, "CMAKE_CXX_FLAGS": true, "CMAKE_CUDA_FLAGS": true, "CMAKE_EXPORT_COMPILE_COMMANDS": true,
	"CMAKE_MAKE_PROGRAM": true, "CMAKE_CACHEFILE_DIR": true}

// DetectGenerator looks for CMakeCache.txt or meson-info/meson-info.json in dir and reads them, and
// compile_commands.json beside them. It returns nil when dir is neither; damage is in Generator.Err.
func DetectGenerator(dir string) *Generator {
	if p := filepath.Join(dir, "CMakeCache.txt"); exists(p) {
		g := &Generator{System: "cmake", Record: p, Cache: map[string]string{}}
		data, err := safeio.ReadFile(p, 64<<20)
		if err != nil {
			g.Err = err
		} else {
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				l := sc.Text()
				if l == "" || l[0] == '#' || strings.HasPrefix(l, "//") {
					continue
				}
				kt, v, ok := strings.Cut(l, "=")
				k, _, _ := strings.Cut(kt, ":")
				if ok && cacheKeys[k] {
					g.Cache[k] = v
				}
			}
			if err := sc.Err(); err != nil {
				g.Err = fmt.Errorf("%s: %w", p, err)
			}
			g.Generator, g.Source = g.Cache["CMAKE_GENERATOR"], g.Cache["CMAKE_HOME_DIRECTORY"]
			if g.Generator == "" && g.Err == nil {
				g.Err = fmt.Errorf("%s: no CMAKE_GENERATOR entry", p)
			}
		}
		g.readCompileDB(dir)
		return g
	}
	if p := filepath.Join(dir, "meson-info", "meson-info.json"); exists(p) {
		g := &Generator{System: "meson", Generator: "Ninja", Record: p}
		var info struct {
			Directories struct {
				Source, Build, Info string
			} `json:"directories"`
			MesonVersion struct {
				Full string `json:"full"`
			} `json:"meson_version"`
			Backend string `json:"backend"`
		}
		data, err := safeio.ReadFile(p, 64<<20)
		if err == nil {
			if err = json.Unmarshal(data, &info); err != nil {
				err = fmt.Errorf("%s: %w", p, err)
			}
		}
		g.Err = err
		g.Source, g.Version = info.Directories.Source, info.MesonVersion.Full
		g.Meanings = map[string]string{
			filepath.Join(dir, "meson-private", "coredata.dat"): filepath.Join(dir, "meson-info", "intro-buildoptions.json"),
		}
		ents, _ := fsrec.ReadDir(filepath.Join(dir, "meson-info"))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "intro-") && strings.HasSuffix(e.Name(), ".json") {
				g.Intro = append(g.Intro, filepath.Join(dir, "meson-info", e.Name()))
			}
		}
		g.readCompileDB(dir)
		return g
	}
	return nil
}

func (g *Generator) readCompileDB(dir string) {
	if p := filepath.Join(dir, "compile_commands.json"); exists(p) {
		g.CompileDB = p
	}
}

// CompileEntries reads the compile_commands.json beside the generator's record (nil, nil when there is
// none); errors name the file.
func (g *Generator) CompileEntries() ([]CompileEntry, error) {
	if g.CompileDB == "" {
		return nil, nil
	}
	data, err := safeio.ReadFile(g.CompileDB, safeio.MaxCache)
	if err != nil {
		return nil, err
	}
	var out []CompileEntry
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", g.CompileDB, err)
	}
	return out, nil
}

func exists(p string) bool {
	_, err := fsrec.Lstat(p)
	return err == nil
}
