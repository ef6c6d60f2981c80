package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// toolTimeout bounds one `--version` or `git status` call.
const toolTimeout = 10 * time.Second

// toolchain fills Identity.Toolchain: "rustc" from .rustc_info.json, "cargo" and "nvcc" from their
// `--version` (cached per executable).
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
	if v := p.toolVersion(ctx, cargoCands, "cargo "); v != "" {
		tc["cargo"] = v
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
	if v := p.toolVersion(ctx, nvccCands, "Cuda compilation tools"); v != "" {
		tc["nvcc"] = v
	}
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
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// lookPath finds an executable name in a PATH list, "" when absent.
func lookPath(name, path string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		c := filepath.Join(d, name)
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
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
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if v, ok := p.state.tool(real, fi); ok {
			return v
		}
		ctx, cancel := context.WithTimeout(ctx, toolTimeout)
		cmd := exec.CommandContext(ctx, c, "--version")
		cmd.Env = p.Environ
		out, err := cmd.Output()
		cancel()
		if err != nil {
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
// Git outside a repository or without git. One `git status` call, taking no lock (GIT_OPTIONAL_LOCKS=0).
func gitState(ctx context.Context, dir string, env []string) ledger.Git {
	if dir == "" || !inGitRepo(dir) {
		return ledger.Git{}
	}
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "status", "--porcelain=v2", "--branch", "--untracked-files=no")
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, env...), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		return ledger.Git{}
	}
	var g ledger.Git
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
	return g
}

// inGitRepo reports whether dir or a folder above it holds .git (a folder, or a file for worktrees).
func inGitRepo(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}
