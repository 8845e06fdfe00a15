package fts

import (
	"context"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/engine"
)

// TestHoldsAll: Index and Memory say that a document passing keep holds
// every term of a query in its text exactly when one does, by a brute
// force over the live documents' analysed text (context and role do not
// count; deleted and replaced documents are as they now are).
func TestHoldsAll(t *testing.T) {
	x, live := segmentedIndex(t)
	m, err := NewMemoryWith(nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]engine.TextDoc, 0, len(live))
	for _, d := range live {
		docs = append(docs, d)
	}
	if err := m.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	if x.Analysis() != m.Analysis() || x.Analysis() != string(DefaultAnalyzer) {
		t.Fatalf("Analysis: index %q, memory %q, want %q", x.Analysis(), m.Analysis(), DefaultAnalyzer)
	}
	ctx := context.Background()
	qs := append(slices.Clone(queries), "cat mat", "cat mat dog", "budget plan lake", "the", "painting lake notes", "unheard")
	checked := 0
	for _, q := range qs {
		want := m.queryTerms(q)
		var holders []uint64 // brute force: documents whose text holds every term
		for id, d := range live {
			have := map[string]bool{}
			for _, w := range m.queryTerms(d.Text) {
				have[w] = true
			}
			if !slices.ContainsFunc(want, func(w string) bool { return !have[w] }) {
				holders = append(holders, id)
			}
		}
		slices.Sort(holders)
		keeps := []struct {
			name string
			keep func(uint64) bool
			want bool
		}{
			{"all", func(uint64) bool { return true }, len(holders) > 0},
			{"none", func(uint64) bool { return false }, false},
			{"all but the holders", func(id uint64) bool { _, ok := slices.BinarySearch(holders, id); return !ok }, false},
		}
		if len(holders) > 0 {
			last := holders[len(holders)-1]
			keeps = append(keeps, struct {
				name string
				keep func(uint64) bool
				want bool
			}{"the last holder", func(id uint64) bool { return id == last }, true})
		}
		for _, k := range keeps {
			w := k.want
			if len(want) == 0 {
				w = true // no term: nothing rules it out
			}
			for _, ix := range []engine.TermHolder{x, m} {
				got, err := ix.HoldsAll(ctx, q, k.keep)
				if err != nil {
					t.Fatal(err)
				}
				if got != w {
					t.Errorf("%T.HoldsAll(%q, %s) = %t, want %t (%d holders)", ix, q, k.name, got, w, len(holders))
				}
				checked++
			}
		}
	}
	if checked < 4*len(qs) {
		t.Fatalf("only %d checks", checked)
	}
}
