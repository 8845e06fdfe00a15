// Package linkdeps reads the Go linker's dependency dump, the standard
// error of
//
//	go build -ldflags=-dumpdep ./cmd/hmo
//
// and answers why the linker kept a symbol: the chain of symbols from the
// program's entry point to it. The dump has one line "FROM -> TO" for
// each symbol, written when the linker first marks TO reachable; a
// function that calls reflect.Value.Method or MethodByName is marked
// "<ReflectMethod>". One such reachable function makes the linker keep
// every exported method of every type that is stored in an interface.
package linkdeps

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ErrNotDump is returned by Read for input with no dependency line.
var ErrNotDump = errors.New("linkdeps: no \"FROM -> TO\" line: not a go build -ldflags=-dumpdep dump")

// The linker's marks after a symbol name: a function that calls
// reflect.Value.Method or MethodByName, and a type converted to an
// interface.
const (
	reflectMark = " <ReflectMethod>"
	ifaceMark   = " <UsedInIface>"
)

// Graph is the dump: each reachable symbol with the symbol that first
// reached it.
type Graph struct {
	parent  map[string]string
	order   []string // symbols in the order reached
	reflect []string // functions marked <ReflectMethod>, in the order reached
}

// Read parses a dump. Lines without " -> " (the package header) are
// skipped; symbol names are returned without the linker's marks.
func Read(r io.Reader) (*Graph, error) {
	g := &Graph{parent: map[string]string{}}
	marked := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		for _, s := range []*string{&from, &to} {
			*s = strings.TrimSuffix(*s, ifaceMark)
			if name, ok := strings.CutSuffix(*s, reflectMark); ok {
				*s = name
				if !marked[name] {
					marked[name] = true
					g.reflect = append(g.reflect, name)
				}
			}
		}
		if _, seen := g.parent[to]; !seen {
			g.parent[to] = from
			g.order = append(g.order, to)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("linkdeps: %w", err)
	}
	if len(g.order) == 0 {
		return nil, ErrNotDump
	}
	return g, nil
}

// Len is the number of reachable symbols.
func (g *Graph) Len() int { return len(g.order) }

// ReflectMethod is the functions the linker marked <ReflectMethod>, in
// the order it reached them; empty when dead-code elimination of
// methods was not disabled.
func (g *Graph) ReflectMethod() []string { return g.reflect }

// auxSuffix ends the names of a function's auxiliary symbols (stack
// objects, argument info). The linker merges identical ones under one of
// their names, so the name of one says nothing about why it is kept.
var auxSuffix = []string{".stkobj", ".arginfo0", ".arginfo1", ".argliveinfo", ".opendefer", ".wrapinfo"}

// Match is the first reachable symbol whose name contains substr, or "";
// auxiliary symbols (stack objects, argument info) are not matched.
func (g *Graph) Match(substr string) string {
	for _, s := range g.order {
		if strings.Contains(s, substr) && !slices.ContainsFunc(auxSuffix, func(x string) bool { return strings.HasSuffix(s, x) }) {
			return s
		}
	}
	return ""
}

// Why is the chain that kept sym: sym, the symbol that reached it, and so
// on to the entry point. It is nil if sym is not in the dump.
func (g *Graph) Why(sym string) []string {
	if _, ok := g.parent[sym]; !ok {
		return nil
	}
	chain := []string{sym}
	seen := map[string]bool{sym: true}
	for s, ok := g.parent[sym]; ok && !seen[s]; s, ok = g.parent[s] {
		chain = append(chain, s)
		seen[s] = true
	}
	return chain
}
