package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newManCmd(env *env) *cobra.Command {
	return &cobra.Command{
		Use:   "man [DIR]",
		Short: "write the manual pages (hmo.1, hmo-add.1, ...) into DIR (default ./man)",
		Example: `  hmo man /usr/local/share/man/man1
  hmo man && man ./man/hmo-recall.1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "man"
			switch len(args) {
			case 0:
			case 1:
				dir = args[0]
			default:
				return usageError{"man takes at most one directory"}
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			date, err := manDate(env.getenv)
			if err != nil {
				return err
			}
			h := manHeader{title: "HMO", section: "1", date: date, source: "hmo " + buildVersion(), manual: "hmo manual"}
			if err := writeManTree(cmd.Root(), h, dir); err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "manual pages written to %s\n", dir)
			return nil
		},
	}
}

// manHeader is the .TH line of a page.
type manHeader struct{ title, section, date, source, manual string }

// manDate is the month a page is dated: $SOURCE_DATE_EPOCH (Unix
// seconds) for reproducible builds, else now.
func manDate(getenv func(string) string) (string, error) {
	t := time.Now()
	if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return "", usageError{fmt.Sprintf("SOURCE_DATE_EPOCH=%q: want Unix seconds", s)}
		}
		t = time.Unix(sec, 0).UTC()
	}
	return t.Format("Jan 2006"), nil
}

// writeManTree writes the page of cmd and of every available subcommand
// into dir, named after the command path (hmo-eval-locomo.1). The pages
// have the sections of cobra's own man-page generator.
func writeManTree(cmd *cobra.Command, h manHeader, dir string) error {
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			if err := writeManTree(c, h, dir); err != nil {
				return err
			}
		}
	}
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-")
	return os.WriteFile(filepath.Join(dir, name+"."+h.section), manPage(cmd, h), 0o644)
}

// manPage is cmd's manual page in roff (man macros). The help texts are
// plain text: a blank line separates paragraphs, tab-indented lines are
// verbatim, and a line starting with '#' is a subheading (cobra's
// completion commands use these).
func manPage(cmd *cobra.Command, h manHeader) []byte {
	cmd.InitDefaultHelpCmd()
	cmd.InitDefaultHelpFlag()
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-")
	var b bytes.Buffer
	fmt.Fprintf(&b, ".nh\n.TH %s %s %s %s %s\n\n", roffArg(h.title), roffArg(h.section), roffArg(h.date), roffArg(h.source), roffArg(h.manual))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n\n", roffLine(name), roffLine(cmd.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n\\fB%s\\fP\n\n", roffLine(cmd.UseLine()))
	long := cmd.Long
	if long == "" {
		long = cmd.Short
	}
	b.WriteString(".SH DESCRIPTION\n")
	manText(&b, long)
	manFlags(&b, "OPTIONS", cmd.NonInheritedFlags())
	manFlags(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", cmd.InheritedFlags())
	if cmd.Example != "" {
		b.WriteString("\n.SH EXAMPLE\n.EX\n")
		for _, l := range strings.Split(strings.TrimRight(cmd.Example, "\n"), "\n") {
			b.WriteString(roffLine(l) + "\n")
		}
		b.WriteString(".EE\n")
	}
	var also []string
	if cmd.HasParent() {
		also = append(also, strings.ReplaceAll(cmd.Parent().CommandPath(), " ", "-"))
	}
	children := slices.Clone(cmd.Commands())
	slices.SortFunc(children, func(a, b *cobra.Command) int { return strings.Compare(a.Name(), b.Name()) })
	for _, c := range children {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			also = append(also, name+"-"+c.Name())
		}
	}
	if len(also) > 0 {
		b.WriteString("\n.SH SEE ALSO\n")
		for i, a := range also {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "\\fB%s(%s)\\fP", roffLine(a), h.section)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// manText writes a help text as paragraphs, verbatim blocks and
// subheadings.
func manText(b *bytes.Buffer, text string) {
	para, verbatim := false, false
	end := func() {
		if verbatim {
			b.WriteString(".EE\n")
		}
		para, verbatim = false, false
	}
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			end()
		case strings.HasPrefix(l, "\t"):
			if !verbatim {
				end()
				b.WriteString(".EX\n")
				verbatim = true
			}
			b.WriteString(roffLine(strings.TrimPrefix(l, "\t")) + "\n")
		case strings.HasPrefix(l, "#"):
			end()
			b.WriteString(".SS " + roffLine(strings.TrimSpace(strings.TrimLeft(l, "#"))) + "\n")
		default:
			if verbatim {
				end()
			}
			if !para {
				b.WriteString(".PP\n")
				para = true
			}
			b.WriteString(roffLine(l) + "\n")
		}
	}
	end()
}

// manFlags writes a section listing flags, if any is visible.
func manFlags(b *bytes.Buffer, title string, flags *pflag.FlagSet) {
	if !flags.HasAvailableFlags() {
		return
	}
	fmt.Fprintf(b, "\n.SH %s\n", title)
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		b.WriteString(".TP\n")
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			fmt.Fprintf(b, "\\fB-%s\\fP, ", roffLine(f.Shorthand))
		}
		fmt.Fprintf(b, "\\fB--%s\\fP", roffLine(f.Name))
		def := f.DefValue
		if f.Value.Type() == "string" {
			def = strconv.Quote(def)
		}
		if f.NoOptDefVal != "" {
			fmt.Fprintf(b, "[=%s]\n", roffLine(def))
		} else {
			fmt.Fprintf(b, "=%s\n", roffLine(def))
		}
		b.WriteString(roffLine(f.Usage) + "\n")
	})
}

// roffLine escapes text for one line of roff: backslashes, and a period
// or an apostrophe that would start a request.
func roffLine(s string) string {
	s = strings.ReplaceAll(s, "\\", "\\e")
	s = strings.ReplaceAll(s, "\n", " ")
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = "\\&" + s
	}
	return s
}

// roffArg is s as a quoted macro argument.
func roffArg(s string) string {
	return `"` + strings.ReplaceAll(roffLine(s), `"`, `""`) + `"`
}
