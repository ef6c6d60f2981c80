package tracejoin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/trace"
)

// FileTrace is what one stored trace says about one file, for `explain PATH`.
type FileTrace struct {
	File     string       `json:"trace_file"` // the store file
	BuildDir string       `json:"build_dir"`  // its key
	Command  []string     `json:"command"`
	EndNS    int64        `json:"end_ns"` // when the traced build ended (ns since the epoch)
	Failed   bool         `json:"failed"`
	Accesses []FileAccess `json:"accesses"`
}

// FileAccess is one access of the file by a traced process.
type FileAccess struct {
	PID    int    `json:"pid"`
	Exe    string `json:"exe"`             // the program the process ran (its ancestor's for a fork)
	Op     string `json:"op"`              // the system call
	Errno  string `json:"errno,omitempty"` // "" on success ("ENOENT": looked for, not there)
	Read   bool   `json:"read"`            // an input access (open for reading, stat, exec…), not a write
	TimeNS int64  `json:"time_ns"`
	// Step names the build step the process belongs to, where the trace shows one: "build script
	// <pkg>-<hash> (OUT_DIR …)" or "rustc <crate>" ("" otherwise).
	Step string `json:"step,omitempty"`
}

// Explain returns what the stored traces of the build folders keys say about path (absolute): every
// access of it by a traced process, in order. No trace is nil, nil; a damaged one is an error naming
// the store file.
func Explain(stateDir string, keys []string, path string) ([]FileTrace, error) {
	var out []FileTrace
	seen := map[string]bool{}
	for _, k := range keys {
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		t, err := trace.Load(stateDir, k)
		if errors.Is(err, trace.ErrNoTrace) || errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		steps := stepOfProcess(t)
		j := &joiner{t: t}
		ft := FileTrace{File: t.File, BuildDir: t.BuildDir, Command: t.Command, EndNS: t.End, Failed: t.Failed, Accesses: []FileAccess{}}
		for _, a := range t.FileAccesses(filepath.Clean(path)) {
			pr := &t.Processes[a.Proc]
			ft.Accesses = append(ft.Accesses, FileAccess{PID: pr.PID, Exe: j.exe(pr), Op: a.Op, Errno: a.Errno, Read: a.Input(), TimeNS: a.Time, Step: steps[a.Proc]})
		}
		out = append(out, ft)
	}
	return out, nil
}

// stepOfProcess names, per process ID, the build-script run or rustc unit whose tree holds it.
func stepOfProcess(t *trace.Trace) map[int]string {
	out := map[int]string{}
	for _, u := range t.RustcUnits() {
		for _, id := range t.Tree(u.Proc.ID) {
			name := u.CrateName
			if u.Hash != "" {
				name += "-" + u.Hash
			}
			out[id] = "rustc " + name
		}
	}
	for _, r := range t.BuildScriptRuns() {
		for _, id := range t.Tree(r.Proc.ID) {
			out[id] = fmt.Sprintf("build script %s (OUT_DIR %s)", r.Unit, r.OutDir)
		}
	}
	return out
}

// WriteText writes what the traces say about the file, for `explain PATH`'s text; names are passed
// through esc (the report's escaping of control characters).
func WriteText(w io.Writer, fts []FileTrace, esc func(string) string) error {
	var err error
	line := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format+"\n", args...)
		}
	}
	for _, ft := range fts {
		status := "ok"
		if ft.Failed {
			status = "failed"
		}
		line("")
		line("trace %s (%s, %s, ended %d ns): %d access(es) of the file", esc(ft.File), esc(strings.Join(ft.Command, " ")), status, ft.EndNS, len(ft.Accesses))
		for _, a := range ft.Accesses {
			what := "read"
			if !a.Read {
				what = "wrote or removed"
			}
			if a.Errno != "" {
				what = "looked for it (" + a.Errno + ")"
			}
			step := ""
			if a.Step != "" {
				step = ", in " + esc(a.Step)
			}
			line("  pid %d (%s) %s: %s at %d ns%s", a.PID, esc(a.Exe), what, a.Op, a.TimeNS, step)
		}
	}
	return err
}
