package gentarget

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Binaries. Every bin unit's executable is really linked by the C compiler driver from a stand-in for
// the Rust code (main and BinRodataKB KiB of distinct string literals in .rodata) and, whole, the
// OUT_DIR static library of every build-script run the unit reaches through its fingerprint deps: the
// copy of its own configuration, as rustc's link would take it. So content evidence (which copy of a
// duplicated library a binary holds) can be proven from the bytes. Without a C compiler the binaries
// stay placeholders that are not ELF.

type binLink struct {
	u     *unit
	path  string
	mtime time.Time
}

// archivePath is the static library a run's build script tells rustc to link.
func (g *gen) archivePath(r *unit) string {
	if r.p.style == stCMake {
		return filepath.Join(g.outDir(r), "lib", "lib"+r.p.lib+".a")
	}
	return filepath.Join(g.outDir(r), "lib"+r.p.lib+".a")
}

// linkedArchives lists the archives of the runs a unit reaches, sorted by package name.
func (g *gen) linkedArchives(u *unit) []string {
	seen := map[*unit]bool{}
	var runs []*unit
	var walk func(x *unit)
	walk = func(x *unit) {
		if seen[x] {
			return
		}
		seen[x] = true
		if x.kind == uRun {
			runs = append(runs, x)
		}
		for _, d := range x.deps {
			walk(d.u)
		}
	}
	walk(u)
	sort.Slice(runs, func(i, j int) bool { return runs[i].p.name < runs[j].p.name })
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = g.archivePath(r)
	}
	return out
}

func rustSource(kb int) string {
	var b strings.Builder
	b.WriteString("/* Stand-in for a binary's Rust code (stalecheck bench fixture). */\nstatic const char *const scg_rust_strings[] = {\n")
	n := 0
	for i := 0; b.Len() < kb*1024; i++ {
		fmt.Fprintf(&b, "\t\"called `Option::unwrap()` on a `None` value at crates/%s/src/m%d.rs:%d:%d\",\n", words[i%len(words)], i/len(words), i%997+1, i%89+1)
		n++
	}
	b.WriteString("};\nconst char *const *scg_rust_table(void) { return scg_rust_strings; }\n")
	fmt.Fprintf(&b, "int main(int argc, char **argv) { (void)argv; return argc > %d ? scg_rust_table()[argc][0] : 0; }\n", n)
	return b.String()
}

// linkBins links every recorded binary and writes it over its placeholder (same inode, so the uplifted
// hard link sees it), with the unit's mtime. It reports whether the binaries are real.
func (g *gen) linkBins() (bool, error) {
	if !g.objs.elf || g.objs.cc == "" || len(g.binLinks) == 0 {
		return false, nil
	}
	tmp, err := os.MkdirTemp("", "scg-link-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "rust.c"), []byte(rustSource(g.opt.BinRodataKB)), 0o644); err != nil {
		return false, err
	}
	cmd := exec.Command(g.objs.cc, "-O1", "-fPIC", "-c", "rust.c", "-o", "rust.o")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		g.logf("cannot compile the binaries' stand-in code (%v: %s); binaries stay placeholders", err, out)
		return false, nil
	}
	g.logf("linking %d binaries", len(g.binLinks))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 4)
	for i, bl := range g.binLinks {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, bl binLink) {
			defer wg.Done()
			defer func() { <-sem }()
			out := filepath.Join(tmp, fmt.Sprintf("bin%d", i))
			args := []string{"-o", out, filepath.Join(tmp, "rust.o"), "-Wl,--whole-archive"}
			args = append(args, g.linkedArchives(bl.u)...)
			args = append(args, "-Wl,--no-whole-archive")
			cmd := exec.Command(g.objs.cc, args...)
			msg, err := cmd.CombinedOutput()
			if err == nil {
				var data []byte
				if data, err = os.ReadFile(out); err == nil {
					// O_TRUNC keeps the inode: the uplifted hard link keeps pointing at it.
					if err = os.WriteFile(bl.path, data, 0o755); err == nil {
						err = os.Chtimes(bl.path, bl.mtime, bl.mtime)
					}
				}
				os.Remove(out)
			} else {
				err = fmt.Errorf("linking %s: %v: %.2000s", bl.path, err, msg)
			}
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}(i, bl)
	}
	wg.Wait()
	if firstErr != nil {
		return false, firstErr
	}
	return true, nil
}
