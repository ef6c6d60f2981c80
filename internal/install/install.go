// Package install adds to a build's graph the copies its install step made of the build's programs and
// libraries outside the build folder, as steps of their own.
//
// An install copies what the build made to a prefix (`cmake --install build`, `meson install -C
// build`, CMake's and Meson's install targets), and a build alone never copies again: after an edit and
// a rebuild, build/app is new and prefix/bin/app, which is what a user who installed runs, is the old
// program. The build folder records the install: CMake's install_manifest.txt lists each file the last
// install wrote, and cmake_install.cmake (one per source folder, the top one including the others)
// names the build-tree file each comes from (`file(INSTALL DESTINATION ... FILES "/build/app")`);
// Meson's meson-info/intro-installed.json maps each build-tree file to where it installs, and
// meson-logs/install-log.txt lists what the last install wrote.
//
// Add turns each installed file that exists, and comes from a file a step of the graph makes, into an
// install step: its one input is that file, watched (the install copies it again when its mtime
// differs), its reference and root the installed copy, and its fix the install command. The rules
// then judge it as any other step: a rebuild after the install leaves the copy older than its input
// (pending-rebuild, with `cmake --install build` as the fix). Both tools give the copy the mtime of the
// file they copied (CMake in whole seconds, and it copies again only when the times differ in whole
// seconds), so the input's mtime is taken in whole seconds: a copy made in the second its input was
// written is current.
package install

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Copy is one file an install wrote, and the build-tree file it copied.
type Copy struct {
	Installed, From string
	Record          string // the record that names the pair
	Prefix          string // the prefix it was installed under, when not the one the build is configured with
}

// Origin is an install step's Origin: the tool that installs and its build folder.
type Origin struct {
	Tool     string // "CMake" or "Meson"
	BuildDir string
	Record   string
	Prefix   string // the prefix of the install, when not the one the build is configured with
	// Remove: the copy has the build file's mtime in whole seconds but another size (rebuilt in the
	// second of the install): CMake takes it as up to date, so the fix removes it first.
	Remove string
}

// Copies reports that the step copies its input as it is (graph.Copier): the copy holds what the
// input held when it ran, whatever kind of file it is.
func (o *Origin) Copies() bool { return true }

// Words are the install's words for findings.
func (o *Origin) Words() graph.Words {
	return graph.Words{
		Tool:       o.Tool + "'s install",
		Watched:    "the install copies it again when its mtime differs (a build alone never installs)",
		NotWatched: "the install does not copy it",
		Reference:  "the installed copy, given the mtime of the file it copied at the last install (" + o.Record + ")",
		Rebuild:    o.command(),
		Made:       "installed",
		Remakes:    "a build alone never installs: " + o.command() + " copies it again",
	}
}

// Rebuild is the command that installs again.
func (o *Origin) Rebuild(*graph.Step) string { return o.command() }

// ForceRebuild is the same command: the install copies whatever has another mtime than its copy.
func (o *Origin) ForceRebuild(*graph.Step, string) string { return o.command() }

func (o *Origin) command() string {
	cmd := "cmake --install " + o.BuildDir
	if o.Tool == "Meson" {
		cmd = "meson install -C " + o.BuildDir
	}
	if o.Prefix != "" {
		if o.Tool == "Meson" {
			cmd = "meson configure " + o.BuildDir + " --prefix " + o.Prefix + " && " + cmd
		} else {
			cmd += " --prefix " + o.Prefix
		}
	}
	if o.Remove != "" {
		cmd = "rm " + o.Remove + " && " + cmd
	}
	return cmd
}

// Records returns the copies the install records of buildDir name, with the tool that wrote them ("" and
// nil when there are none).
func Records(buildDir string) (tool string, copies []Copy) {
	if c := cmakeCopies(buildDir); len(c) > 0 {
		return "CMake", c
	}
	if c := mesonCopies(buildDir); len(c) > 0 {
		return "Meson", c
	}
	return "", nil
}

var cmakeFiles = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`file\(INSTALL DESTINATION "([^"]*)" TYPE [A-Z_]+ (?:[A-Z_]+ )*FILES ((?:"[^"]*" ?)+)`)
})
var cmakeInclude = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`include\("([^"]+/cmake_install\.cmake)"\)`) })

// cmakeSource is one file an install script copies, and the folder it copies it to (with
// ${CMAKE_INSTALL_PREFIX} left in).
type cmakeSource struct{ src, dest string }

// cmakeCopies pairs the files install_manifest.txt lists with the build-tree files the install scripts
// copy: by file name, and by destination folder where two sources share a name; a pair that is still
// not told apart is left out.
func cmakeCopies(buildDir string) []Copy {
	manifest := filepath.Join(buildDir, "install_manifest.txt")
	data, err := safeio.ReadFile(manifest, safeio.MaxRecord)
	if err != nil {
		return nil
	}
	sources := map[string][]cmakeSource{} // file name -> the build-tree files of that name
	seen := map[string]bool{}
	var read func(script string)
	read = func(script string) {
		if seen[script] || len(seen) > 10_000 {
			return
		}
		seen[script] = true
		text, err := safeio.ReadFile(script, safeio.MaxRecord)
		if err != nil {
			return
		}
		for _, m := range cmakeFiles().FindAllSubmatch(text, -1) {
			dest := string(m[1])
			for _, q := range bytes.Split(bytes.TrimSpace(m[2]), []byte(`" "`)) {
				src := filepath.Clean(strings.Trim(string(q), `"`))
				if !filepath.IsAbs(src) {
					continue
				}
				cs := cmakeSource{src, dest}
				base := filepath.Base(src)
				if !slices.Contains(sources[base], cs) {
					sources[base] = append(sources[base], cs)
				}
			}
		}
		for _, m := range cmakeInclude().FindAllSubmatch(text, -1) {
			read(filepath.Clean(string(m[1])))
		}
	}
	read(filepath.Join(buildDir, "cmake_install.cmake"))
	prefix := cmakePrefix(buildDir)
	var out []Copy
	for _, line := range strings.Split(string(data), "\n") {
		inst := strings.TrimSpace(line)
		if !filepath.IsAbs(inst) {
			continue
		}
		inst = filepath.Clean(inst)
		var match []cmakeSource
		for _, cs := range sources[filepath.Base(inst)] {
			if destMatches(cs.dest, filepath.Dir(inst)) {
				match = append(match, cs)
			}
		}
		if len(match) != 1 {
			continue
		}
		c := Copy{Installed: inst, From: match[0].src, Record: manifest}
		// Installed under another prefix than the cache's (cmake --install --prefix P): the fix says it.
		if rest, ok := strings.CutPrefix(match[0].dest, "${CMAKE_INSTALL_PREFIX}"); ok && !strings.Contains(rest, "${") {
			p := filepath.Dir(inst)
			if rest != "" {
				p = strings.TrimSuffix(p, filepath.Clean("/"+rest))
			}
			if prefix != "" && p != prefix {
				c.Prefix = p
			}
		}
		out = append(out, c)
	}
	return out
}

// destMatches reports whether an install script's destination folder (${CMAKE_INSTALL_PREFIX}/bin, or
// an absolute folder) can be the folder dir an installed file lies in.
func destMatches(dest, dir string) bool {
	rest, underPrefix := strings.CutPrefix(dest, "${CMAKE_INSTALL_PREFIX}")
	switch {
	case strings.Contains(rest, "${"):
		return true // another variable: not told apart by folder
	case underPrefix:
		return rest == "" || strings.HasSuffix(dir, filepath.Clean("/"+rest))
	}
	return filepath.Clean(dest) == dir
}

// cmakePrefix is CMAKE_INSTALL_PREFIX in the build folder's CMakeCache.txt ("" when not found).
func cmakePrefix(buildDir string) string {
	data, err := safeio.ReadFile(filepath.Join(buildDir, "CMakeCache.txt"), safeio.MaxRecord)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "CMAKE_INSTALL_PREFIX:"); ok {
			if _, val, ok := strings.Cut(v, "="); ok {
				return filepath.Clean(strings.TrimSpace(val))
			}
		}
	}
	return ""
}

// mesonCopies returns the pairs of intro-installed.json whose installed file the last install wrote
// (install-log.txt lists it).
func mesonCopies(buildDir string) []Copy {
	log, err := safeio.ReadFile(filepath.Join(buildDir, "meson-logs", "install-log.txt"), safeio.MaxRecord)
	if err != nil {
		return nil
	}
	intro := filepath.Join(buildDir, "meson-info", "intro-installed.json")
	data, err := safeio.ReadFile(intro, safeio.MaxRecord)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	written := map[string]bool{}
	for _, l := range strings.Split(string(log), "\n") {
		if l = strings.TrimSpace(l); filepath.IsAbs(l) {
			written[filepath.Clean(l)] = true
		}
	}
	var out []Copy
	for src, v := range m {
		inst, ok := v.(string) // a value of another kind says nothing of this pair alone
		if ok && filepath.IsAbs(src) && filepath.IsAbs(inst) && written[filepath.Clean(inst)] {
			out = append(out, Copy{Installed: filepath.Clean(inst), From: filepath.Clean(src), Record: intro})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Installed < out[j].Installed })
	return out
}

// Add adds to g, read from buildDir, an install step and a root for each installed copy of a file a step
// of g makes (see the package comment), and marks liveness again. It returns the steps added.
func Add(g *graph.Graph, buildDir string) []*graph.Step {
	tool, copies := Records(buildDir)
	if len(copies) == 0 {
		return nil
	}
	made := map[string]*graph.Step{}
	note := func(p string, s *graph.Step) {
		if p != "" && made[p] == nil {
			made[p] = s
		}
	}
	for _, s := range g.Steps {
		for _, o := range s.Outputs {
			note(o.Path, s)
		}
		note(s.Reference.Path, s)
	}
	for p, s := range made {
		// A library's links (libk.so -> libk.so.1 -> libk.so.1.2.3): the file they name is the step's.
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			note(r, s)
		}
	}
	var added []*graph.Step
	for _, c := range copies {
		prod := made[c.From]
		if prod == nil {
			continue // a source file, a header: not a program the build makes
		}
		ref := stat(c.Installed)
		if !ref.Exists {
			continue // removed since: nothing installed to judge
		}
		from := stat(c.From)
		o := &Origin{Tool: tool, BuildDir: buildDir, Record: c.Record, Prefix: c.Prefix}
		if tool == "CMake" {
			// CMake gives the copy the mtime of what it copied in whole seconds, and copies again only
			// when they differ in whole seconds: the input's is taken in whole seconds, unless the
			// sizes show that the copy is of another build made in that second.
			sec := from.MTimeNS - from.MTimeNS%1e9
			if sec == ref.MTimeNS && from.Size != ref.Size && from.MTimeNS > ref.MTimeNS {
				o.Remove = c.Installed
			} else {
				from.MTimeNS = sec
			}
		}
		s := &graph.Step{
			System: prod.System, Kind: graph.Compile, Label: "install of " + filepath.Base(c.From),
			Name: "install", Origin: o,
			Reference: ref, Outputs: []graph.FileInfo{ref},
			Inputs: []*graph.Input{{File: from, How: []graph.How{graph.Declared}, Detail: []string{c.Record}, Watched: true,
				WatchedBy: "installed from it, as " + c.Record + " records"}},
			Deps: []*graph.Step{prod},
		}
		prod.Dependents = append(prod.Dependents, s)
		kind := "bin"
		if b := filepath.Base(c.Installed); strings.HasSuffix(b, ".a") || strings.HasSuffix(b, ".so") || strings.Contains(b, ".so.") {
			kind = "lib"
		}
		g.Steps = append(g.Steps, s)
		g.Roots = append(g.Roots, &graph.Root{File: ref, Kind: kind, Step: s, TiedBy: "install-record"})
		added = append(added, s)
	}
	if len(added) > 0 {
		for _, s := range g.Steps {
			s.Roots = nil
		}
		g.MarkLive()
	}
	return added
}

func stat(p string) graph.FileInfo {
	fi := graph.FileInfo{Path: p}
	if info, err := fsrec.Stat(p); err == nil && info.Mode().IsRegular() {
		fi.Exists, fi.Size, fi.MTimeNS = true, info.Size(), info.ModTime().UnixNano()
	}
	return fi
}
