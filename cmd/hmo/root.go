package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// usageTemplate is the help of every command, on stdout for --help and
// on stderr after a bad command line.
const usageTemplate = `usage: {{.UseLine}}{{if .HasAvailableSubCommands}}

commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasExample}}

examples:
{{.Example}}{{end}}{{if .HasAvailableLocalFlags}}

flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

global flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Run '{{.CommandPath}} <command> --help' for a command's flags and examples.{{if not .HasParent}}
The store is in --dir, $HMO_DIR or the user's data directory.{{end}}{{end}}
`

const helpTemplate = `{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}`

// newRoot returns the hmo command with its subcommands.
func newRoot(env *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "hmo <command> [flags] [args]",
		Short: "long-term memory for LLM agents, on your device",
		Long: `hmo is a long-term memory engine for LLM agents that runs on your own device:
one store per user, tiered recall (HMO), local models through Ollama.`,
		Example: `  hmo add "I'm allergic to shellfish" --scope me
  hmo recall "what am I allergic to" -k 3
  hmo import notes.jsonl
  hmo serve --detach`,
		Version:       buildVersion(),
		SilenceErrors: true,
		SilenceUsage:  true,
		// Flags after the arguments are flags too; "--" ends them.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
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
			fmt.Fprint(env.stderr, cmd.UsageString())
			return exitError{2}
		},
	}
	root.SetIn(env.stdin)
	root.SetOut(env.stdout)
	root.SetErr(env.stderr)
	root.SetUsageTemplate(usageTemplate)
	root.SetHelpTemplate(helpTemplate)
	root.SetVersionTemplate("hmo {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	root.AddCommand(
		newInitCmd(env),
		newAddCmd(env),
		newImportCmd(env),
		newRecallCmd(env),
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
		newUICmd(env),
	)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Short = "help about any command"
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

// noArgs refuses arguments: "NAME takes no arguments".
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{cmd.Name() + " takes no arguments"}
	}
	return nil
}
