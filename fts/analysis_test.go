package fts

import (
	"sync/atomic"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/hmo-dev/hmo/engine"
)

// countingAnalyzer counts the texts it analyses.
type countingAnalyzer struct {
	analysis.Analyzer
	n atomic.Int64
}

func (c *countingAnalyzer) Analyze(b []byte) analysis.TokenStream {
	c.n.Add(1)
	return c.Analyzer.Analyze(b)
}

// A batch whose records take the text before them as context, as the
// engine indexes a conversation, is analysed once per distinct text, by
// Index and by Memory: analysis was most of the text index's share of
// ingest, and each text was analysed four times (as a record's text and
// as the next one's context, to count field lengths and again by bleve).
func TestApplyAnalysesEachTextOnce(t *testing.T) {
	turns := []string{"My cat Pixel hides under the sofa.", "What colour is Pixel?", "She is grey with white paws.",
		"Does she like the garden?", "Only when it is sunny.", "What colour is Pixel?"}
	var docs []engine.TextDoc
	for i, text := range turns {
		d := engine.TextDoc{ID: uint64(i + 1), Text: text, Role: []string{"user", "assistant"}[i%2], Scope: "maya", Session: "s1"}
		if i > 0 {
			d.Context = turns[i-1]
		}
		docs = append(docs, d)
	}
	distinct := map[string]bool{}
	for i := range docs {
		for _, f := range docFields(&docs[i]) {
			if f != "" {
				distinct[f] = true
			}
		}
	}
	for _, tc := range []struct {
		name  string
		apply func(t *testing.T, c *countingAnalyzer) error
	}{
		{"Index", func(t *testing.T, c *countingAnalyzer) error {
			x, err := Open(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			// Without the counter, which counts texts without the
			// analyzer, every text goes to Apply's analyzer.
			c.Analyzer, x.pool.text, x.counter = x.pool.text, c, nil
			return x.Apply(docs, nil, 1)
		}},
		{"Memory", func(t *testing.T, c *countingAnalyzer) error {
			m, err := NewMemory("")
			if err != nil {
				t.Fatal(err)
			}
			c.Analyzer, m.analyzer = m.analyzer, c
			return m.Apply(docs, nil, 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &countingAnalyzer{}
			if err := tc.apply(t, c); err != nil {
				t.Fatal(err)
			}
			if got := c.n.Load(); got != int64(len(distinct)) {
				t.Errorf("%d texts analysed for %d documents with %d distinct field texts", got, len(docs), len(distinct))
			}
		})
	}
}
