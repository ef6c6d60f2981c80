package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// exactArgs is cobra.ExactArgs with messages that name the argument: "which needs BINARY (usage:
// stalecheck which BINARY)" rather than "accepts 1 arg(s), received 0".
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < len(names) {
			return fmt.Errorf("%s needs %s (usage: %s)", cmd.Name(), strings.Join(names[len(args):], " and "), cmd.UseLine())
		}
		return extraArgs(cmd, args, names)
	}
}

// maxArgs is cobra.MaximumNArgs with a message that names the arguments it takes.
func maxArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error { return extraArgs(cmd, args, names) }
}

// noArgs is cobra.NoArgs with a message that names the unexpected argument.
func noArgs(cmd *cobra.Command, args []string) error { return extraArgs(cmd, args, nil) }

func extraArgs(cmd *cobra.Command, args, names []string) error {
	for i, a := range args[:min(len(args), len(names))] {
		// A blank name is no package, path or binary: taken as one, "' '" became the working
		// folder's path and "''" every package of the build.
		if strings.TrimSpace(a) == "" {
			return fmt.Errorf("%s: %s is blank (%q) (usage: %s)", cmd.Name(), names[i], a, cmd.UseLine())
		}
	}
	if len(args) <= len(names) {
		return nil
	}
	takes := "no argument"
	if len(names) > 0 {
		takes = strings.Join(names, " and ")
	}
	return fmt.Errorf("%s takes %s; unexpected %q (usage: %s)", cmd.Name(), takes, strings.Join(args[len(names):], " "), cmd.UseLine())
}

// enumValues are the values each command's enum flags take, for shell completion.
var enumValues = map[string]map[string][]string{
	"check":   {"format": {"text", "json", "sarif"}, "fail-on": {"error", "warning", "info", "none"}, "color": {"auto", "always", "never"}},
	"clean":   {"format": {"text", "json"}},
	"diff":    {"format": {"text", "json"}},
	"explain": {"format": {"text", "json"}},
	"runs":    {"format": {"text", "json"}},
	"run":     {"color": {"auto", "always", "never"}},
}

// completeEnums registers the completion of every enum flag of root's commands, and of --system with the
// registered build systems. A flag shared by two commands (the root takes check's) is registered once:
// cobra keys completions by the flag.
func completeEnums(root *cobra.Command, systems []string) {
	for _, c := range root.Commands() {
		for name, values := range enumValues[c.Name()] {
			_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
		}
		if c.Flags().Lookup("system") != nil {
			_ = c.RegisterFlagCompletionFunc("system", cobra.FixedCompletions(systems, cobra.ShellCompDirectiveNoFileComp))
		}
	}
}

// flagWidth is the width flag descriptions are wrapped to in --help: the terminal's width on stdout,
// else 100 columns; never under 60.
func flagWidth() int {
	if ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return max(60, int(ws.Col))
	}
	return 100
}

// groupAnnotation is the flag annotation that names a flag's group in --help.
const groupAnnotation = "stalecheck_group"

// flagGroups puts check's flags (and the root's copy of them) in groups for --help, in this order.
var flagGroups = []struct {
	name  string
	flags []string
}{
	{"Output", []string{"format", "output", "verbose", "all", "quiet", "color", "fail-on"}},
	{"Cargo (as cargo takes them)", []string{"manifest-path", "package", "release", "target", "profile", "target-dir", "build-dir"}},
	{"What is read", []string{"system", "no-native", "no-cache"}},
}

// setFlagGroups annotates the flags of cmd that flagGroups names.
func setFlagGroups(cmd *cobra.Command) {
	for _, g := range flagGroups {
		for _, n := range g.flags {
			if f := cmd.Flags().Lookup(n); f != nil {
				if f.Annotations == nil {
					f.Annotations = map[string][]string{}
				}
				f.Annotations[groupAnnotation] = []string{g.name}
			}
		}
	}
}

// groupedFlags writes a flag set for --help: one "Flags:" list, or, when its flags carry groups, one
// titled list per group (in flagGroups' order) and the rest under "Other flags:".
func groupedFlags(fs *pflag.FlagSet) string {
	width := flagWidth()
	sets := map[string]*pflag.FlagSet{}
	other := pflag.NewFlagSet("other", pflag.ContinueOnError)
	grouped := false
	fs.VisitAll(func(f *pflag.Flag) {
		g := f.Annotations[groupAnnotation]
		if len(g) == 0 {
			other.AddFlag(f)
			return
		}
		grouped = true
		if sets[g[0]] == nil {
			sets[g[0]] = pflag.NewFlagSet(g[0], pflag.ContinueOnError)
		}
		sets[g[0]].AddFlag(f)
	})
	if !grouped {
		return "Flags:\n" + strings.TrimRight(fs.FlagUsagesWrapped(width), " \n")
	}
	var b strings.Builder
	for _, g := range flagGroups {
		if s := sets[g.name]; s != nil {
			b.WriteString(g.name + ":\n" + s.FlagUsagesWrapped(width) + "\n")
		}
	}
	if other.HasFlags() {
		b.WriteString("Other flags:\n" + other.FlagUsagesWrapped(width))
	}
	return strings.TrimRight(b.String(), " \n")
}

// wrapFlagUsages makes --help wrap flag descriptions to the terminal (cobra's template prints each on
// one line, up to a few hundred characters) and list a command's flags in groups where it has them.
func wrapFlagUsages(root *cobra.Command) {
	cobra.AddTemplateFunc("wrappedFlags", func(f *pflag.FlagSet) string {
		return strings.TrimRight(f.FlagUsagesWrapped(flagWidth()), " \n")
	})
	cobra.AddTemplateFunc("groupedFlags", groupedFlags)
	t := root.UsageTemplate()
	t = strings.ReplaceAll(t, "Flags:\n{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}", "{{groupedFlags .LocalFlags}}")
	t = strings.ReplaceAll(t, "{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}", "{{wrappedFlags .InheritedFlags}}")
	root.SetUsageTemplate(t)
}

// cargoLockNotice is the line said when a read waits for a running cargo build (cargo.ReadOptions.OnLockWait),
// in Cargo's own manner ("Blocking waiting for file lock"): a check that seems to hang says why.
func cargoLockNotice(w io.Writer) func(lock string) {
	return func(lock string) {
		fmt.Fprintf(w, "stalecheck: waiting for the cargo build that holds %s: it is rewriting the records this reads\n", report.Escape(lock))
	}
}

// plainFlagValueError says a flag value that does not parse in the flag's own words ("--limit
// 99999999999999999999: out of range: want a whole number") instead of pflag's, which quotes strconv's
// ("strconv.ParseInt: parsing …: value out of range"). Other errors are returned as they are.
func plainFlagValueError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) || ive.GetFlag() == nil {
		return err
	}
	f := ive.GetFlag()
	want := map[string]string{
		"int": "a whole number", "int64": "a whole number", "int32": "a whole number", "uint": "a whole number of 0 or more",
		"uint64": "a whole number of 0 or more", "float64": "a number", "float32": "a number", "bool": "true or false",
		"duration": "a duration such as 90s, 5m or 1h30m", "count": "a whole number",
	}[f.Value.Type()]
	if want == "" {
		return err
	}
	why := "not " + want
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		why = "out of range: want " + want
	}
	return fmt.Errorf("--%s %q: %s", f.Name, ive.GetValue(), why)
}

// binaryArg checks the BINARY argument of which and verify before any work, and says what is wrong
// in words: missing, a link to nothing, a folder, unreadable.
func binaryArg(abs string) error {
	st, err := os.Stat(abs)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%s is a folder, not a binary", abs)
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("%s is %s, not a binary", abs, safeio.Kind(st.Mode()))
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if to, lerr := os.Readlink(abs); lerr == nil {
			return fmt.Errorf("%s is a link to %s, which does not exist", abs, to)
		}
		return fmt.Errorf("%s: no such file", abs)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", abs)
	}
	return fmt.Errorf("%s: %w", abs, errors.Unwrap(err))
}
