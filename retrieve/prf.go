package retrieve

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/hmo-dev/hmo/internal/keysort"
)

// PRFOptions configure pseudo-relevance feedback (the prf stage, RM3 in
// the simple form): the words that weigh most in the best first-pass
// records are added to the question for a second lexical search, whose
// scores are mixed with the first's.
type PRFOptions struct {
	// Docs is how many first-pass records feed the expansion. Default
	// DefaultPRFDocs.
	Docs int
	// Terms is how many expansion words are added. Default DefaultPRFTerms.
	Terms int
	// Weight is the share of the expanded search in the mixed lexical
	// score, in [0, 1). Default DefaultPRFWeight.
	Weight float64
	// Postings bounds the second search's cost, in postings (one word
	// in one field of one record): when the expanded question's words
	// have more, the second search only rescores the first pass's
	// candidates (Query.TextPool, Query.TextPostings) instead of
	// searching every record. Default DefaultPRFPostings; negative
	// means no bound.
	Postings int
}

// PRF defaults: the usual RM3 settings (a few feedback documents, ten
// terms, the original query kept at half weight). DefaultPRFPostings is
// where searching every record starts to cost more than rescoring the
// first pass's hundred candidates (about 100 ns per posting against
// about 1.5-2 ms, BENCHMARKS.md): a conversation of a few hundred turns
// stays far below it, an archive of 20K records far above.
const (
	DefaultPRFDocs     = 2
	DefaultPRFTerms    = 10
	DefaultPRFWeight   = 0.5
	DefaultPRFPostings = 16384
)

// expand runs the second lexical search with the words of the best
// first-pass lexical candidates and mixes it into text: each list is
// normalised by its best score and mixed (1-w)·first + w·second.
func expand(ctx context.Context, o *PRFOptions, q *Query, src Source, text []Hit, c int) ([]Hit, error) {
	top := text[:min(o.Docs, len(text))]
	ids := make([]uint64, len(top))
	for i, h := range top {
		ids[i] = h.ID
	}
	docs, err := src.Docs(ids)
	if err != nil {
		return nil, err
	}
	if len(docs) != len(top) || len(top) == 0 {
		return text, nil
	}
	inQuery := map[string]bool{}
	for _, w := range contentWords(q.Text) {
		inQuery[w] = true
	}
	weight := map[string]float64{}
	best := top[0].Score
	var words []string
	for i := range docs {
		d := &docs[i]
		if d.ID == 0 || best <= 0 {
			continue
		}
		// RM3 weighs a feedback record by P(Q|D); BM25 is a sum of
		// log-odds, so exp(score - best) stands for it, normalised to
		// the best record.
		pd := math.Exp(top[i].Score - best)
		// The record's content words as its Doc keeps them (contentWords
		// of its text, analysed once).
		words = words[:0]
		d.eachContentWord(func(w string) { words = append(words, w) })
		for _, w := range words {
			if !inQuery[w] {
				weight[w] += pd / float64(len(words))
			}
		}
	}
	if len(weight) == 0 {
		return text, nil
	}
	// The heaviest words, ties by the word: a strict order (the words
	// are distinct, the weights finite), so sorting the pairs leaves the
	// order sorting the words by their weights in the map did, without
	// two map lookups a comparison.
	type termWeight struct {
		word   string
		weight float64
	}
	ranked := make([]termWeight, 0, len(weight))
	for w, v := range weight {
		ranked = append(ranked, termWeight{w, v})
	}
	slices.SortFunc(ranked, func(a, b termWeight) int {
		if a.weight != b.weight {
			if a.weight > b.weight {
				return -1
			}
			return 1
		}
		return strings.Compare(a.word, b.word)
	})
	terms := make([]string, 0, min(o.Terms, len(ranked)))
	for _, tw := range ranked[:min(o.Terms, len(ranked))] {
		terms = append(terms, tw.word)
	}
	eq := *q
	eq.Text = q.Text + " " + strings.Join(terms, " ")
	if len(text) >= c {
		// BM25 only adds: the expanded question scores each of the c
		// first-pass records at least as high. The margin absorbs the
		// rounding of sums in another order.
		eq.TextFloor = text[c-1].Score * (1 - 1e-9)
	}
	if o.Postings > 0 {
		// On a large archive the second search rescores the first
		// pass's candidates instead of searching again.
		eq.TextPool = make([]uint64, len(text))
		for i, h := range text {
			eq.TextPool[i] = h.ID
		}
		eq.TextPostings = o.Postings
	}
	second, err := src.Text(ctx, &eq, c)
	if err != nil {
		return nil, err
	}
	return mixLists(text, second, o.Weight), nil
}

// mixLists merges two scored lists, each divided by its best score.
func mixLists(a, b []Hit, w float64) []Hit {
	max1 := func(l []Hit) float64 {
		m := 0.0
		for _, h := range l {
			m = max(m, h.Score)
		}
		if m == 0 {
			return 1
		}
		return m
	}
	ma, mb := max1(a), max1(b)
	idx := takePlaces(len(a) + len(b))
	defer dropPlaces(idx)
	// The places first (a's in order, then b's records a lacks), so that
	// out is made at the size of the union: b holds most of a.
	for i, h := range a {
		idx.put(h.ID, i)
	}
	n := len(a)
	for _, h := range b {
		if _, ok := idx.get(h.ID); !ok {
			idx.put(h.ID, n)
			n++
		}
	}
	out := make([]Hit, 0, n)
	for _, h := range a {
		out = append(out, Hit{ID: h.ID, Score: (1 - w) * h.Score / ma, Coverage: h.Coverage})
	}
	out = out[:n]
	for _, h := range b {
		i, _ := idx.get(h.ID)
		out[i].ID = h.ID
		out[i].Score += w * h.Score / mb
	}
	// The stable order by score, descending: on keys of the score and
	// the place (distinct keys, so any sort leaves the stable order).
	if keysort.SortDescending(out, func(i int) (float64, uint64) { return out[i].Score, uint64(i) }) {
		return out
	}
	// A NaN score: sort.SliceStable's algorithm without reflection (the
	// same stable order, NaN included: cmp is the order "less" gives).
	slices.SortStableFunc(out, func(x, y Hit) int {
		switch {
		case x.Score > y.Score:
			return -1
		case y.Score > x.Score:
			return 1
		}
		return 0
	})
	return out
}
