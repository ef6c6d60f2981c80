package cargo

import (
	"bytes"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/depfile"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// otherTree finds whether a build-script run was executed in another copy of this workspace that
// shares the target folder (two git worktrees with one CARGO_TARGET_DIR, nubjs/nub #614). Cargo hashes
// a path package by its path relative to the workspace root, so the copies' units share hashes, and a
// run made in one tree is Fresh in the other while the sources there are not newer (Cargo's dep-info
// and rustc's own keep workspace-relative paths, so they do not tell). What does tell is the absolute
// paths the run's output names (its CARGO_MANIFEST_DIR in a rustc-env value, the sources on its logged
// compiler commands): a path outside this workspace at tree/rel whose rel exists in this workspace
// (its first component and its folder) names tree as where the run was made; the tree most paths
// name wins. Its sources whose bytes differ between the trees are OtherTreeDiffers.
func (r *reader) otherTree(s *graph.Step, bo *BuildOutput) {
	ws := r.l.Workspace
	if ws == "" || !s.Live() || unit.Of(s).MovedFrom != "" {
		// A run whose root-output names another OUT_DIR is in a target folder that was moved or copied
		// with its tree (cp -a): its old paths name where the whole tree was, not a second copy sharing it.
		return
	}
	// The paths its output names, then those its inputs name outside this workspace (the DWARF of the
	// objects in OUT_DIR: cc compiles in the script's package folder, so that of the tree it ran in).
	paths := bo.AbsPaths
	sep := string(filepath.Separator)
	for _, in := range s.Inputs {
		if p := in.File.Path; !strings.HasPrefix(p, ws+sep) {
			paths = append(paths, p)
		}
	}
	tree, ev := r.treeOf(paths)
	if tree == "" {
		return
	}
	trees := []string{tree}
	u := unit.Of(s)
	u.OwnOtherTree().BuiltInTree, u.OwnOtherTree().BuiltInTreeEvidence = tree, ev
	u.OwnOtherTree().BuiltInTreeDWARF = !slices.Contains(bo.AbsPaths, ev)
	// Inputs are read from this workspace (Cargo's records are relative) or from the other tree (paths
	// the output names): each is compared with its counterpart in the other one.
	for _, in := range s.Inputs {
		p := in.File.Path
		if rel, err := filepath.Rel(ws, p); err == nil && !strings.HasPrefix(rel, "..") {
			if !sameBytes(p, filepath.Join(trees[0], rel)) {
				u.OwnOtherTree().OtherTreeDiffers = append(u.OwnOtherTree().OtherTreeDiffers, p)
			}
		} else if rel, err := filepath.Rel(trees[0], p); err == nil && !strings.HasPrefix(rel, "..") {
			if here := filepath.Join(ws, rel); !sameBytes(p, here) {
				u.OwnOtherTree().OtherTreeDiffers = append(u.OwnOtherTree().OtherTreeDiffers, here)
			}
		}
	}
}

// treeOf names the other copy of this workspace that absolute paths point into: a path outside this
// workspace (and the target, build and Cargo home folders) at tree/rel whose rel exists here (its
// first component and its folder) and whose tree's Cargo.toml has the bytes of this workspace's; the tree most paths name wins
// (ties: the first by name). It returns "" when none does, else the tree and the first path naming it.
func (r *reader) treeOf(paths []string) (string, string) {
	ws := r.l.Workspace
	// p is dir or below it (details.go's under, which makes no dir+sep string for every path).
	within := func(p, dir string) bool { return dir != "" && (p == dir || under(p, dir)) }
	votes := map[string]int{}
	evidence := map[string]string{}
	for _, p := range paths {
		p = filepath.Clean(p)
		if !filepath.IsAbs(p) || within(p, ws) || within(p, r.l.TargetDir) || within(p, r.l.BuildDir) || within(p, r.opt.CargoHome) {
			continue
		}
		// Each "/" of p (but the first) splits it into tree and rel, the last split first; the cut is
		// made on p's bytes (p is clean), since most splits end at the first probe.
		for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
			tree, rel := p[:i], p[i+1:]
			if within(ws, tree) {
				break // an ancestor of this workspace is not another copy of it
			}
			first, relDir := rel, ""
			if j := strings.IndexByte(rel, '/'); j >= 0 {
				first = rel[:j]
			}
			if j := strings.LastIndexByte(rel, '/'); j >= 0 {
				relDir = rel[:j]
			}
			if r.probe(joinClean(ws, first)) != nil {
				continue
			}
			if r.probe(joinClean(ws, relDir)) != nil {
				continue
			}
			if !sameBytes(filepath.Join(tree, "Cargo.toml"), filepath.Join(ws, "Cargo.toml")) {
				// Not a copy of this workspace: a package folder of its own (a [patch] path, a vendored
				// registry copy) whose files a binary's dep-info names too, or another project.
				continue
			}
			votes[tree]++
			if evidence[tree] == "" {
				evidence[tree] = p
			}
			break
		}
	}
	var trees []string
	for t := range votes {
		trees = append(trees, t)
	}
	if len(trees) == 0 {
		return "", ""
	}
	sort.Slice(trees, func(i, j int) bool {
		return votes[trees[i]] > votes[trees[j]] || votes[trees[i]] == votes[trees[j]] && trees[i] < trees[j]
	})
	return trees[0], evidence[trees[0]]
}

// rootsOtherTree: an uplifted binary (target/<profile>/<name>) whose own dep-info, `<name>.d`, which
// Cargo rewrites with absolute paths each time it uplifts the file, names the sources of another copy
// of this workspace: a build of that copy with this target folder (CARGO_TARGET_DIR) replaced the
// binary here, from units of its own (measured with cargo 1.95: the copy's path packages got other unit
// hashes, so this workspace's units stay intact and Fresh, and its next no-op build leaves the copy's
// binary in place). The root's unit gets BuiltInTree; the sources the .d names whose bytes differ
// between the copies are OtherTreeDiffers (here's path). Skipped when the .d's target is not the root's
// own path: then the whole target folder was moved or copied (cp -a), and the paths name where it was.
//
// When the .d names this workspace (a no-op build here rewrote it, and left the other copy's binary in
// place), the binary's DWARF compile units tell where it was compiled (dwarfTree; BuiltInTreeDWARF):
// not for a target folder that was moved or copied with its workspace (a run's root-output names
// another OUT_DIR: MovedFrom), whose binaries name where the whole tree was.
func (r *reader) rootsOtherTree() {
	if r.l.Workspace == "" {
		return
	}
	moved := false
	for _, s := range r.g.Steps {
		if unit.Of(s).MovedFrom != "" {
			moved = true
			break
		}
	}
	var roots []*graph.Root
	for _, root := range r.g.Roots {
		if root.Step == nil || root.Kind == "lib" || root.Kind == "test" || unit.Of(root.Step).OtherTree().BuiltInTree != "" {
			continue
		}
		roots = append(roots, root)
	}
	// Each root's dep-info and debug info are read on the cores at once (treeOf's probes are shared);
	// what they say is applied in root order, since a tree said for one unit of a package is not said
	// again for another (treeReported).
	found := make([]rootTree, len(roots))
	Parallel(len(roots), func(i int) { found[i] = r.rootTree(roots[i], moved) })
	for i, root := range roots {
		f := found[i]
		// A root of a unit an earlier root already said a tree of is left alone, as is a tree said for
		// another unit of the package.
		if f.tree == "" || unit.Of(root.Step).OtherTree().BuiltInTree != "" || f.dwarf && r.treeReported(root.Step.Package, f.tree) {
			continue
		}
		u := unit.Of(root.Step)
		in := f.in
		if f.dwarf {
			u.OwnOtherTree().BuiltInTreeDWARF = true
			u.OwnOtherTree().BuiltInTreeRecord = root.File.Path
			// The unit's own inputs (dep-info, this workspace's paths: include_str! files too, which no
			// line table names) are compared with that tree's as well.
			for _, i := range root.Step.Inputs {
				if rel, err := filepath.Rel(r.l.Workspace, i.File.Path); err == nil && !strings.HasPrefix(rel, "..") {
					in = append(in, filepath.Join(f.tree, rel))
				}
			}
		} else {
			u.OwnOtherTree().BuiltInTreeRecord = root.File.Path + ".d"
		}
		u.OwnOtherTree().BuiltInTree, u.OwnOtherTree().BuiltInTreeEvidence = f.tree, f.ev
		seen := map[string]bool{}
		for _, p := range in {
			if seen[p] {
				continue
			}
			seen[p] = true
			rel, err := filepath.Rel(f.tree, p)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			if here := filepath.Join(r.l.Workspace, rel); !sameBytes(p, here) {
				u.OwnOtherTree().OtherTreeDiffers = append(u.OwnOtherTree().OtherTreeDiffers, here)
			}
		}
	}
}

// rootTree is what a root's records say of the tree it was built in: tree "" for this workspace (or
// nothing to tell), in the sources named there, dwarf when the debug info said it (dwarfTree).
type rootTree struct {
	tree, ev string
	in       []string
	dwarf    bool
}

// rootTree reads the tree root was built in from its `<name>.d`, then, when that names this
// workspace and the target folder was not moved with it, from its debug info.
func (r *reader) rootTree(root *graph.Root, moved bool) rootTree {
	// Only the bytes matter here, and Cargo rewrites them unchanged on every no-op build: read as
	// content, so that rewrite keeps a cached verdict valid.
	data, err := safeio.ReadContent(root.File.Path+".d", safeio.MaxRecord)
	var df *depfile.File
	if err == nil {
		df, err = depfile.Parse(bytes.NewReader(data))
	}
	if err != nil || len(df.Rules) == 0 || !slices.Contains(df.Rules[0].Targets, root.File.Path) {
		return rootTree{}
	}
	in := df.Inputs()
	if tree, ev := r.treeOf(in); tree != "" {
		return rootTree{tree: tree, ev: ev, in: in}
	}
	// The .d names this workspace; a no-op build here rewrites it so, and leaves a binary that a build
	// of another copy put there in place. Its debug info still says where it was compiled.
	if moved {
		return rootTree{}
	}
	tree, ev, files := r.dwarfTree(root.File.Path)
	return rootTree{tree: tree, ev: ev, in: files, dwarf: tree != ""}
}

// treeReported says whether a live unit of package pkg already has BuiltInTree tree (a build-script run
// made there, otherTree): the binary compiled there is the same fault, said once.
func (r *reader) treeReported(pkg, tree string) bool {
	for _, s := range r.g.Steps {
		if s.Package == pkg && s.Live() && unit.Of(s).OtherTree().BuiltInTree == tree {
			return true
		}
	}
	return false
}

// dwarfTree reads the DWARF compile units of the executable at bin (its first entries only, through a
// read-only mapping: binfmt.UnitSources) and names the other copy of this workspace that their sources
// (comp_dir joined with the unit's name; rustc names a unit "src/main.rs/@/<codegen unit>") lie in,
// by treeOf; "" when none does, or the file has no debug info. files are the line-table files of the
// units compiled there. Units of the standard library (/rustc/<commit>) and of packages outside the
// workspace's copies never vote.
func (r *reader) dwarfTree(bin string) (tree, ev string, files []string) {
	units, f, err := r.native.unitNames(bin)
	if f != nil {
		defer f.Close()
	}
	if err != nil || len(units) == 0 {
		return "", "", nil
	}
	var srcs []string
	for _, u := range units {
		name, _, _ := strings.Cut(u[0], "/@/")
		compDir := u[1]
		if compDir == "" || strings.HasPrefix(compDir, "/rustc/") || name == "" {
			continue
		}
		if !filepath.IsAbs(name) {
			name = filepath.Join(compDir, name)
		}
		srcs = append(srcs, name)
	}
	if tree, ev = r.treeOf(srcs); tree == "" {
		return "", "", nil
	}
	// The line tables of the units built in the other tree (a rare case: a copy of the workspace
	// built elsewhere), through the cache.
	return tree, ev, r.native.treeFiles(bin, tree, f)
}

// joinClean is filepath.Join(dir, rel) for a clean absolute dir and a clean relative rel ("" for dir
// itself), without cleaning again.
func joinClean(dir, rel string) string {
	switch {
	case rel == "":
		return dir
	case strings.HasSuffix(dir, "/"):
		return dir + rel
	}
	return dir + "/" + rel
}

// sameBytes reports whether two files hold the same bytes: false when either is unreadable or they
// differ in kind or size; true for two folders (an input folder's files are inputs of their own).
func sameBytes(a, b string) bool {
	sa, errA := fsrec.Stat(a)
	sb, errB := fsrec.Stat(b)
	if errA != nil || errB != nil {
		return false
	}
	if sa.IsDir() || sb.IsDir() {
		return sa.IsDir() && sb.IsDir()
	}
	if !sa.Mode().IsRegular() || !sb.Mode().IsRegular() || sa.Size() != sb.Size() {
		return false
	}
	da, errA := safeio.ReadFile(a, safeio.MaxRecord)
	db, errB := safeio.ReadFile(b, safeio.MaxRecord)
	return errA == nil && errB == nil && bytes.Equal(da, db)
}
