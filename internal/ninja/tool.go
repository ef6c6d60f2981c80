package ninja

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/subproc"

	"github.com/stalecheck/stalecheck/internal/fsrec"
)

// DefaultTimeout bounds each ninja invocation when the caller's context has no earlier deadline.
const DefaultTimeout = 2 * time.Minute

// maxToolOutput bounds what is kept of a ninja invocation's stdout and of its stderr, in bytes.
const maxToolOutput = 256 << 20

// Tool is the ninja executable used for queries (observed: Debian's ninja-build 1.11.1). Only
// read-only invocations are made: `-n` (dry run) and `-t` tools that print.
type Tool struct {
	Path    string
	Version string
	// Major, Minor of Version (1, 11 for "1.11.1").
	Major, Minor int
}

// FindTool looks ninja up on PATH and asks its version. It returns an error wrapping exec.ErrNotFound
// when ninja is absent.
func FindTool(ctx context.Context) (*Tool, error) {
	p, err := fsrec.LookPath("ninja")
	if err != nil {
		return nil, err
	}
	t := &Tool{Path: p}
	out, _, err := t.run(ctx, "", "--version")
	if err != nil {
		return nil, err
	}
	t.Version = strings.TrimSpace(string(out))
	parts := strings.SplitN(t.Version, ".", 3)
	if len(parts) >= 2 {
		t.Major, _ = strconv.Atoi(parts[0])
		t.Minor, _ = strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	}
	return t, nil
}

// ReadsLogVersion reports whether this ninja keeps a .ninja_log of the given version; one it does not
// is deleted by ninja when it loads the logs (src/build_log.cc: 1.9–1.11 read v4 and later, and 1.12
// reads v6 only, 1.13 v7 only).
func (t *Tool) ReadsLogVersion(v int) bool {
	switch {
	case t.Major == 1 && t.Minor <= 11:
		return v >= 4
	case t.Major == 1 && t.Minor == 12:
		return v == 6
	default:
		return v == 7
	}
}

// ReadsDepsVersion reports whether this ninja keeps a .ninja_deps of the given version (4 since 1.9;
// older ones are deleted on load).
func (t *Tool) ReadsDepsVersion(v int) bool { return v == 4 }

type capped struct {
	b   bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room < len(p) {
		if room > 0 {
			c.b.Write(p[:room])
		}
		c.cut = true
		return len(p), nil
	}
	return c.b.Write(p)
}

// run runs ninja with args (in dir when dir != "": `-C dir` is added) under the context's deadline, or
// DefaultTimeout. A non-zero exit returns an error carrying stderr's first lines.
func (t *Tool) run(ctx context.Context, dir string, args ...string) (stdout, stderr []byte, err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	if len(args) == 1 && args[0] == "--version" {
		fsrec.Stat(t.Path) // its answer depends on the executable alone (the verdict cache keys it so)
	} else {
		fsrec.Uncacheable("ran ninja " + strings.Join(args, " ")) // reads what only ninja knows
	}
	cmd := subproc.Query(exec.CommandContext(ctx, t.Path, args...))
	cmd.WaitDelay = 2 * time.Second
	o, e := &capped{max: maxToolOutput}, &capped{max: maxToolOutput}
	cmd.Stdout, cmd.Stderr = o, e
	err = cmd.Run()
	if ctx.Err() != nil {
		return o.b.Bytes(), e.b.Bytes(), fmt.Errorf("%s %s: %w", t.Path, strings.Join(args, " "), ctx.Err())
	}
	if err != nil {
		msg := strings.TrimSpace(string(e.b.Bytes()))
		if msg == "" {
			msg = strings.TrimSpace(string(o.b.Bytes()))
		}
		if len(msg) > 600 {
			msg = msg[:600] + "…"
		}
		return o.b.Bytes(), e.b.Bytes(), fmt.Errorf("%s %s: %w: %s", t.Path, strings.Join(args, " "), err, msg)
	}
	if o.cut || e.cut {
		return o.b.Bytes(), e.b.Bytes(), fmt.Errorf("%s %s: output over %d bytes", t.Path, strings.Join(args, " "), maxToolOutput)
	}
	return o.b.Bytes(), e.b.Bytes(), nil
}

// DryRun is what `ninja -n -d explain` says would run, with nothing built.
type DryRun struct {
	// NoWork is set when ninja printed "ninja: no work to do."
	NoWork bool
	// Steps are the "[i/n] command" lines of the edges that would run, in order (`-v` prints the
	// evaluated command instead of the description); Commands the same without the "[i/n] " prefix.
	Steps, Commands []string
	// Dirty maps each node ninja called dirty ("X is dirty") to the explain lines before it. Ninja 1.11
	// does not print that line for every cause (a missing depfile), so Read matches Commands too.
	Dirty map[string][]string
	// Explain holds every "ninja explain:" line, without the prefix.
	Explain []string
	// Self is set when this answer is Read's own evaluation of ninja's rules (SelfCheck found no work)
	// and ninja was not run.
	Self bool
}

// DryRun runs `ninja -C dir [-f manifest] -n -v -d explain` (default targets; manifest "" or
// build.ninja needs no -f). Ninja builds nothing in a dry run, but it loads .ninja_log and .ninja_deps
// and deletes or truncates them when they are of a version it does not read or damaged; callers check
// the logs first (Read does).
func (t *Tool) DryRun(ctx context.Context, dir, manifest string) (*DryRun, error) {
	args := []string{"-n", "-v", "-d", "explain"}
	if manifest != "" && manifest != DefaultManifest {
		args = append([]string{"-f", manifest}, args...)
	}
	out, errOut, err := t.run(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	d := &DryRun{Dirty: map[string][]string{}}
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case l == "ninja: no work to do.":
			d.NoWork = true
		case strings.HasPrefix(l, "["):
			d.Steps = append(d.Steps, l)
			if i := strings.Index(l, "] "); i > 0 {
				d.Commands = append(d.Commands, l[i+2:])
			}
		}
	}
	var pending []string
	for _, l := range strings.Split(string(errOut), "\n") {
		x, ok := strings.CutPrefix(l, "ninja explain: ")
		if !ok {
			continue
		}
		d.Explain = append(d.Explain, x)
		if node, ok := strings.CutSuffix(x, " is dirty"); ok {
			d.Dirty[node] = append(d.Dirty[node], pending...)
			pending = nil
			continue
		}
		pending = append(pending, x)
	}
	return d, nil
}

// Targets runs `ninja -t targets all` and returns each output with its rule.
func (t *Tool) Targets(ctx context.Context, dir string) (map[string]string, error) {
	out, _, err := t.run(ctx, dir, "-t", "targets", "all")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if i := strings.LastIndex(l, ": "); i > 0 {
			m[l[:i]] = l[i+2:]
		}
	}
	return m, nil
}

// QueryResult is ninja's `-t query` answer for one node.
type QueryResult struct {
	Rule                          string
	Explicit, Implicit, OrderOnly []string
	// Outputs are the nodes that use this one as an input.
	Outputs []string
}

// Query runs `ninja -t query` for the given targets (one invocation).
func (t *Tool) Query(ctx context.Context, dir string, targets ...string) (map[string]*QueryResult, error) {
	if len(targets) == 0 {
		return map[string]*QueryResult{}, nil
	}
	out, _, err := t.run(ctx, dir, append([]string{"-t", "query"}, targets...)...)
	if err != nil {
		return nil, err
	}
	res := map[string]*QueryResult{}
	var cur *QueryResult
	section := ""
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case l == "":
		case !strings.HasPrefix(l, " "):
			cur = &QueryResult{}
			res[strings.TrimSuffix(l, ":")] = cur
			section = ""
		case cur == nil:
		case strings.HasPrefix(l, "  input: "):
			cur.Rule, section = strings.TrimPrefix(l, "  input: "), "in"
		case l == "  outputs:":
			section = "out"
		case l == "  validations:":
			section = "valid"
		case strings.HasPrefix(l, "    "):
			p := l[4:]
			switch {
			case section == "out":
				cur.Outputs = append(cur.Outputs, p)
			case section != "in":
			case strings.HasPrefix(p, "|| "):
				cur.OrderOnly = append(cur.OrderOnly, p[3:])
			case strings.HasPrefix(p, "| "):
				cur.Implicit = append(cur.Implicit, p[2:])
			default:
				cur.Explicit = append(cur.Explicit, p)
			}
		}
	}
	return res, nil
}

// Command runs `ninja -t commands -s target` and returns the final command that builds target.
func (t *Tool) Command(ctx context.Context, dir, target string) (string, error) {
	out, _, err := t.run(ctx, dir, "-t", "commands", "-s", target)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}

// Rules runs `ninja -t rules` and returns the rule names.
func (t *Tool) Rules(ctx context.Context, dir string) ([]string, error) {
	out, _, err := t.run(ctx, dir, "-t", "rules")
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// MissingDeps runs `ninja -t missingdeps` (which loads the deps log: call it only when the log is
// one this ninja keeps) and returns its report lines ("Missing dep: ..."), empty when none.
func (t *Tool) MissingDeps(ctx context.Context, dir string) ([]string, error) {
	out, _, err := t.run(ctx, dir, "-t", "missingdeps")
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Missing dep:") {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// ErrLogsUnsafe is wrapped when Read refuses to run ninja because it would write into the build
// folder: delete or truncate a log it does not read, create a missing output folder, write a response
// file or (1.12) .ninja_lock.
var ErrLogsUnsafe = errors.New("ninja would rewrite its logs")
