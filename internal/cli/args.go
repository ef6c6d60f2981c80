package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

// flagWidth is the width flag descriptions are wrapped to in --help.
const flagWidth = 100

// wrapFlagUsages makes --help wrap flag descriptions at flagWidth columns (cobra's template prints
// each on one line, up to a few hundred characters).
func wrapFlagUsages(root *cobra.Command) {
	cobra.AddTemplateFunc("wrappedFlags", func(f *pflag.FlagSet) string {
		return strings.TrimRight(f.FlagUsagesWrapped(flagWidth), " \n")
	})
	t := root.UsageTemplate()
	t = strings.ReplaceAll(t, "{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}", "{{wrappedFlags .LocalFlags}}")
	t = strings.ReplaceAll(t, "{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}", "{{wrappedFlags .InheritedFlags}}")
	root.SetUsageTemplate(t)
}
