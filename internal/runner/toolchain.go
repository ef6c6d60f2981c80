package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/subproc"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// toolTimeout bounds one `--version` or `git status` call.
const toolTimeout = 10 * time.Second

// toolchain fills Identity.Toolchain: "rustc" from the binaries' bytes, else .rustc_info.json; "cargo"
// from its `--version`; "cc", "cc producers" and "cuda device code" from the binaries' bytes
// (Compilers); "nvcc" from its `--version` only when a binary holds CUDA device code (cached per
// executable).
func (p *Plan) toolchain(ctx context.Context, getenv func(string) string) {
	tc := p.Identity.Toolchain
	rustc, sysroot := rustcInfo(p.Graph.BuildDir, p.Graph.TargetDir)
	if rustc != "" {
		tc["rustc"] = rustc
	}
	var cargoCands []string
	if c := getenv("CARGO"); c != "" {
		cargoCands = append(cargoCands, c)
	}
	if sysroot != "" {
		cargoCands = append(cargoCands, filepath.Join(sysroot, "bin", "cargo"))
	}
	if c := lookPath("cargo", getenv("PATH")); c != "" {
		cargoCands = append(cargoCands, c)
	}
	// Cargo's version matters to a build Cargo made (a Make or Go build merely on a machine with cargo
	// on PATH has none; a Make or Go program linking a Cargo library reads Cargo's graph beside its own).
	if p.Graph.System == unit.System || p.Graph.System == "" || p.Graph.TargetDir != "" && rustc != "" {
		if v := p.toolVersion(ctx, cargoCands, "cargo "); v != "" {
			tc["cargo"] = v
		}
	}
	var nvccCands []string
	if c := lookPath("nvcc", getenv("PATH")); c != "" {
		nvccCands = append(nvccCands, c)
	}
	for _, k := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if d := getenv(k); d != "" {
			nvccCands = append(nvccCands, filepath.Join(d, "bin", "nvcc"))
		}
	}
	// What made the binaries, read from their bytes: rustc's version there wins over Cargo's cache, and
	// nvcc on PATH is named only for a binary that holds CUDA device code.
	made := map[string][]string{}
	for _, b := range p.Identity.Binaries {
		for k, v := range p.compilers(b.Path) {
			made[k] = append(made[k], v)
		}
	}
	for k, vs := range made {
		tc[k] = strings.Join(dedupe(vs), "; ")
	}
	if made["cuda device code"] == nil {
		return
	}
	if v := p.toolVersion(ctx, nvccCands, "Cuda compilation tools"); v != "" {
		tc["nvcc"] = v
	}
}

// compilers is Compilers of an executable, cached like a tool's version (by path, size and mtime).
func (p *Plan) compilers(path string) map[string]string {
	fi, err := fsrec.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	key := path + "\x00compilers"
	if v, ok := p.state.tool(key, fi); ok {
		var m map[string]string
		if json.Unmarshal([]byte(v), &m) == nil {
			return m
		}
	}
	m, err := Compilers(path)
	if err != nil {
		p.note("compilers of %s: %v", path, err)
		return nil
	}
	if b, err := json.Marshal(m); err == nil {
		p.state.setTool(key, fi, string(b))
	}
	return m
}

// rustcInfo reads Cargo's cache of rustc's answers (.rustc_info.json in the build or target folder): the
// version line of `rustc -vV` and the sysroot of `rustc --print sysroot`. It never runs rustc.
func rustcInfo(dirs ...string) (version, sysroot string) {
	for _, d := range dirs {
		b, err := safeio.ReadFile(filepath.Join(d, ".rustc_info.json"), safeio.MaxRecord)
		if err != nil {
			continue
		}
		var info struct {
			Outputs map[string]struct {
				Success bool   `json:"success"`
				Stdout  string `json:"stdout"`
			} `json:"outputs"`
		}
		if json.Unmarshal(b, &info) != nil {
			continue
		}
		keys := make([]string, 0, len(info.Outputs))
		for k := range info.Outputs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o := info.Outputs[k]
			if !o.Success {
				continue
			}
			lines := strings.Split(o.Stdout, "\n")
			if version == "" && strings.HasPrefix(lines[0], "rustc ") {
				version = strings.TrimSpace(lines[0])
				continue
			}
			for _, l := range lines {
				if sysroot == "" && filepath.IsAbs(l) && isDir(filepath.Join(l, "lib", "rustlib")) {
					sysroot = l
				}
			}
		}
		if version != "" {
			return version, sysroot
		}
	}
	return version, sysroot
}

func isDir(p string) bool {
	fi, err := fsrec.Stat(p)
	return err == nil && fi.IsDir()
}

// lookPath finds an executable name in a PATH list, "" when absent.
func lookPath(name, path string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		c := filepath.Join(d, name)
		if fi, err := fsrec.Stat(c); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return c
		}
	}
	return ""
}

// toolVersion returns the version line (the first line starting with prefix, else the last non-empty
// line) that the first existing candidate prints for --version. Answers are cached by the executable's
// resolved path, size and mtime, so a tool is asked once per installation.
func (p *Plan) toolVersion(ctx context.Context, cands []string, prefix string) string {
	for _, c := range cands {
		real, err := fsrec.EvalSymlinks(c)
		if err != nil {
			continue
		}
		fi, err := fsrec.Stat(real)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if v, ok := p.state.tool(real, fi); ok {
			return v
		}
		ctx, cancel := context.WithTimeout(ctx, toolTimeout)
		cmd := subproc.Query(exec.CommandContext(ctx, c, "--version"))
		cmd.Env = p.Environ
		cmd.WaitDelay = time.Second // a child holding the pipe open cannot outlive the deadline
		out, err := cmd.Output()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("did not answer within %v", toolTimeout)
			}
			p.note("%s --version: %v", c, err)
			continue
		}
		v := versionLine(out, prefix)
		p.state.setTool(real, fi, v)
		return v
	}
	return ""
}

func versionLine(out []byte, prefix string) string {
	last := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, prefix) {
			return l
		}
		if l != "" {
			last = l
		}
	}
	return last
}

// gitState returns HEAD and whether tracked files differ from it, for the repository holding dir; the zero
// Git outside a repository or without git. One `git status` call, taking no lock (GIT_OPTIONAL_LOCKS=0),
// under toolTimeout. The files git reads first (.git, HEAD and the branch it names, config, index,
// packed-refs) are checked to be regular files beforehand, so a FIFO there is not left to block git
// until the deadline. note says why the state is missing ("" when it is known or there is no repository).
func gitState(ctx context.Context, dir string, env []string) (g ledger.Git, note string) {
	top := gitTop(dir)
	if dir == "" || top == "" {
		return ledger.Git{}, ""
	}
	if err := gitFilesRegular(filepath.Join(top, ".git")); err != nil {
		return ledger.Git{}, fmt.Sprintf("git state not recorded: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	cmd := subproc.Query(exec.CommandContext(ctx, "git", "status", "--porcelain=v2", "--branch", "--untracked-files=no"))
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, env...), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	cmd.WaitDelay = time.Second // a child holding the pipe open cannot outlive the deadline
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return ledger.Git{}, fmt.Sprintf("git state not recorded: git status in %s did not answer within %v", dir, toolTimeout)
		}
		return ledger.Git{}, fmt.Sprintf("git state not recorded: git status in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "# branch.oid "):
			if oid := strings.TrimPrefix(l, "# branch.oid "); oid != "(initial)" {
				g.Head = oid
			}
		case l != "" && !strings.HasPrefix(l, "#"):
			g.Dirty = true
		}
	}
	return g, ""
}

// gitTop returns the nearest folder at or above dir that holds .git (a folder, or a file for
// worktrees and submodules); "" when there is none.
func gitTop(dir string) string {
	if dir == "" {
		return ""
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := fsrec.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// gitFilesRegular checks, without opening anything that could block, that the files git reads first
// in a repository are regular files: a `.git` file's `gitdir:` target, then HEAD, the loose ref HEAD
// names, config, index and packed-refs (those that exist; HEAD must). Reads go through internal/safeio.
func gitFilesRegular(dotGit string) error {
	st, err := fsrec.Stat(dotGit)
	if err != nil {
		return err
	}
	gitDir := dotGit
	if !st.IsDir() {
		data, err := safeio.ReadFile(dotGit, 64<<10)
		if err != nil {
			return err
		}
		line, _, _ := strings.Cut(string(data), "\n")
		target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return fmt.Errorf("%s: not a gitdir file", dotGit)
		}
		gitDir = strings.TrimSpace(target)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(filepath.Dir(dotGit), gitDir)
		}
	}
	head := filepath.Join(gitDir, "HEAD")
	data, err := safeio.ReadFile(head, 64<<10)
	if err != nil {
		return err
	}
	check := []string{"config", "index", "packed-refs", "commondir"}
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref:"); ok {
		if ref = strings.TrimSpace(ref); filepath.IsLocal(ref) {
			check = append(check, ref)
		}
	}
	for _, n := range check {
		p := filepath.Join(gitDir, n)
		if _, err := fsrec.Lstat(p); err != nil {
			continue
		}
		if err := safeio.Regular(p); err != nil {
			return err
		}
	}
	return nil
}
