package fts

import "github.com/blevesearch/bleve/v2/analysis"

// A tier's index analyses the records promoted into it one question at a
// time: about nine records, each with its context turn, per question
// that reaches the archive. Building bleve's token stream for each (a
// token object and a term copy per word, the stop filter's new stream,
// each stem copied into its token) cost several times the lookups the
// analysis comes down to for an ASCII text whose stems the index has
// cached: the words as asciiTokenizer finds them, the token filters
// applied in place (termCounter.words), each word's cached stem. Those
// texts are analysed that way; any other goes to the analyzer.

// textTerms returns the terms of each of texts, in order, as m's
// analyzer gives them, empty terms left out. A text's terms are
// substrings of one string, or the stem cache's own strings. From
// parallelTexts texts on it runs on up to analysisWorkers goroutines,
// which return before it does.
func (m *Memory) textTerms(texts []string) [][]string {
	out := make([][]string, len(texts))
	work := func(first, step int) {
		var scratch []byte
		var words []countWord
		for i := first; i < len(texts); i += step {
			var ok bool
			if m.counter != nil {
				out[i], ok, scratch, words = m.counter.terms(texts[i], scratch, words)
			}
			if !ok {
				out[i] = analysedTerms(m.analyzer.Analyze([]byte(texts[i])))
			}
		}
	}
	if len(texts) < parallelTexts {
		work(0, 1) // a promotion's few texts: no goroutine
	} else {
		inParallel(len(texts), work)
	}
	return out
}

// terms returns text's non-empty terms as the analyzer gives them, or
// ok false when the analyzer must analyse text itself (a byte beyond
// ASCII, a word whose stem is not cached). scratch and words are
// buffers it may grow and returns.
func (c *termCounter) terms(text string, scratch []byte, words []countWord) (_ []string, ok bool, _ []byte, _ []countWord) {
	if !isASCIIText(text) {
		return nil, false, scratch, words
	}
	b := append(scratch[:0], text...)
	words = c.words(b, words[:0])
	n := 0
	for _, w := range words {
		if w.end > w.start {
			n++
		}
	}
	out := make([]string, 0, n)
	stem := c.stemStep()
	if stem == nil {
		s := string(b) // the filtered copy: its words are the terms
		for _, w := range words {
			if w.end > w.start {
				out = append(out, s[w.start:w.end])
			}
		}
		return out, true, b, words
	}
	stem.mu.RLock()
	defer stem.mu.RUnlock()
	for _, w := range words {
		s, hit := stem.stems[string(b[w.start:w.end])]
		if !hit {
			return nil, false, b, words
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out, true, b, words
}

// analysedTerms are the non-empty terms of ts, substrings of one string.
func analysedTerms(ts analysis.TokenStream) []string {
	n := 0
	for _, t := range ts {
		n += len(t.Term)
	}
	all := make([]byte, 0, n)
	ends := make([]int, 0, len(ts))
	for _, t := range ts {
		if len(t.Term) > 0 {
			all = append(all, t.Term...)
			ends = append(ends, len(all))
		}
	}
	s := string(all)
	out := make([]string, len(ends))
	start := 0
	for i, e := range ends {
		out[i], start = s[start:e], e
	}
	return out
}
