package engine

import (
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

// TestDocCacheGeneration: a record read in a transaction that began
// before a Forget's commit is not cached once the Forget dropped it, so
// a forgotten record's text cannot come back and steer later queries;
// reads after the last drop are cached as before.
func TestDocCacheGeneration(t *testing.T) {
	for _, tc := range []struct {
		name   string
		drops  []uint64 // dropped between the reader's generation and its put
		id     uint64
		cached bool
	}{
		{"no drop since the read", nil, 7, true},
		{"the record dropped since", []uint64{7}, 7, false},
		{"another record dropped since", []uint64{9}, 7, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c docCache
			gen := c.generation()
			if tc.drops != nil {
				c.drop(tc.drops...)
			}
			c.put(retrieve.Doc{ID: tc.id, Text: "the old text"}, gen)
			if _, ok := c.get(tc.id); ok != tc.cached {
				t.Fatalf("cached %t, want %t", ok, tc.cached)
			}
			gen = c.generation()
			c.put(retrieve.Doc{ID: tc.id, Text: "read after the drop"}, gen)
			if d, ok := c.get(tc.id); !ok || d.Text != "read after the drop" {
				t.Fatalf("a read after the last drop: %+v, %t", d, ok)
			}
		})
	}
}
