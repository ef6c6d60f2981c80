package gocgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/subproc"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Module is what Read learnt of one Go module.
type Module struct {
	// Dir is the module root (the folder of GoMod); Path the module path from go list.
	Dir   string `json:"dir"`
	Path  string `json:"path"`
	GoMod string `json:"go_mod"`
	// GoWork is the go.work file go list used ("" when GOWORK=off).
	GoWork string `json:"go_work,omitempty"`
	// ModFlag is the -mod value go list ran with ("readonly" or "vendor").
	ModFlag string `json:"mod_flag"`
	// Packages in go list's order (dependencies first).
	Packages []*Package `json:"packages"`
	// ListNS is how long go list took, in nanoseconds.
	ListNS int64 `json:"list_ns"`

	byPath map[string]*Package
}

// Package returns the package with that import path, or nil.
func (m *Module) Package(importPath string) *Package { return m.byPath[importPath] }

// Options tune Read. The zero value is fine.
type Options struct {
	// Timeout bounds go list (default 2 minutes).
	Timeout time.Duration
	// Go is the go command (default "go" on PATH).
	Go string
	// Tags are passed as -tags (e.g. the binary's build setting, see ListOptionsFor).
	Tags string
	// Env are extra NAME=VALUE entries for go list (GOOS, GOARCH, CGO_ENABLED of the binary); they
	// come after the environment and the fixed settings, so they win.
	Env []string
	// Patterns default to "./...".
	Patterns []string
	// CgoEnv are the CGO_CPPFLAGS, CGO_CFLAGS, CGO_CXXFLAGS and CGO_LDFLAGS words the build saw (a
	// binary's settings, see ListOptionsFor); they precede each package's own flags in the scan.
	CgoEnv Flags
}

// maxListOutput bounds go list's JSON (bytes); 200 packages take about 200 KiB.
const maxListOutput = 512 << 20

// listFields are the go list -json fields read (a field list also spares go list its staleness
// computation, which reads the build cache and hashes every file).
var listFields = []string{"ImportPath", "Name", "Dir", "Standard", "Module", "Deps", "Error", "DepsErrors",
	"GoFiles", "CgoFiles", "CFiles", "CXXFiles", "MFiles", "HFiles", "FFiles", "SFiles", "SwigFiles",
	"SwigCXXFiles", "SysoFiles", "EmbedFiles",
	"CgoCFLAGS", "CgoCPPFLAGS", "CgoCXXFLAGS", "CgoFFLAGS", "CgoLDFLAGS", "CgoPkgConfig"}

// listPackage is go list's JSON for one package (cmd/go/internal/load.PackagePublic, Go 1.26).
type listPackage struct {
	ImportPath, Name, Dir string
	Standard              bool
	Module                *struct {
		Path, Dir, GoMod, GoVersion string
		Main                        bool
		Replace                     *struct{ Path, Version string }
	}
	Deps                                                                     []string
	Error                                                                    *struct{ Err string }
	DepsErrors                                                               []*struct{ Err string }
	GoFiles, CgoFiles, CFiles, CXXFiles, MFiles, HFiles, FFiles              []string
	SFiles, SwigFiles, SwigCXXFiles, SysoFiles, EmbedFiles                   []string
	CgoCFLAGS, CgoCPPFLAGS, CgoCXXFLAGS, CgoFFLAGS, CgoLDFLAGS, CgoPkgConfig []string
}

// Read lists the module at or above dir with `go list -e -json=… -deps` (Options.Patterns, default
// ./...) and scans each non-standard cgo package: its declared inputs (the files Go hashes, stat'ed),
// its #include lines followed through its search folders, and its -L/-l libraries resolved (see
// [Package]). Nothing is built and nothing is written: GOFLAGS is replaced by -mod=readonly (or
// -mod=vendor when <root>/vendor/modules.txt exists), GOPROXY=off, GOTOOLCHAIN=local, GOWORK=off unless
// a go.work lies at or above the root (then go uses it and GoWork names it).
//
// Errors: no go.mod at or above dir; go missing; go list failing (a broken go.mod, a module that needs
// the network), with go's message, which names the file and line; the deadline; JSON go list should
// never write. A package go list reports as broken (-e) is kept with its error in Problems.
func Read(ctx context.Context, dir string, opt Options) (*Module, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := findUp(abs, "go.mod")
	if err != nil {
		return nil, fmt.Errorf("gocgo: no go.mod at or above %s", abs)
	}
	m := &Module{Dir: root, GoMod: filepath.Join(root, "go.mod"), ModFlag: "readonly", byPath: map[string]*Package{}}
	if err := safeio.Regular(m.GoMod); err != nil {
		return nil, fmt.Errorf("gocgo: %w", err)
	}
	env := os.Environ()
	if w, err := findUp(root, "go.work"); err == nil && os.Getenv("GOWORK") != "off" {
		m.GoWork = filepath.Join(w, "go.work")
		env = append(env, "GOWORK="+m.GoWork)
	} else {
		env = append(env, "GOWORK=off")
		if st, err := fsrec.Stat(filepath.Join(root, "vendor", "modules.txt")); err == nil && st.Mode().IsRegular() {
			m.ModFlag = "vendor"
		}
	}
	env = append(env, "GOFLAGS=-mod="+m.ModFlag, "GOPROXY=off", "GOTOOLCHAIN=local")
	env = append(env, opt.Env...)
	goCmd := opt.Go
	if goCmd == "" {
		goCmd = "go"
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{"list", "-e", "-json=" + strings.Join(listFields, ","), "-deps"}
	if opt.Tags != "" {
		args = append(args, "-tags="+opt.Tags)
	}
	patterns := opt.Patterns
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	args = append(args, patterns...)
	fsrec.Uncacheable("ran go list in " + root) // reads the module cache, go.work, GOFLAGS
	cmd := subproc.Query(exec.CommandContext(ctx, goCmd, args...))
	cmd.Dir = root
	cmd.Env = env
	var stdout limitedBuffer
	stdout.max = maxListOutput
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &limitWriter{w: &stderr, n: 64 << 10}
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	m.ListNS = time.Since(start).Nanoseconds()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("gocgo: go list in %s: no answer within %s", root, timeout)
	}
	if stdout.over {
		return nil, fmt.Errorf("gocgo: go list in %s: more than %d bytes of output", root, maxListOutput)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, fmt.Errorf("gocgo: running %s list in %s: %w", goCmd, root, err)
		}
		return nil, fmt.Errorf("gocgo: go list in %s (module file %s) failed: %v: %s", root, m.GoMod, err, firstLines(msg, 8))
	}
	dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
	sc := newScanner()
	sc.cgoEnv = opt.CgoEnv
	for {
		var lp listPackage
		if err := dec.Decode(&lp); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("gocgo: go list in %s wrote JSON that does not decode at byte %d: %w", root, dec.InputOffset(), err)
		}
		p := fromList(&lp)
		if lp.Module != nil && lp.Module.Main && m.Path == "" {
			m.Path = lp.Module.Path
		}
		switch {
		case p.Cgo && !p.Standard:
			sc.scanPackage(p, &lp)
		case p.Local:
			declareFiles(p, &lp)
		}
		m.Packages = append(m.Packages, p)
		m.byPath[p.ImportPath] = p
	}
	return m, nil
}

func fromList(lp *listPackage) *Package {
	p := &Package{ImportPath: lp.ImportPath, Name: lp.Name, Dir: filepath.Clean(lp.Dir), Standard: lp.Standard,
		Cgo: len(lp.CgoFiles)+len(lp.SwigFiles)+len(lp.SwigCXXFiles) > 0, Deps: lp.Deps}
	if lp.Dir == "" {
		p.Dir = ""
	}
	if lp.Module != nil {
		p.Module = lp.Module.Path
		// A replace by a folder has a path and no version (go.mod: replace m => ./dep).
		folder := lp.Module.Replace != nil && lp.Module.Replace.Version == ""
		p.Local = !p.Cgo && !p.Standard && p.Dir != "" && (lp.Module.Main || folder)
	}
	p.Flags = Flags{CPPFLAGS: lp.CgoCPPFLAGS, CFLAGS: lp.CgoCFLAGS, CXXFLAGS: lp.CgoCXXFLAGS, FFLAGS: lp.CgoFFLAGS,
		LDFLAGS: lp.CgoLDFLAGS, PkgConfig: lp.CgoPkgConfig}
	if lp.Error != nil {
		p.Problems = append(p.Problems, "go list: "+lp.Error.Err)
	}
	for _, e := range lp.DepsErrors {
		if e != nil {
			p.Problems = append(p.Problems, "go list (dependency): "+e.Err)
		}
	}
	return p
}

// findUp returns the nearest folder at or above dir that holds name.
func findUp(dir, name string) (string, error) {
	for d := dir; ; {
		if _, err := fsrec.Stat(filepath.Join(d, name)); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", os.ErrNotExist
		}
		d = up
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

// limitedBuffer keeps at most max bytes and notes when more came.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		b.over = true
		return 0, fmt.Errorf("output over %d bytes", b.max)
	}
	return b.Buffer.Write(p)
}

// limitWriter keeps the first n bytes and drops the rest (go's stderr).
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	k := len(p)
	if k > l.n {
		p = p[:l.n]
	}
	l.n -= len(p)
	if len(p) > 0 {
		l.w.Write(p)
	}
	return k, nil
}
