package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The help and usage texts are written by functions, not cobra's
// templates: text/template calls reflect.Value.MethodByName, and a
// reachable MethodByName makes the linker keep every exported method of
// every type stored in an interface, 4.3 MB of the binary (BENCHMARKS.md,
// "Binary size"). TestHelpMatchesTemplates checks the texts against the
// templates they replace; TestLinkKeepsNoReflectMethod checks the link.

// writeUsage is the usage of c: on stdout inside --help and on stderr
// after a bad command line.
func writeUsage(w io.Writer, c *cobra.Command) {
	local := c.LocalFlags() // first: it merges the parents' persistent flags
	fmt.Fprintf(w, "usage: %s", c.UseLine())
	if c.HasAvailableSubCommands() {
		fmt.Fprint(w, "\n\ncommands:")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				fmt.Fprintf(w, "\n  %-*s %s", sub.NamePadding(), sub.Name(), sub.Short)
			}
		}
	}
	if c.HasExample() {
		fmt.Fprintf(w, "\n\nexamples:\n%s", c.Example)
	}
	if c.HasAvailableLocalFlags() {
		fmt.Fprintf(w, "\n\nflags:\n%s", trimTrailingSpace(local.FlagUsages()))
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(w, "\n\nglobal flags:\n%s", trimTrailingSpace(c.InheritedFlags().FlagUsages()))
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\n\nRun '%s <command> --help' for a command's flags and examples.", c.CommandPath())
		if !c.HasParent() {
			fmt.Fprint(w, "\nThe store is in --dir, $HMO_DIR or the user's data directory.")
		}
	}
	fmt.Fprintln(w)
}

// writeHelp is --help: the description, then the usage.
func writeHelp(w io.Writer, c *cobra.Command) {
	c.LocalFlags() // merges the parents' persistent flags, as cobra's help does
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	if desc != "" {
		fmt.Fprintf(w, "%s\n\n", trimTrailingSpace(desc))
	}
	if c.Runnable() || c.HasSubCommands() {
		fmt.Fprint(w, c.UsageString())
	}
}

// trimTrailingSpace is cobra's template function trimTrailingWhitespaces.
func trimTrailingSpace(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

// versionFlag is hmo's -v/--version. It is hmo's own rather than cobra's
// (the Version field), because cobra prints its version line through a
// template unless it says "hmo version X"; annotated as cobra's, so shell
// completion stops after it as it does after cobra's.
const versionFlag = "version"

// versionAsked reports whether c's command line holds --version.
func versionAsked(c *cobra.Command) bool {
	v, err := c.Flags().GetBool(versionFlag)
	return err == nil && v
}

// newRoot returns the hmo command with its subcommands.
func newRoot(env *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "hmo <command> [flags] [args]",
		Short: "long-term memory for LLM agents, on your device",
		Long: `hmo is a long-term memory engine for LLM agents that runs on your own device:
one store per user, tiered recall (HMO), local models through Ollama.`,
		Example: `  hmo add "I'm allergic to shellfish" --scope me
  hmo recall "what am I allergic to" -k 3
  hmo list --scope me --reverse --limit 10
  hmo import notes.jsonl
  hmo serve --detach`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// An argument of hmo itself is an unknown command.
		// --version answers before the arguments are checked, as cobra's does.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || versionAsked(cmd) {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			fmt.Fprintf(env.stderr, "hmo: %s\n%s", msg, cmd.UsageString())
			return exitError{2}
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if versionAsked(cmd) {
				fmt.Fprintf(cmd.OutOrStdout(), "hmo %s\n", buildVersion())
				return nil
			}
			fmt.Fprint(env.stderr, cmd.UsageString())
			return exitError{2}
		},
	}
	root.SetIn(env.stdin)
	root.SetOut(env.stdout)
	root.SetErr(env.stderr)
	root.SetUsageFunc(func(c *cobra.Command) error {
		writeUsage(c.OutOrStderr(), c)
		return nil
	})
	root.SetHelpFunc(func(c *cobra.Command, _ []string) { writeHelp(c.OutOrStdout(), c) })
	root.Flags().BoolP(versionFlag, "v", false, "version for hmo")
	_ = root.Flags().SetAnnotation(versionFlag, cobra.FlagSetByCobraAnnotation, []string{"true"})
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	root.AddCommand(
		newInitCmd(env),
		newAddCmd(env),
		newImportCmd(env),
		newRecallCmd(env),
		newListCmd(env),
		newGetCmd(env),
		newForgetCmd(env),
		newCompactCmd(env),
		newStatsCmd(env),
		newPersonaCmd(env),
		newExportCmd(env),
		newEvalCmd(env),
		newVersionCmd(env),
		newReindexCmd(env),
		newDoctorCmd(env),
		newSalvageCmd(env),
		newServeCmd(env),
		newMCPCmd(env),
		newHookCmd(env),
		newManCmd(env),
		newUICmd(env),
	)
	completeFlagValues(root)
	argsAreUsage(root)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Short = "help about any command"
			c.RunE = func(cmd *cobra.Command, args []string) error {
				target, rest, err := root.Find(args)
				if err != nil || len(rest) > 0 {
					return usageError{fmt.Sprintf("no help for %q: no such command", strings.Join(args, " "))}
				}
				target.InitDefaultHelpFlag()
				target.InitDefaultVersionFlag()
				return target.Help()
			}
		case "completion":
			c.Short = "print the shell completion script (bash, zsh, fish, powershell)"
			c.Example = `  source <(hmo completion bash)
  hmo completion zsh > "${fpath[1]}/_hmo"
  hmo completion fish > ~/.config/fish/completions/hmo.fish`
			c.Args = func(cmd *cobra.Command, args []string) error {
				return usageError{fmt.Sprintf("unknown shell %q: want bash, zsh, fish or powershell", args[0])}
			}
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usageError{fmt.Sprintf("unknown shell %q: want bash, zsh, fish or powershell", args[0])}
				}
				return usageError{"completion needs a shell: bash, zsh, fish or powershell"}
			}
		}
	}
	return root
}

// flagValues are the values shell completion offers for a flag: by
// "command flag" first, else by flag name.
var flagValues = map[string][]string{
	"mode":          {"tiered", "flat"},
	"embedder":      {"static", "ollama"},
	"log-level":     {"debug", "info", "warn", "error"},
	"log-format":    {"text", "json"},
	"import format": {"jsonl", "locomo", "claude-code", "markdown"},
	"export format": {"jsonl", "markdown"},
	"locomo only":   {"hybrid", "text", "vector"},
	"locomo fusion": {"linear", "rrf"},
}

// completeFlagValues registers flagValues with every command under c.
func completeFlagValues(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		vals, ok := flagValues[c.Name()+" "+f.Name]
		if !ok {
			vals, ok = flagValues[f.Name]
		}
		if ok && len(vals) > 0 {
			c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp))
		}
	})
	for _, sub := range c.Commands() {
		completeFlagValues(sub)
	}
}

// argsAreUsage makes every argument check of the commands under c (cobra's
// ExactArgs and the like) a bad command line: exit status 2.
func argsAreUsage(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			if err != nil && !errors.As(err, new(usageError)) && !errors.As(err, new(exitError)) {
				return usageError{err.Error()}
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		argsAreUsage(sub)
	}
}

// noArgs refuses arguments: "NAME takes no arguments".
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{cmd.Name() + " takes no arguments"}
	}
	return nil
}
