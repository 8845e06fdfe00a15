package retrieve

import (
	"strings"
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
func softMatch(q *Query, cands []Candidate, lex Lexicon) ([]float64, error) {
	var speakers []string
	for i := range cands {
		if d := cands[i].doc; d != nil {
			speakers = append(speakers, d.Speaker)
		}
	}
	names := map[string]bool{}
	for _, s := range speakers {
		for _, n := range nameWords(strings.ToLower(s)) {
			names[n] = true
		}
	}
	var qwords []string
	for _, t := range contentWords(q.Text) {
		if !names[t] {
			qwords = append(qwords, t)
		}
	}
	if len(qwords) == 0 {
		return nil, nil
	}
	// Every distinct word once.
	vocab := map[string]int{}
	var words []string
	add := func(t string) {
		if _, ok := vocab[t]; !ok {
			vocab[t] = len(words)
			words = append(words, t)
		}
	}
	for _, t := range qwords {
		add(t)
	}
	docWords := make([][]string, len(cands))
	for i := range cands {
		if d := cands[i].doc; d != nil {
			docWords[i] = contentWords(d.Text)
			for _, t := range docWords[i] {
				add(t)
			}
		}
	}
	vecs, err := lex.WordVectors(words)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(words) {
		return nil, nil
	}
	qv := make([][]float32, len(qwords))
	for j, qw := range qwords {
		qv[j] = vecs[vocab[qw]]
	}
	// sims[w] holds word w's cosine with each question word, computed
	// once however many candidates hold w.
	sims := make([][]float64, len(words))
	simsOf := func(w int) []float64 {
		if sims[w] == nil {
			s := make([]float64, len(qwords))
			for j, qw := range qwords {
				if words[w] == qw {
					s[j] = 1
				} else {
					s[j] = cosine(qv[j], vecs[w])
				}
			}
			sims[w] = s
		}
		return sims[w]
	}
	out := make([]float64, len(cands))
	best := make([]float64, len(qwords))
	for i := range cands {
		if len(docWords[i]) == 0 {
			continue
		}
		clear(best)
		for _, dw := range docWords[i] {
			for j, c := range simsOf(vocab[dw]) {
				best[j] = max(best[j], c)
			}
		}
		var total float64
		for _, b := range best {
			if b > wordSimFloor {
				total += (b - wordSimFloor) / (1 - wordSimFloor)
			}
		}
		out[i] = total / float64(len(qwords))
	}
	return out, nil
}

func cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	return float64(vecscan.Dot(a, b))
}

// contentWords are the lower-cased words of text, stop words and words
// shorter than three letters left out.
func contentWords(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		f = strings.Trim(f, "'")
		if i := strings.IndexByte(f, '\''); i > 0 {
			f = f[:i] // melanie's -> melanie, i'm -> i
		}
		if len(f) < 3 || stopWords[f] {
			continue
		}
		out = append(out, f)
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
