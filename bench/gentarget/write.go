package gentarget

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// fsWriter collects the files to write, then writes them in parallel, each with its own mtime, then
// the hard links, then gives every folder the mtime of its newest entry (as a folder's mtime is the
// time its last entry was added), deepest first.
type fsWriter struct {
	files []fileJob
	links []fileJob
	dirs  map[string]int64 // folder -> newest entry mtime (ns)
	root  string           // everything is written under root
}

type fileJob struct {
	path  string
	data  []byte
	mtime time.Time
	mode  os.FileMode
	from  string // hard links: the existing file
}

func newWriter(root string) *fsWriter {
	return &fsWriter{root: root, dirs: map[string]int64{}}
}

func (w *fsWriter) noteDir(p string, t time.Time) {
	ns := t.UnixNano()
	// Each folder holds the newest time of its subtree, so once a folder is at least ns its ancestors are too.
	for d := filepath.Dir(p); len(d) >= len(w.root); d = filepath.Dir(d) {
		if cur, ok := w.dirs[d]; ok && cur >= ns {
			return
		}
		w.dirs[d] = ns
		if d == w.root {
			return
		}
	}
}

// dir records a folder that must exist even if it stays empty.
func (w *fsWriter) dir(p string, t time.Time) {
	if cur, ok := w.dirs[p]; !ok || cur < t.UnixNano() {
		w.dirs[p] = t.UnixNano()
	}
	w.noteDir(p, t)
}

func (w *fsWriter) file(p string, data []byte, t time.Time) {
	w.files = append(w.files, fileJob{path: p, data: data, mtime: t, mode: 0o644})
	w.noteDir(p, t)
}

func (w *fsWriter) exe(p string, data []byte, t time.Time) {
	w.files = append(w.files, fileJob{path: p, data: data, mtime: t, mode: 0o755})
	w.noteDir(p, t)
}

func (w *fsWriter) str(p, s string, t time.Time) { w.file(p, []byte(s), t) }

// link makes p a hard link of from; at is when the link was made (the folder's mtime), not the file's.
func (w *fsWriter) link(p, from string, at time.Time) {
	w.links = append(w.links, fileJob{path: p, from: from, mtime: at})
	w.noteDir(p, at)
}

// countUnder counts files and links whose path lies under dir.
func (w *fsWriter) countUnder(dir string) int {
	n := 0
	pre := dir + string(filepath.Separator)
	for _, f := range w.files {
		if strings.HasPrefix(f.path, pre) {
			n++
		}
	}
	for _, f := range w.links {
		if strings.HasPrefix(f.path, pre) {
			n++
		}
	}
	return n
}

func (w *fsWriter) flush(workers int) error {
	// Folders, shallowest first.
	dirs := make([]string, 0, len(w.dirs))
	for d := range w.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if workers < 1 {
		workers = 4
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan int, 1024)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				f := &w.files[j]
				if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				if err := os.Chtimes(f.path, f.mtime, f.mtime); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for j := range w.files {
		next <- j
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	for _, l := range w.links {
		if err := os.Link(l.from, l.path); err != nil {
			return fmt.Errorf("hard link: %w", err)
		}
	}
	// Folder mtimes, deepest first (setting a child's mtime does not touch its parent's).
	sort.Slice(dirs, func(i, j int) bool {
		return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/")
	})
	for _, d := range dirs {
		t := time.Unix(0, w.dirs[d])
		if err := os.Chtimes(d, t, t); err != nil {
			return err
		}
	}
	return nil
}
