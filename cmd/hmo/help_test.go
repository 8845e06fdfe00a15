package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"unicode"

	"github.com/hmo-dev/hmo/internal/linkdeps"
	"github.com/spf13/cobra"
)

// usageTemplate and helpTemplate are the cobra templates hmo's usage and
// help were printed with until writeUsage and writeHelp replaced them.
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

// templateFuncs are the functions of cobra's that the templates use.
var templateFuncs = template.FuncMap{
	"rpad":                    func(s string, n int) string { return fmt.Sprintf(fmt.Sprintf("%%-%ds", n), s) },
	"trimTrailingWhitespaces": func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) },
}

func execTemplate(t *testing.T, text string, c *cobra.Command) string {
	t.Helper()
	var b bytes.Buffer
	if err := template.Must(template.New("t").Funcs(templateFuncs).Parse(text)).Execute(&b, c); err != nil {
		t.Fatalf("%s: %v", c.CommandPath(), err)
	}
	return b.String()
}

// commandTree is every command under c, c first.
func commandTree(c *cobra.Command) []*cobra.Command {
	all := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		all = append(all, commandTree(sub)...)
	}
	return all
}

// sampleTree is a tree with what hmo's commands lack today: persistent
// (global) flags, a hidden command, a description with trailing blanks,
// a command that is only a group.
func sampleTree() *cobra.Command {
	root := &cobra.Command{Use: "hmo <command>", Short: "root", Run: func(*cobra.Command, []string) {}}
	root.PersistentFlags().String("dir", "", "store directory")
	group := &cobra.Command{Use: "group", Short: "a group  \n\t"}
	leaf := &cobra.Command{Use: "leaf ARG", Long: "leaf\n\n  with a verbatim line   \n", Example: "  hmo group leaf x", Run: func(*cobra.Command, []string) {}}
	leaf.Flags().Bool("json", false, "print JSON")
	hidden := &cobra.Command{Use: "hidden", Short: "hidden", Hidden: true, Run: func(*cobra.Command, []string) {}}
	bare := &cobra.Command{Use: "bare", DisableFlagsInUseLine: true, Run: func(*cobra.Command, []string) {}}
	group.AddCommand(leaf, hidden)
	root.AddCommand(group, bare)
	root.SetUsageFunc(func(c *cobra.Command) error { writeUsage(c.OutOrStderr(), c); return nil })
	root.InitDefaultHelpCmd()
	return root
}

// TestHelpMatchesTemplates: writeUsage and writeHelp print, for every
// command of hmo (and of a tree with global flags and hidden commands),
// the text the cobra templates they replace printed.
func TestHelpMatchesTemplates(t *testing.T) {
	var out, errb bytes.Buffer
	trees := map[string]*cobra.Command{
		"hmo":    newRoot(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}),
		"sample": sampleTree(),
	}
	for name, root := range trees {
		for _, c := range commandTree(root) {
			c.InitDefaultHelpFlag() // as cobra does before it prints --help
			t.Run(name+"/"+c.CommandPath(), func(t *testing.T) {
				var got bytes.Buffer
				writeUsage(&got, c)
				if want := execTemplate(t, usageTemplate, c); got.String() != want {
					t.Errorf("usage:\n%s\nthe template printed:\n%s", got.String(), want)
				}
				got.Reset()
				writeHelp(&got, c)
				if want := execTemplate(t, helpTemplate, c); got.String() != want {
					t.Errorf("help:\n%s\nthe template printed:\n%s", got.String(), want)
				}
			})
		}
	}
	if out.Len() > 0 || errb.Len() > 0 {
		t.Errorf("building the commands printed %q, %q", out.String(), errb.String())
	}
}

// TestLinkKeepsNoReflectMethod: nothing reachable in hmo calls
// reflect.Value.Method or MethodByName (text/template does, and cobra's
// help templates reach it). With one reachable, the linker keeps every
// exported method of every type stored in an interface: 4.7 MB of the
// stripped binary. The failure shows the chain from main to the first
// such function (linkdeps reads the linker's -dumpdep).
func TestLinkKeepsNoReflectMethod(t *testing.T) {
	if testing.Short() {
		t.Skip("links hmo")
	}
	// -gcflags=-dwarf=false (the main package only; no effect on what
	// is reachable) gives this build a compile action of its own: cmd/go
	// caches the linker's output with the main package's compile action
	// and prints it again at the next build that shares it, so without it
	// the next `make build` would print the 10 MB dump.
	cmd := exec.Command("go", "build", "-trimpath", "-gcflags=-dwarf=false", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "hmo"), ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var dump bytes.Buffer
	cmd.Stderr = &dump
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build: %v\n%.2000s", err, dump.String())
	}
	g, err := linkdeps.Read(&dump)
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() < 1000 {
		t.Fatalf("the linker's dump lists %d symbols: not hmo's", g.Len())
	}
	if fs := g.ReflectMethod(); len(fs) > 0 {
		t.Errorf("%d reachable functions call reflect.Value.Method or MethodByName, so the linker keeps every exported method; the first, %s, is reached by:\n  %s",
			len(fs), fs[0], strings.Join(g.Why(fs[0]), "\n  <- "))
	}
}
