package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/which"
)

type verifyFlags struct {
	contains, symbol, matches, targetDir, buildDir string
	onLockWait                                     func(lock string) // told when a running cargo build makes the read wait
}

func newVerifyCmd(st Streams) *cobra.Command {
	var fl verifyFlags
	cmd := &cobra.Command{
		Use:   "verify BINARY (--contains STRING | --symbol NAME | --matches ARCHIVE)",
		Short: "Assert that a binary holds a string, a symbol, or a given copy of a library",
		Long: `verify checks one fact about a binary, for scripts:
  --contains STRING  the string occurs in the loaded read-only sections (not debug info, not .comment)
  --symbol NAME      a symbol of that name is defined (.symtab, else .dynsym)
  --matches ARCHIVE  ARCHIVE is the copy which names as inside, among the other copies of that library in
                     the target folder (with no other copy: its content is inside)

Exit status: 0 holds, 1 does not hold, 2 cannot tell (e.g. --symbol on a stripped binary, --matches
where which answers unprovable or unknown) or error.`,
		Args: exactArgs("BINARY"),
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
	fl.onLockWait = cargoLockNotice(st.Err)
	abs, err := filepath.Abs(binary)
	if err != nil {
		return &ExitError{2, err}
	}
	if err := binaryArg(abs); err != nil {
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
	if _, err := os.Stat(target); err != nil {
		return &ExitError{2, fmt.Errorf("--matches: %w", err)}
	}
	copies, name, err := verifyCopies(abs, target, fl)
	if err != nil {
		return &ExitError{2, err}
	}
	wl, err := which.AnswerOne(b, evidence.Library{Name: name, Copies: copies})
	if err != nil {
		return &ExitError{2, err}
	}
	// The copy asked about, among those read: one that could not be read was left out of the answer,
	// which then says nothing of it.
	var own evidence.CandidateResult
	for _, c := range wl.Result.Candidates {
		if c.Path == target {
			own = c
		}
	}
	if own.Path == "" {
		why := "it could not be read"
		for i, p := range wl.LeftOut {
			if p == target {
				why = wl.Notes[i]
			}
		}
		return &ExitError{2, fmt.Errorf("cannot tell: %s", why)}
	}
	// A copy left out may hold what tells this one apart from those read: "holds" cannot be proved.
	cannotHold := func() error {
		if len(wl.LeftOut) == 0 {
			return nil
		}
		return &ExitError{2, fmt.Errorf("cannot tell: %s may be the copy inside %s, and what tells %s apart from it is unknown (%s)",
			strings.Join(wl.LeftOut, ", "), abs, target, strings.Join(wl.Notes[:len(wl.LeftOut)], "; "))}
	}
	plainHolds := holds
	holds = func(ok bool, yes, no string) error {
		if err := cannotHold(); ok && err != nil {
			return err
		}
		return plainHolds(ok, yes, no)
	}
	others := len(copies) - 1
	var inside string
	for _, c := range wl.Result.Candidates {
		if c.Matched && c.Path != target {
			inside = c.Path
			break
		}
	}
	reason := func() string {
		if len(wl.Notes) > 0 {
			return wl.Notes[len(wl.Notes)-1]
		}
		return string(wl.Outcome)
	}
	switch {
	case own.NoNative:
		return &ExitError{2, fmt.Errorf("cannot tell: %s holds no native object to compare", target)}
	case wl.Outcome == evidence.Matched && own.Matched:
		what := fmt.Sprintf("%d features that tell it apart from %d other copies are inside", countPresent(own), others)
		if others == 0 {
			what = "no other copy differs; its content is inside"
		} else if countPresent(own) == 0 {
			what = reason()
		}
		return holds(true, fmt.Sprintf("%s is the copy inside %s (%s; %s)", target, abs, wl.Confidence, what), "")
	case wl.Outcome == evidence.Identical:
		return holds(true, fmt.Sprintf("the content of %s is inside %s (%s; the %d other copies do not differ)", target, abs, wl.Confidence, others), "")
	case wl.Outcome == evidence.Matched:
		return holds(false, "", fmt.Sprintf("%s is not the copy inside %s: %s is (%s)%s", target, abs, inside, wl.Confidence, absentNote(own)))
	case wl.Outcome == evidence.NoneInside:
		return holds(false, "", fmt.Sprintf("%s is not the copy inside %s: none of its content is inside", target, abs))
	case wl.Outcome == evidence.Unprovable && wl.Result.Groups == 1:
		// One content version and no other to compare with, and some of its string literals are not
		// inside: the linker drops the strings of code it leaves out (a staticlib's std), so the copy's
		// features are judged member by member, those of dropped code apart (evidence.Holds).
		switch h, lto := holdsOne(abs, target); {
		case h != nil && h.Verdict == evidence.HoldsAll:
			return holds(true, fmt.Sprintf("the content of %s is inside %s (%s)", target, abs, h.Why), "")
		case h != nil && h.Verdict == evidence.HoldsOther:
			return holds(false, "", fmt.Sprintf("%s is not the copy inside %s: %s", target, abs, h.Why))
		case lto:
			// Members with LTO code (a Rust staticlib's std) are linked, or dropped, whole at link
			// time: their strings' absence says nothing of this copy.
			why := reason()
			if h != nil {
				why += "; " + h.Why
			}
			return &ExitError{2, fmt.Errorf("cannot tell whether %s holds %s: %s", abs, target, why)}
		}
		// Plain objects: a literal of an object whose code is inside is missing, so another version is.
		return holds(false, "", fmt.Sprintf("%s is not the copy inside %s: %s", target, abs, reason()))
	}
	return &ExitError{2, fmt.Errorf("cannot tell whether %s holds %s (%s): %s", abs, target, wl.Outcome, reason())}
}

// verifyCopies returns the copies to judge for --matches TARGET, TARGET first, and the library name:
// the other copies of the library TARGET is a copy of in the Cargo build folder (an rlib: the library
// it bundles), found from the binary's folder or the folders given; none when there is no Cargo
// folder. Not finding the folders given is an error, not "no other copy".
func verifyCopies(binary, target string, fl verifyFlags) ([]evidence.Copy, string, error) {
	name := evidence.LibName(target)
	if strings.HasSuffix(target, ".rlib") {
		name = which.RlibCrate(target)
	}
	libs, _, err := which.Find(binary, which.Options{TargetDir: fl.targetDir, BuildDir: fl.buildDir, OnLockWait: fl.onLockWait})
	if err != nil && (fl.targetDir != "" || fl.buildDir != "") {
		return nil, "", err
	}
	if err != nil || !hasCopy(libs, target) {
		if l, _, err2 := which.Find(binary, which.Options{Lib: name, TargetDir: fl.targetDir, BuildDir: fl.buildDir, OnLockWait: fl.onLockWait}); err2 == nil {
			libs = l
		}
	}
	copies := []evidence.Copy{{Path: target}}
	if st, err := os.Stat(target); err == nil {
		copies[0].Size, copies[0].MTimeNS = st.Size(), st.ModTime().UnixNano()
	}
	for _, l := range libs {
		if !hasCopy([]evidence.Library{l}, target) && l.Name != name {
			continue
		}
		name = l.Name
		for _, c := range l.Copies {
			if c.Path != target {
				copies = append(copies, c)
			} else {
				copies[0] = c
			}
		}
		break
	}
	return copies, name, nil
}

func hasCopy(libs []evidence.Library, path string) bool {
	for _, l := range libs {
		for _, c := range l.Copies {
			if c.Path == path {
				return true
			}
		}
	}
	return false
}

func countPresent(c evidence.CandidateResult) int {
	n := 0
	for _, f := range c.Distinct {
		if f.Presence == evidence.Present {
			n++
		}
	}
	return n
}

func absentNote(c evidence.CandidateResult) string {
	if a := firstAbsent(c); a != "" {
		return "; " + a + " is absent"
	}
	return ""
}

func firstAbsent(c evidence.CandidateResult) string {
	for _, f := range c.Distinct {
		if f.Presence == evidence.Absent {
			return f.Label
		}
	}
	return ""
}

// holdsOne judges whether the binary holds the library's content feature by feature (evidence.Holds),
// and says whether the library carries LTO code; a nil holding when either cannot be read.
func holdsOne(binary, lib string) (*evidence.Holding, bool) {
	c, err := evidence.ReadCandidate(lib)
	if err != nil {
		return nil, false
	}
	b, err := evidence.OpenBinary(binary)
	if err != nil {
		return nil, c.LTO
	}
	defer b.Close()
	h, err := evidence.Holds(b, c)
	if err != nil {
		return nil, c.LTO
	}
	return h, c.LTO
}
