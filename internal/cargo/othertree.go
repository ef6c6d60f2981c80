package cargo

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
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
	sep := string(filepath.Separator)
	under := func(p, dir string) bool { return dir != "" && (p == dir || strings.HasPrefix(p, dir+sep)) }
	votes := map[string]int{}
	evidence := map[string]string{}
	for _, p := range bo.AbsPaths {
		p = filepath.Clean(p)
		if under(p, ws) || under(p, r.l.TargetDir) || under(p, r.l.BuildDir) || under(p, r.opt.CargoHome) {
			continue
		}
		parts := strings.Split(p, sep)
		for k := len(parts) - 1; k >= 2; k-- {
			tree := sep + filepath.Join(parts[1:k]...)
			rel := filepath.Join(parts[k:]...)
			if under(ws, tree) {
				break // an ancestor of this workspace is not another copy of it
			}
			if _, err := fsrec.Stat(filepath.Join(ws, parts[k])); err != nil {
				continue
			}
			if _, err := fsrec.Stat(filepath.Dir(filepath.Join(ws, rel))); err != nil {
				continue
			}
			if _, err := fsrec.Stat(filepath.Join(tree, "Cargo.toml")); err != nil {
				continue // not a workspace root
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
		return
	}
	sort.Slice(trees, func(i, j int) bool {
		return votes[trees[i]] > votes[trees[j]] || votes[trees[i]] == votes[trees[j]] && trees[i] < trees[j]
	})
	u := unit.Of(s)
	u.BuiltInTree, u.BuiltInTreeEvidence = trees[0], evidence[trees[0]]
	// Inputs are read from this workspace (Cargo's records are relative) or from the other tree (paths
	// the output names): each is compared with its counterpart in the other one.
	for _, in := range s.Inputs {
		p := in.File.Path
		if rel, err := filepath.Rel(ws, p); err == nil && !strings.HasPrefix(rel, "..") {
			if !sameBytes(p, filepath.Join(trees[0], rel)) {
				u.OtherTreeDiffers = append(u.OtherTreeDiffers, p)
			}
		} else if rel, err := filepath.Rel(trees[0], p); err == nil && !strings.HasPrefix(rel, "..") {
			if here := filepath.Join(ws, rel); !sameBytes(p, here) {
				u.OtherTreeDiffers = append(u.OtherTreeDiffers, here)
			}
		}
	}
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
