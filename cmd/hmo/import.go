package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
	"github.com/hmo-dev/hmo/locomo"
)

// importBatch is the number of records committed per transaction.
const importBatch = 1000

// importFormats are the formats import reads.
const importFormats = "jsonl, locomo, claude-code or markdown"

func runImport(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "import", "FILE (or - for stdin; for markdown also a directory)")
	var sf storeFlags
	sf.register(fs)
	format := fs.String("format", "", importFormats+" (default: markdown for .md files and directories, locomo for .json, else jsonl)")
	scope := fs.String("scope", "", "scope of the imported records (claude-code default: the project's git root; markdown default: its 'scope:' headings)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"import needs one file"}
	}
	name := fs.Arg(0)
	src := importSource{env: env, name: name, format: *format, scope: *scope}
	ins, err := src.read()
	if err != nil {
		return err
	}
	e, err := sf.open(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	for i := range ins {
		if err := e.Validate(&ins[i]); err != nil {
			return fmt.Errorf("%s: record %d: %w (nothing imported)", name, i+1, err)
		}
	}
	// Records already stored (an earlier or interrupted run, the hooks)
	// are skipped by the engine, so a re-run is a no-op and an
	// interrupted run resumes.
	added, skipped := 0, 0
	p := newProgress(env, "import")
	for i := 0; i < len(ins); i += importBatch {
		out, err := e.RememberBatch(ctx, engine.Batch{Inputs: ins[i:min(i+importBatch, len(ins))]})
		if err != nil && out == nil {
			return fmt.Errorf("%s: after %d records: %w", name, i, err)
		}
		for _, s := range out {
			if s.Duplicate {
				skipped++
			} else {
				added++
			}
		}
		if err != nil {
			return fmt.Errorf("%s: after %d records: %w", name, i+len(out), err)
		}
		p.update(min(i+importBatch, len(ins)), len(ins))
	}
	fmt.Fprintf(env.stdout, "imported %d record(s)", added)
	if skipped > 0 {
		fmt.Fprintf(env.stdout, ", skipped %d already stored", skipped)
	}
	fmt.Fprintln(env.stdout)
	sf.models.settle(ctx, env, e)
	return nil
}

// importSource is what import reads: a file (or stdin, or a directory of
// Markdown notes) in one format.
type importSource struct {
	env    *env
	name   string
	format string // resolved by read
	scope  string // --scope
}

func (s *importSource) read() ([]engine.Input, error) {
	fi, statErr := os.Stat(s.name)
	isDir := statErr == nil && fi.IsDir()
	if s.format == "" {
		s.format = "jsonl"
		switch {
		case isDir || strings.HasSuffix(s.name, ".md"):
			s.format = "markdown"
		case strings.HasSuffix(s.name, ".json"):
			s.format = "locomo"
		}
	}
	if s.format == "md" {
		s.format = "markdown"
	}
	if s.format == "markdown" && isDir {
		return s.wrap(markdownDir(s.name, s.scope))
	}
	if isDir {
		return nil, fmt.Errorf("%s is a directory (only markdown imports a directory)", s.name)
	}
	var r io.Reader = s.env.stdin
	if s.name != "-" {
		f, err := os.Open(s.name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	switch s.format {
	case "jsonl":
		return s.wrap(jsonl.Read(r))
	case "locomo":
		convs, err := locomo.Read(r)
		return s.wrap(locomoInputs(convs), err)
	case "claude-code":
		return s.wrap(claudeCodeInputs(r, s.scope))
	case "markdown":
		return s.wrap(markdownInputs(r, s.name, s.scope))
	}
	return nil, usageError{fmt.Sprintf("unknown format %q (want %s)", s.format, importFormats)}
}

// wrap names the file in a read error.
func (s *importSource) wrap(ins []engine.Input, err error) ([]engine.Input, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w (nothing imported)", s.name, err)
	}
	return ins, nil
}

// locomoInputs flattens conversations into records, dated as
// locomo.Conversation.Inputs says.
func locomoInputs(convs []locomo.Conversation) []engine.Input {
	var out []engine.Input
	for i := range convs {
		for _, s := range convs[i].Inputs() {
			out = append(out, s.Inputs...)
		}
	}
	return out
}
