package cli

import (
	"fmt"
	"path/filepath"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/hugeheap"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/vcache"
	"github.com/stalecheck/stalecheck/internal/which"
)

type whichFlags struct {
	lib, format, targetDir, buildDir string
	candidates                       []string
	noCache                          bool
	onLockWait                       func(lock string) // told when a running cargo build makes the read wait
}

func newWhichCmd(st Streams) *cobra.Command {
	var fl whichFlags
	cmd := &cobra.Command{
		Use:   "which BINARY",
		Short: "Prove from the binary's bytes which copy of each native library is inside it",
		Long: `which finds the copies of each native static library the binary links (every build/*/out/
archive of that name in the Cargo target folder, and the rlibs that bundle one), or takes them from
--candidate, and says which copy's distinguishing content (strings, symbols, CUDA fatbinary entries,
code with relocations masked) is inside the binary.

The search for the copies (the Cargo records) is kept in the verdict cache while every path it
consulted keeps its signature, as check's verdict is; the copies and the binary are read every time.

Exit status: 0 answered, 2 error, 3 the verdict cache disagreed with the search (under ` + vcache.EnvMode + `=verify).`,
		Args: exactArgs("BINARY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.onLockWait = cargoLockNotice(st.Err)
			return runWhich(st, args[0], fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.lib, "lib", "", "only this library (link name groth16_cuda or file name libgroth16_cuda.a)")
	f.StringArrayVar(&fl.candidates, "candidate", nil, "a candidate copy (archive, rlib or object); repeat; skips the search in the target folder")
	f.StringVar(&fl.format, "format", "text", "output format: text or json")
	f.StringVar(&fl.targetDir, "target-dir", "", "the target folder (default: as Cargo finds it from the binary's folder)")
	f.StringVar(&fl.buildDir, "build-dir", "", "the build folder (Cargo's build.build-dir)")
	f.BoolVar(&fl.noCache, "no-cache", false, "always search the build folder for the copies (no verdict cache; also "+vcache.EnvMode+"=off)")
	return cmd
}

type whichDoc struct {
	report.Envelope
	Binary    string          `json:"binary"`
	Libraries []which.Library `json:"libraries"`
	Notes     []string        `json:"notes"` // why libraries is empty (only shared libraries are linked)
}

func runWhich(st Streams, binary string, fl whichFlags) error {
	// Matching a large binary allocates many small fatbin entries; collect garbage less often.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	if fl.format != "text" && fl.format != "json" {
		return &ExitError{2, fmt.Errorf("--format %q: want text or json", fl.format)}
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return &ExitError{2, err}
	}
	if err := binaryArg(abs); err != nil {
		return &ExitError{2, err}
	}
	// Every call reads the binary's sections into the heap (the verdict cache keeps only the search for
	// the copies): tens of megabytes, most of them first touches of 4 KiB pages without the advice.
	hugeheap.Advise()
	wc := openWhichCache(st, abs, fl)
	libs, notes, pending, err := wc.libraries()
	if err != nil {
		if _, ok := err.(*ExitError); ok {
			return err
		}
		return &ExitError{2, err}
	}
	b, err := evidence.OpenBinary(abs)
	if err != nil {
		if pending != nil {
			pending()
		}
		return &ExitError{2, err}
	}
	defer b.Close()
	out, err := which.Answer(b, libs)
	if pending != nil && !pending() {
		// The stored search no longer holds (a path it consulted changed): search, answer again.
		if libs, notes, err = wc.search(); err != nil {
			return &ExitError{2, err}
		}
		b.Close()
		if b, err = evidence.OpenBinary(abs); err != nil {
			return &ExitError{2, err}
		}
		out, err = which.Answer(b, libs)
	}
	if err != nil {
		return &ExitError{2, err}
	}
	if fl.format == "json" {
		doc := whichDoc{Envelope: report.Envelope{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "which"},
			Binary: abs, Libraries: out, Notes: notes}
		if doc.Notes == nil {
			doc.Notes = []string{}
		}
		if doc.Libraries == nil {
			doc.Libraries = []which.Library{}
		}
		if err := report.WriteJSON(st.Out, doc); err != nil {
			return &ExitError{2, err}
		}
		return nil
	}
	which.WriteText(st.Out, abs, out, notes)
	return nil
}

// options are the search's options from which's flags.
func (fl whichFlags) options() which.Options {
	return which.Options{Lib: fl.lib, Candidates: fl.candidates, TargetDir: fl.targetDir, BuildDir: fl.buildDir, OnLockWait: fl.onLockWait}
}
