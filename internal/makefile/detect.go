package makefile

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Folder is a folder built by Make: its makefile and the built files that show make has run there.
type Folder struct {
	Dir      string // absolute, cleaned
	Makefile string // absolute path of the makefile GNU make reads by default in Dir
	// Built lists the objects (.o), archives (.a), shared libraries (.so) and ELF programs found in Dir
	// and in its subfolders up to two levels down (hidden folders skipped, symlinks not followed),
	// sorted; at most maxBuilt entries.
	Built []string
}

// MakeCommand is the make that builds the folder: `make -C DIR`, with `-f` when the makefile lies
// outside it (an out-of-tree build folder).
func (f *Folder) MakeCommand() string {
	if filepath.Dir(f.Makefile) == f.Dir || strings.HasPrefix(f.Makefile, f.Dir+string(filepath.Separator)) {
		return "make -C " + f.Dir
	}
	mk := f.Makefile
	if rel, err := filepath.Rel(f.Dir, mk); err == nil {
		mk = rel
	}
	return "make -C " + f.Dir + " -f " + mk
}

// makefileNames is GNU make's own search order (make manual, "What Name to Give Your Makefile").
var makefileNames = []string{"GNUmakefile", "makefile", "Makefile"}

const maxBuilt = 10000

// Detect reports whether dir is a folder built by Make: a GNUmakefile, makefile or Makefile (the one
// make would read) with at least one built object, archive, shared library or ELF program next to it
// or in its output folders. It returns (nil, nil) when dir is not one (no makefile, or nothing built
// yet), an error naming the path when dir cannot be read.
func Detect(dir string) (*Folder, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	st, err := fsrec.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "detect", Path: abs, Err: errors.New("not a folder")}
	}
	f := &Folder{Dir: filepath.Clean(abs)}
	for _, n := range makefileNames {
		p := filepath.Join(f.Dir, n)
		if err := safeio.Regular(p); err == nil {
			f.Makefile = p
			break
		}
	}
	if f.Makefile == "" {
		// An out-of-tree build folder (`make -C build -f ../Makefile`): no makefile of its own, the
		// makefile in a folder above, the built files here.
		for d, up := filepath.Dir(f.Dir), 0; up < 2 && d != filepath.Dir(d); d, up = filepath.Dir(d), up+1 {
			for _, n := range makefileNames {
				if p := filepath.Join(d, n); safeio.Regular(p) == nil {
					f.Makefile = p
					break
				}
			}
			if f.Makefile != "" {
				break
			}
		}
		if f.Makefile == "" {
			return nil, nil
		}
	}
	err = walkBuilt(f.Dir, 0, func(p string) bool {
		f.Built = append(f.Built, p)
		return len(f.Built) < maxBuilt
	})
	if err != nil {
		return nil, err
	}
	if len(f.Built) == 0 {
		return nil, nil
	}
	sort.Strings(f.Built)
	return f, nil
}

func walkBuilt(dir string, depth int, add func(string) bool) error {
	ents, err := fsrec.ReadDir(dir)
	if err != nil {
		if depth > 0 && errors.Is(err, fs.ErrPermission) {
			return nil
		}
		return err
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			if depth < 2 && !strings.HasPrefix(e.Name(), ".") {
				if err := walkBuilt(p, depth+1, add); err != nil {
					return err
				}
			}
			continue
		case !e.Type().IsRegular():
			continue
		}
		if isBuiltName(e.Name()) || isELF(p) {
			if !add(p) {
				return nil
			}
		}
	}
	return nil
}

func isBuiltName(n string) bool {
	switch filepath.Ext(n) {
	case ".o", ".a", ".so", ".obj", ".lo", ".la":
		return true
	}
	return strings.Contains(n, ".so.")
}

// isELF reads the first four bytes of an executable regular file.
func isELF(p string) bool {
	st, err := fsrec.Stat(p)
	if err != nil || st.Mode().Perm()&0o111 == 0 || st.Size() < 64 {
		return false
	}
	fh, err := safeio.Open(p)
	if err != nil {
		return false
	}
	defer fh.Close()
	var b [4]byte
	if _, err := fh.ReadAt(b[:], 0); err != nil {
		return false
	}
	return string(b[:]) == "\x7fELF"
}
