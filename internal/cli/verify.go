package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/evidence"
)

type verifyFlags struct {
	contains, symbol, matches, targetDir, buildDir string
}

func newVerifyCmd(st Streams) *cobra.Command {
	var fl verifyFlags
	cmd := &cobra.Command{
		Use:   "verify BINARY (--contains STRING | --symbol NAME | --matches ARCHIVE)",
		Short: "Assert that a binary holds a string, a symbol, or a given copy of a library",
		Long: `verify checks one fact about a binary, for scripts:
  --contains STRING  the string occurs in the loaded read-only sections (not debug info, not .comment)
  --symbol NAME      a symbol of that name is defined (.symtab, else .dynsym)
  --matches ARCHIVE  every feature that tells ARCHIVE apart from the other copies of that library in the
                     target folder (or, with no other copy, its content) is present

Exit status: 0 holds, 1 does not hold, 2 cannot tell (e.g. --symbol on a stripped binary) or error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, name := range []string{"contains", "symbol", "matches"} {
				if cmd.Flags().Changed(name) && cmd.Flags().Lookup(name).Value.String() == "" {
					return &ExitError{2, fmt.Errorf("--%s needs a non-empty value", name)}
				}
			}
			return runVerify(st, args[0], fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.contains, "contains", "", "a string the binary must hold")
	f.StringVar(&fl.symbol, "symbol", "", "a symbol the binary must define")
	f.StringVar(&fl.matches, "matches", "", "an archive whose copy the binary must hold")
	f.StringVar(&fl.targetDir, "target-dir", "", "the target folder where other copies are searched")
	f.StringVar(&fl.buildDir, "build-dir", "", "the build folder (Cargo's build.build-dir)")
	cmd.MarkFlagsOneRequired("contains", "symbol", "matches")
	cmd.MarkFlagsMutuallyExclusive("contains", "symbol", "matches")
	return cmd
}

func runVerify(st Streams, binary string, fl verifyFlags) error {
	abs, err := filepath.Abs(binary)
	if err != nil {
		return &ExitError{2, err}
	}
	b, err := evidence.OpenBinary(abs)
	if err != nil {
		return &ExitError{2, err}
	}
	defer b.Close()
	holds := func(ok bool, yes, no string) error {
		if ok {
			fmt.Fprintln(st.Out, "holds:", yes)
			return nil
		}
		fmt.Fprintln(st.Out, "does not hold:", no)
		return &ExitError{Code: 1}
	}
	switch {
	case fl.contains != "":
		ok := b.Contains([]byte(fl.contains))
		return holds(ok, fmt.Sprintf("%s contains %q in a loaded read-only section", abs, fl.contains),
			fmt.Sprintf("%s has no %q in its loaded read-only sections", abs, fl.contains))
	case fl.symbol != "":
		found, known, err := b.DefinesSymbol(fl.symbol)
		if err != nil {
			return &ExitError{2, err}
		}
		if !found && !known {
			return &ExitError{2, fmt.Errorf("cannot tell: %s has no symbol table (stripped)", abs)}
		}
		return holds(found, fmt.Sprintf("%s defines %s", abs, fl.symbol), fmt.Sprintf("%s does not define %s", abs, fl.symbol))
	}
	target, _ := filepath.Abs(fl.matches)
	wf := whichFlags{lib: evidence.LibName(target), targetDir: fl.targetDir, buildDir: fl.buildDir}
	if _, err := os.Stat(target); err != nil {
		return &ExitError{2, fmt.Errorf("--matches: %w", err)}
	}
	libs, err := whichLibraries(abs, wf)
	if err != nil && (fl.targetDir != "" || fl.buildDir != "") {
		// The folders were named: not finding the other copies there is an error, not "no other copy".
		return &ExitError{2, err}
	}
	if err != nil || len(libs) == 0 {
		libs = []evidence.Library{{Name: wf.lib}}
	}
	copies := []evidence.Copy{{Path: target}}
	for _, c := range libs[0].Copies {
		if c.Path != target {
			copies = append(copies, c)
		}
	}
	wl, err := answerLibrary(b, evidence.Library{Name: wf.lib, Copies: copies})
	if err != nil {
		return &ExitError{2, err}
	}
	own := wl.result.Candidates[0]
	var present, absent, unknown int
	for _, f := range own.Distinct {
		switch f.Presence {
		case evidence.Present:
			present++
		case evidence.Absent:
			absent++
		default:
			unknown++
		}
	}
	switch {
	case len(copies) == 1 || len(own.Distinct) == 0:
		// No other copy to tell it apart from: its own content decides. Every string literal and CUDA
		// fatbinary entry it carries must be inside (code and symbols may be dropped per function by
		// --gc-sections, so they only need to be present somewhere).
		switch wl.Outcome {
		case evidence.Matched, evidence.Identical:
			return holds(true, fmt.Sprintf("the content of %s is inside %s (%s; no other copy differs)", target, abs, wl.Confidence), "")
		case evidence.NoneInside, evidence.Unprovable:
			reason := "none of its content is inside"
			if len(wl.Notes) > 0 {
				reason = wl.Notes[len(wl.Notes)-1]
			}
			return holds(false, "", fmt.Sprintf("%s is not the copy inside %s: %s", target, abs, reason))
		}
		return &ExitError{2, fmt.Errorf("cannot tell whether %s holds %s", abs, target)}
	case absent == 0 && present > 0:
		return holds(true, fmt.Sprintf("all %d features that tell %s apart from %d other copies are inside %s", present, target, len(copies)-1, abs), "")
	case absent > 0:
		return holds(false, "", fmt.Sprintf("%d of %d features that tell %s apart from %d other copies are missing from %s (%s)",
			absent, len(own.Distinct), target, len(copies)-1, abs, firstAbsent(own)))
	}
	return &ExitError{2, fmt.Errorf("cannot tell: the %d distinguishing features of %s cannot be checked in %s (stripped?)", unknown, target, abs)}
}

func firstAbsent(c evidence.CandidateResult) string {
	for _, f := range c.Distinct {
		if f.Presence == evidence.Absent {
			return "e.g. " + f.Label
		}
	}
	return ""
}
