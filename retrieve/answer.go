package retrieve

import (
	"fmt"
	"slices"
	"strings"
)

// EntityNamer is implemented by a Source that knows which specific
// entities records name (the entity graph). The answer stage runs only
// over sources that implement it.
type EntityNamer interface {
	// SpecificEntities returns, for each id, the specific (non-hub)
	// entities the record names, each as the keys that stand for it
	// (lower case, words joined by one space): a name and its short
	// forms.
	SpecificEntities(ids []uint64) ([][][]string, error)
}

// DefaultAnswerWeight is the weight of the answer prior, a share of the
// best fused score: the entity prior's share, below the time prior's
// (an answer-type cue is weaker evidence than a named speaker or a time
// cue). LoCoMo dev R@10 sits on a plateau from 0.05 to 0.2
// (BENCHMARKS.md).
const DefaultAnswerWeight = 0.1

// AsksForThing reports whether a question asks for a thing that can be
// named: it holds what, which, who, whom, whose or where, or "how many"
// / "how much", and does not ask for a time (IsWhenQuestion), which the
// time prior serves. "food allergy" asks for nothing; "Which books has
// Tim read?" asks for titles.
func AsksForThing(q string) bool { return (&Query{Text: q}).asksForThing() }

// asksForThing is AsksForThing(q.Text), from q's memos.
func (q *Query) asksForThing() bool {
	if q.isWhenQuestion() {
		return false
	}
	ws := q.questionWords()
	for i, w := range ws {
		switch w.lower {
		case "what", "which", "who", "whom", "whose", "where":
			return true
		case "how":
			if i+1 < len(ws) && (ws[i+1].lower == "many" || ws[i+1].lower == "much") {
				return true
			}
		}
	}
	return false
}

// answerPrior adds w times scale to the candidates that name a specific
// entity the question does not name, when the question asks for a thing
// (AsksForThing): the answer to "which countries has James visited?" is
// a name the question does not hold, so a record naming one is likelier
// to hold the answer than small talk that names nobody. Entities the
// question names do not count: a record naming only them restates the
// question. When the question names one speaker, only that speaker's
// records count, as for the speaker prior: what a person did is told in
// their own turns. A query that asks for nothing ("food allergy") is left
// as it is, unlike the query-independent entity prior.
func answerPrior(q *Query, cands []Candidate, src Source, en EntityNamer, w, scale float64) error {
	if len(cands) == 0 || !q.asksForThing() {
		return nil
	}
	loaded := false
	for i := range cands {
		loaded = loaded || cands[i].doc != nil
	}
	if !loaded {
		if err := loadDocs(cands, src); err != nil {
			return err
		}
	}
	who := oneNamedSpeaker(q, cands)
	asked := map[string]bool{}
	for _, w := range q.questionWords() {
		asked[w.lower] = true
	}
	// Only the candidates that may rise are looked up.
	var idx []int
	var ids []uint64
	for i := range cands {
		if who == "" || spokenBy(cands[i].doc, who) {
			idx = append(idx, i)
			ids = append(ids, cands[i].ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ents, err := en.SpecificEntities(ids)
	if err != nil {
		return err
	}
	if len(ents) != len(ids) {
		return fmt.Errorf("retrieve: source returned entities of %d records for %d ids", len(ents), len(ids))
	}
	for k, i := range idx {
		for _, keys := range ents[k] {
			if !namedIn(keys, asked) {
				cands[i].Score += w * scale
				break
			}
		}
	}
	return nil
}

// namedIn reports whether every word of one of keys is among words.
func namedIn(keys []string, words map[string]bool) bool {
	for _, k := range keys {
		all := true
		for _, w := range strings.Fields(k) {
			all = all && words[w]
		}
		if all {
			return true
		}
	}
	return false
}

// oneNamedSpeaker returns the speaker of the candidates that the question
// names, lower case, when it names exactly one; "" otherwise.
func oneNamedSpeaker(q *Query, cands []Candidate) string {
	// The distinct speakers: a conversation has few, found by a scan of
	// the list; a map takes over when there are many.
	var speakers []string
	var many map[string]bool
	for i := range cands {
		d := cands[i].doc
		if d == nil || d.Speaker == "" {
			continue
		}
		if many != nil {
			if many[d.Speaker] {
				continue
			}
			many[d.Speaker] = true
		} else if slices.Contains(speakers, d.Speaker) {
			continue
		}
		speakers = append(speakers, d.Speaker)
		if many == nil && len(speakers) > 16 {
			many = map[string]bool{}
			for _, s := range speakers {
				many[s] = true
			}
		}
	}
	m := NewNameMatcher(speakers)
	named := m.named(q.questionWords())
	if len(named) != 1 {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(m.Speaker(named[0])))
}

// spokenBy reports whether d's speaker is who (lower case).
func spokenBy(d *Doc, who string) bool {
	return d != nil && strings.ToLower(strings.TrimSpace(d.Speaker)) == who
}
