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
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Copy is one file an install wrote, and the build-tree file it copied.
type Copy struct {
	Installed, From string
	Record          string // the record that names the pair
}

// Origin is an install step's Origin: the tool that installs and its build folder.
type Origin struct {
	Tool     string // "CMake" or "Meson"
	BuildDir string
	Record   string
}

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
	if o.Tool == "Meson" {
		return "meson install -C " + o.BuildDir
	}
	return "cmake --install " + o.BuildDir
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

var cmakeFiles = regexp.MustCompile(`file\(INSTALL DESTINATION "[^"]*" TYPE [A-Z_]+ (?:[A-Z_]+ )*FILES ((?:"[^"]*" ?)+)`)
var cmakeInclude = regexp.MustCompile(`include\("([^"]+/cmake_install\.cmake)"\)`)

// cmakeCopies pairs the files install_manifest.txt lists with the build-tree files the install scripts
// copy, by file name; a name two sources share is left out (which one went there is not told).
func cmakeCopies(buildDir string) []Copy {
	manifest := filepath.Join(buildDir, "install_manifest.txt")
	data, err := safeio.ReadFile(manifest, safeio.MaxRecord)
	if err != nil {
		return nil
	}
	sources := map[string][]string{} // file name -> build-tree files of that name
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
		for _, m := range cmakeFiles.FindAllSubmatch(text, -1) {
			for _, q := range bytes.Split(bytes.TrimSpace(m[1]), []byte(`" "`)) {
				src := filepath.Clean(strings.Trim(string(q), `"`))
				if filepath.IsAbs(src) {
					base := filepath.Base(src)
					if !contains(sources[base], src) {
						sources[base] = append(sources[base], src)
					}
				}
			}
		}
		for _, m := range cmakeInclude.FindAllSubmatch(text, -1) {
			read(filepath.Clean(string(m[1])))
		}
	}
	read(filepath.Join(buildDir, "cmake_install.cmake"))
	var out []Copy
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		inst := strings.TrimSpace(sc.Text())
		if !filepath.IsAbs(inst) {
			continue
		}
		if src := sources[filepath.Base(inst)]; len(src) == 1 {
			out = append(out, Copy{Installed: filepath.Clean(inst), From: src[0], Record: manifest})
		}
	}
	return out
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
	var m map[string]string
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
	for src, inst := range m {
		if filepath.IsAbs(src) && filepath.IsAbs(inst) && written[filepath.Clean(inst)] {
			out = append(out, Copy{Installed: filepath.Clean(inst), From: filepath.Clean(src), Record: intro})
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Add adds to g, read from buildDir, an install step and a root for each installed copy of a file a step
// of g makes (see the package comment), and marks liveness again. It returns the steps added.
func Add(g *graph.Graph, buildDir string) []*graph.Step {
	tool, copies := Records(buildDir)
	if len(copies) == 0 {
		return nil
	}
	made := map[string]*graph.Step{}
	for _, s := range g.Steps {
		for _, o := range s.Outputs {
			made[o.Path] = s
		}
		if s.Reference.Path != "" && made[s.Reference.Path] == nil {
			made[s.Reference.Path] = s
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
		// The install copies again when the times differ in whole seconds, and CMake gives the copy
		// the whole second only.
		from.MTimeNS -= from.MTimeNS % 1e9
		o := &Origin{Tool: tool, BuildDir: buildDir, Record: c.Record}
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
