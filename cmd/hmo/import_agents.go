package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/hmo-dev/hmo/capture"
	"github.com/hmo-dev/hmo/claudecode"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/markdown"
)

// claudeCodeInputs reads a Claude Code transcript's prose turns worth
// keeping and the facts they state, as the hooks capture them (package
// capture), scoped to scope or else the project (git root) of the
// session's directory.
func claudeCodeInputs(r io.Reader, scope string) ([]engine.Input, error) {
	turns, err := claudecode.Read(r)
	if err != nil {
		return nil, err
	}
	c := capture.New()
	out := make([]engine.Input, 0, len(turns))
	roots := map[string]string{} // cwd -> project scope
	for _, t := range turns {
		if !c.Keep(t.Text).Keep {
			continue
		}
		s := scope
		if s == "" {
			if _, ok := roots[t.CWD]; !ok {
				roots[t.CWD] = claudecode.ProjectScope(t.CWD)
			}
			s = roots[t.CWD]
		}
		turn := engine.Input{Scope: s, Session: t.SessionID, Role: t.Role, Time: t.Time, Text: t.Text, Sources: []string{t.Source()}}
		out = append(out, turn)
		for j, f := range c.Distill(t.Text) {
			fact := turn
			fact.Role, fact.Text, fact.Sources = capture.RoleFact, f.Text, capture.FactSources(t.Source(), j+1)
			out = append(out, fact)
		}
	}
	return out, nil
}

// markdownInputs reads one Markdown memory file. scope, if set, overrides
// the file's scope headings.
func markdownInputs(r io.Reader, name, scope string) ([]engine.Input, error) {
	items, err := markdown.Parse(r, name)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(name)
	out := make([]engine.Input, len(items))
	for i, it := range items {
		s := it.Scope
		if scope != "" {
			s = scope
		}
		out[i] = engine.Input{Scope: s, Time: it.Date, Text: it.Text,
			Sources: []string{"markdown:" + base + ":" + strconv.Itoa(it.Line)}}
	}
	return out, nil
}

// markdownDir reads an agent's memory directory: MEMORY.md, CLAUDE.md and
// the daily notes memory/*.md, in that order.
func markdownDir(dir, scope string) ([]engine.Input, error) {
	var files []string
	for _, n := range []string{"MEMORY.md", "CLAUDE.md"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			files = append(files, filepath.Join(dir, n))
		}
	}
	notes, err := filepath.Glob(filepath.Join(dir, "memory", "*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(notes)
	files = append(files, notes...)
	if len(files) == 0 {
		return nil, fmt.Errorf("no MEMORY.md, CLAUDE.md or memory/*.md in %s", dir)
	}
	var out []engine.Input
	for _, f := range files {
		ins, err := markdownFile(f, scope)
		if err != nil {
			return nil, err
		}
		out = append(out, ins...)
	}
	return out, nil
}

func markdownFile(name, scope string) ([]engine.Input, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ins, err := markdownInputs(f, name, scope)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ins, nil
}
