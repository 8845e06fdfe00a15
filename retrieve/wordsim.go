package retrieve

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/hmo-dev/hmo/internal/vecscan"
)

// Lexicon is implemented by a Source that can embed single words (the
// engine's embedder, cached). Vectors are unit length; a word the
// embedder does not know may come back nil.
type Lexicon interface {
	WordVectors(words []string) ([][]float32, error)
}

// wordSimFloor is the cosine below which two words are not related: the
// soft match of a query word is its best cosine with a record's words
// above the floor, rescaled to [0, 1].
const wordSimFloor = 0.3

// wordSimPrior adds to each candidate w times its soft match with the
// question (softMatch).
func wordSimPrior(q *Query, cands []Candidate, lex Lexicon, w, scale float64) error {
	soft, err := softMatch(q, cands, lex)
	if err != nil || soft == nil {
		return err
	}
	for i := range cands {
		cands[i].Score += w * scale * soft[i]
	}
	return nil
}

// softMatch is, for each candidate, the mean over the question's content
// words of their best soft match with the candidate's own words (1 for
// the same word, less for a related one: "allergy" and "allergic",
// "food" and "peanuts"; 0 below wordSimFloor). Names of speakers are
// left out: the speaker prior weighs them. Nil when the question has no
// content word or the lexicon answers nothing.
//
// It runs for every query's results, so it computes only what the mean
// needs: a question word the candidate holds itself matches 1 without a
// cosine (a cosine of unit vectors is at most 1), a word without a
// vector matches only itself, only the words of candidates that lack
// some question word are embedded (in one call), and each cosine is
// computed once per distinct word and question word.
func softMatch(q *Query, cands []Candidate, lex Lexicon) ([]float64, error) {
	names := speakerNames(cands, false)
	var qwords []string
	for _, t := range contentWords(q.Text) {
		if !slices.Contains(names, t) {
			qwords = append(qwords, t)
		}
	}
	if len(qwords) == 0 {
		return nil, nil
	}
	nq := len(qwords)
	// Every distinct word gets an index, the question's first: qid[j]
	// is question word j's.
	vocab := vocabMaps.take()
	defer vocabMaps.drop(vocab)
	sc := softScratches.Get().(*softScratch)
	defer sc.drop()
	words := sc.words[:0]
	defer func() { sc.words = words[:0] }()
	add := func(t string) int32 {
		w, ok := vocab[t]
		if !ok {
			w = int32(len(words))
			vocab[t] = w
			words = append(words, t)
		}
		return w
	}
	qid := grown(&sc.qid, nq)
	for j, t := range qwords {
		qid[j] = add(t)
	}
	nqd := int32(len(words)) // indices below nqd are question words
	// The candidates' words as indices, in one slice: candidate i's are
	// ids[from[i]:from[i+1]]; held[i*nq+j] says whether it holds
	// question word j itself.
	from := grown(&sc.from, len(cands)+1)
	from[0] = 0
	if cap(sc.ids) < 32*len(cands) {
		sc.ids = make([]int32, 0, 32*len(cands))
	}
	ids := sc.ids[:0]
	held := grown(&sc.held, len(cands)*nq)
	clear(held)
	for i := range cands {
		if d := cands[i].doc; d != nil {
			d.eachContentWord(func(t string) {
				w := add(t)
				ids = append(ids, w)
				if w < nqd {
					for j := range qid {
						if qid[j] == w {
							held[i*nq+j] = true
						}
					}
				}
			})
		}
		from[i+1] = len(ids)
	}
	sc.ids = ids[:0] // keeps its room for the next question
	// Only the words of a candidate that lacks a question word need a
	// vector, and the question's words.
	need := grown(&sc.need, len(words))
	clear(need)
	for j := range qid {
		need[qid[j]] = true
	}
	ask, askAt := sc.ask[:0], sc.askAt[:0]
	defer func() { sc.ask, sc.askAt = ask[:0], askAt[:0] }()
	for w := range nqd {
		ask, askAt = append(ask, words[w]), append(askAt, w)
	}
	for i := range cands {
		if !slices.Contains(held[i*nq:(i+1)*nq], false) {
			continue
		}
		for _, w := range ids[from[i]:from[i+1]] {
			if !need[w] {
				need[w] = true
				ask, askAt = append(ask, words[w]), append(askAt, w)
			}
		}
	}
	got, err := lex.WordVectors(ask)
	if err != nil {
		return nil, err
	}
	if len(got) != len(ask) {
		return nil, nil
	}
	vecs := grown(&sc.vecs, len(words))
	clear(vecs)
	for k, w := range askAt {
		vecs[w] = got[k]
	}
	// sims[w*nq+j] is word w's cosine with question word j, once
	// computed (NaN before).
	sims := grown(&sc.sims, len(words)*nq)
	for k := range sims {
		sims[k] = math.NaN()
	}
	out := make([]float64, len(cands))
	best := grown(&sc.best, nq)
	for i := range cands {
		dw := ids[from[i]:from[i+1]]
		if len(dw) == 0 {
			continue
		}
		for j := range best {
			best[j] = 0
			if held[i*nq+j] {
				best[j] = 1
				continue
			}
			qv := vecs[qid[j]]
			if len(qv) == 0 {
				continue // no cosine: only the word itself would match
			}
			for _, w := range dw {
				s := &sims[int(w)*nq+j]
				if math.IsNaN(*s) {
					*s = cosine(qv, vecs[w])
				}
				best[j] = max(best[j], *s)
			}
		}
		var total float64
		for _, b := range best {
			if b > wordSimFloor {
				total += (b - wordSimFloor) / (1 - wordSimFloor)
			}
		}
		out[i] = total / float64(nq)
	}
	return out, nil
}

// softScratch is softMatch's working room, kept for the next call: a
// question's soft match (twice a question: the prior and the results'
// relevance) would otherwise allocate ~10 KB of lists it drops at once.
// drop clears what holds strings or vectors of the question, so that
// nothing of it outlives the call.
type softScratch struct {
	qid, ids, askAt []int32
	from            []int
	held, need      []bool
	words, ask      []string
	vecs            [][]float32
	sims, best      []float64
}

var softScratches = sync.Pool{New: func() any { return new(softScratch) }}

func (sc *softScratch) drop() {
	clear(sc.words[:cap(sc.words)])
	clear(sc.ask[:cap(sc.ask)])
	clear(sc.vecs[:cap(sc.vecs)])
	softScratches.Put(sc)
}

// grown returns (*s)[:n], made anew when *s has less room; its elements
// hold whatever they held.
func grown[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	return *s
}

// speakerNames are the name words (nameWords) of the candidates'
// speakers, stemmed when stemmed is set; each speaker is read once.
func speakerNames(cands []Candidate, stemmed bool) []string {
	var seen, names []string
	for i := range cands {
		d := cands[i].doc
		if d == nil || slices.Contains(seen, d.Speaker) {
			continue
		}
		seen = append(seen, d.Speaker)
		for _, n := range nameWords(strings.ToLower(d.Speaker)) {
			if stemmed {
				n = stem(n)
			}
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

func cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	return float64(vecscan.Dot(a, b))
}

// contentWords are the lower-cased words of text, stop words and words
// shorter than three letters left out. The words are runs of letters
// and apostrophes, trimmed of apostrophes and cut at the first one left
// (melanie's -> melanie, i'm -> i). An ASCII text is split by bytes, in
// its lower-cased copy (lowerASCII: strings.ToLower of ASCII, made only
// when it has a capital); another by runes.
func contentWords(text string) []string {
	upper := false
	for i := range len(text) {
		c := text[i]
		if c >= 0x80 {
			return contentWordsUnicode(text)
		}
		upper = upper || c >= 'A' && c <= 'Z'
	}
	lower := text
	if upper {
		lower = lowerASCII(text)
	}
	var out []string
	for i := 0; i < len(lower); {
		if !wordByte(lower[i]) {
			i++
			continue
		}
		j, quote := i, false
		for ; j < len(lower) && wordByte(lower[j]); j++ {
			quote = quote || lower[j] == '\''
		}
		f := lower[i:j]
		if quote {
			f = contentWord(f)
		} else if len(f) < 3 || stopWords[f] {
			f = ""
		}
		if f != "" {
			out = append(out, f)
		}
		i = j
	}
	return out
}

// wordByte reports whether an ASCII byte of a lower-cased text belongs to
// a word: a letter or an apostrophe (unicode.IsLetter of ASCII is a
// letter of either case).
func wordByte(c byte) bool { return c >= 'a' && c <= 'z' || c == '\'' }

// contentWord is the content word of a run of letters and apostrophes,
// "" for none (a run without an apostrophe is its own word).
func contentWord(f string) string {
	f = strings.Trim(f, "'")
	if i := strings.IndexByte(f, '\''); i > 0 {
		f = f[:i] // melanie's -> melanie, i'm -> i
	}
	if len(f) < 3 || stopWords[f] {
		return ""
	}
	return f
}

// contentWordsUnicode is contentWords of any text, split by runes.
func contentWordsUnicode(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		if f = contentWord(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`about above after again against all also and any are because been before being below
	between both but can could did does doing down during each few for from further had has have having her here hers
	herself him himself his how into its itself just like more most much must myself nor not now off once only other our
	ours ourselves out over own same she should some such than that the their theirs them themselves then there these
	they this those through too under until very was were what when where which while who whom why will with would you
	your yours yourself yourselves really yeah yes okay thanks thank wow that's it's get got going gonna want know think
	one two lot lots thing things way well kind sure much many even still back make made take took sounds sound great
	good awesome amazing love glad hey see seen say said tell told`) {
		m[w] = true
	}
	return m
}()
