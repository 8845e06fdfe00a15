package fts

import (
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
)

// stemCacheCap bounds the words a stem cache keeps (about 40 bytes each).
const stemCacheCap = 1 << 16

// stemCache wraps bleve's snowball English stemmer with a cache of the
// stems it gave: stemming is a pure function of the word, and filling a
// tier view stems the same few thousand words again and again. Safe for
// concurrent use.
type stemCache struct {
	inner analysis.TokenFilter

	mu    sync.RWMutex // guards stems
	stems map[string]string
}

// cacheStems replaces the snowball stemmer of a (an analyzer built by
// newAnalyzers) with a cached one; other analyzers are returned as they
// are.
func cacheStems(a analysis.Analyzer) analysis.Analyzer {
	da, ok := a.(*analysis.DefaultAnalyzer)
	if !ok {
		return a
	}
	out := *da
	out.TokenFilters = append([]analysis.TokenFilter(nil), da.TokenFilters...)
	for i, f := range out.TokenFilters {
		if _, ok := f.(*en.EnglishStemmerFilter); ok {
			out.TokenFilters[i] = &stemCache{inner: f, stems: map[string]string{}}
		}
	}
	return &out
}

func (c *stemCache) Filter(input analysis.TokenStream) analysis.TokenStream {
	var miss analysis.TokenStream
	var words []string
	c.mu.RLock()
	for _, tok := range input {
		if s, ok := c.stems[string(tok.Term)]; ok {
			tok.Term = []byte(s)
		} else {
			miss = append(miss, tok)
			words = append(words, string(tok.Term))
		}
	}
	c.mu.RUnlock()
	if len(miss) == 0 {
		return input
	}
	c.inner.Filter(miss) // stems the missed tokens in place
	c.mu.Lock()
	for i, tok := range miss {
		if len(c.stems) < stemCacheCap {
			c.stems[words[i]] = string(tok.Term)
		}
	}
	c.mu.Unlock()
	return input
}
