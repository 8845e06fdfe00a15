package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
	"github.com/hmo-dev/hmo/locomo"
)

// importBatch is the number of records committed per transaction: 2000,
// the largest round batch the engine indexes in one update (it applies
// up to 2048 change-log entries at a time), so each batch is one text
// index segment; the engine's bulk path indexes it while the next one
// commits.
const importBatch = 2000

// importFormats are the formats import reads.
const importFormats = "jsonl, locomo, claude-code or markdown"

// importFlags are the flags of import.
type importFlags struct {
	store         storeFlags
	format, scope string
	asJSON        bool
}

func newImportCmd(env *env) *cobra.Command {
	var f importFlags
	cmd := &cobra.Command{
		Use:   "import [flags] FILE | - | DIR",
		Short: "import records (jsonl, locomo, claude-code, markdown)",
		Long: `Import records from a file, stdin (-) or, for markdown, an agent's memory directory
(MEMORY.md, CLAUDE.md, memory/*.md). Every record is checked before any is stored:
bad input imports nothing. At 75K records and more, import then builds the vector
index's partition before it exits (about a second at 100K, a few at 1M; a progress
bar on a terminal), so that the commands that open the store next search through it.`,
		Example: `  hmo import notes.jsonl
  hmo export | hmo import - --dir other-store
  hmo import locomo.json --format locomo
  hmo import ~/.claude/projects/x/session.jsonl --format claude-code
  hmo import ~/openclaw-workspace --scope ana`,
		RunE: func(cmd *cobra.Command, args []string) error { return runImport(cmd.Context(), env, &f, args) },
	}
	fs := cmd.Flags()
	f.store.register(fs, withChat|withEmbedder|withEnrichWait|withCreate)
	fs.StringVar(&f.format, "format", "", importFormats+" (default: markdown for .md files and directories, locomo for .json, else jsonl)")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON: {imported, skipped, ids}")
	fs.StringVar(&f.scope, "scope", "", "scope of every imported record (default: the file's own; claude-code: the project's git root; markdown: its 'scope:' headings)")
	return cmd
}

func runImport(ctx context.Context, env *env, f *importFlags, args []string) (err error) {
	sf := &f.store
	if len(args) != 1 {
		return usageError{"import needs one file"}
	}
	name := args[0]
	src := importSource{env: env, name: name, format: f.format, scope: f.scope}
	ins, err := src.read()
	if err != nil {
		return err
	}
	e, err := sf.open(env)
	if err != nil {
		return fmt.Errorf("%w (nothing imported)", err)
	}
	defer closeStore(e, &err)
	for i := range ins {
		if err := e.Validate(&ins[i]); err != nil {
			return fmt.Errorf("%s: %s: %w (nothing imported)", name, src.where(i), err)
		}
	}
	// Records already stored (an earlier or interrupted run, the hooks)
	// are skipped by the engine, so a re-run is a no-op and an
	// interrupted run resumes.
	added, skipped := 0, 0
	p := newProgress(env, "import")
	ids := make([]uint64, 0, len(ins))
	committed := 0
	batches := func(yield func(engine.Batch) bool) {
		for i := 0; i < len(ins); i += importBatch {
			if !yield(engine.Batch{Inputs: ins[i:min(i+importBatch, len(ins))]}) {
				return
			}
		}
	}
	// The engine indexes each batch while the next one commits.
	_, err = e.RememberBatches(ctx, batches, func(_ int, out []engine.Stored) {
		for _, s := range out {
			if s.Duplicate {
				skipped++
			} else {
				added++
				ids = append(ids, s.ID)
			}
		}
		committed += len(out)
		p.update(committed, len(ins))
	})
	if err != nil {
		// A batch that committed before a later step failed (an index
		// update) counts.
		return fmt.Errorf("%s: %d of %d records committed, then: %w", name, committed, len(ins), err)
	}
	defer sf.models.settle(ctx, env, e)
	// What the vector index would build in the background after the next
	// Open (its partition, at 75K vectors and more) is built now: the
	// short-lived commands that open the store next stop such a build
	// at their Close. The records are committed whatever it says.
	bp := newProgress(env, "vector index")
	if err := e.FinishBuilds(ctx, func(done, total int64) { bp.update(int(100*done/max(1, total)), 100) }); err != nil {
		fmt.Fprintf(env.stderr, "hmo import: warning: %s (the records are imported; the index is built in the background by the next long-running process)\n", strings.TrimPrefix(err.Error(), "hmo: "))
	}
	if f.asJSON {
		return writeJSON(env, importResult{Imported: added, Skipped: skipped, IDs: ids})
	}
	fmt.Fprintf(env.stdout, "imported %d record(s)", added)
	if skipped > 0 {
		fmt.Fprintf(env.stdout, ", skipped %d already stored", skipped)
	}
	fmt.Fprintln(env.stdout)
	return nil
}

// importResult is what import --json prints.
type importResult struct {
	Imported int      `json:"imported"`
	Skipped  int      `json:"skipped"` // records already stored (same scope and text, or same sources)
	IDs      []uint64 `json:"ids"`     // of the imported records, in input order
}

// importSource is what import reads: a file (or stdin, or a directory of
// Markdown notes) in one format.
type importSource struct {
	env    *env
	name   string
	format string // resolved by read
	scope  string // --scope
	isDir  bool
	ins    []engine.Input
	lines  []int // jsonl: the line of each record
}

// where locates input i for the user: its line, or the turn it was read
// from.
func (s *importSource) where(i int) string {
	switch {
	case i < len(s.lines):
		return fmt.Sprintf("line %d", s.lines[i])
	case s.format == "markdown" && len(s.ins[i].Sources) == 1:
		// markdown:FILE:LINE
		src := strings.TrimPrefix(s.ins[i].Sources[0], "markdown:")
		if j := strings.LastIndexByte(src, ':'); j > 0 {
			if s.isDir {
				return src[:j] + " line " + src[j+1:]
			}
			return "line " + src[j+1:]
		}
	case len(s.ins[i].Sources) == 1:
		return "turn " + s.ins[i].Sources[0]
	}
	return fmt.Sprintf("record %d", i+1)
}

// read reads the records, keeping them for where.
func (s *importSource) read() ([]engine.Input, error) {
	ins, err := s.readAll()
	s.ins = ins
	return ins, err
}

func (s *importSource) readAll() ([]engine.Input, error) {
	fi, statErr := os.Stat(s.name)
	isDir := statErr == nil && fi.IsDir()
	s.isDir = isDir
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
		ins, lines, err := jsonl.ReadNumbered(r)
		s.lines = lines
		return s.wrap(s.scoped(ins, err))
	case "locomo":
		convs, err := locomo.Read(r)
		return s.wrap(s.scoped(locomoInputs(convs), err))
	case "claude-code":
		return s.wrap(claudeCodeInputs(r, s.scope))
	case "markdown":
		return s.wrap(markdownInputs(r, s.name, s.scope))
	}
	return nil, usageError{fmt.Sprintf("unknown format %q (want %s)", s.format, importFormats)}
}

// scoped puts the records in --scope, when given.
func (s *importSource) scoped(ins []engine.Input, err error) ([]engine.Input, error) {
	if s.scope != "" {
		for i := range ins {
			ins[i].Scope = s.scope
		}
	}
	return ins, err
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
