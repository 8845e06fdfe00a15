package retrieve

import (
	"strings"
	"time"
)

// CoverOptions configure the cover stage.
type CoverOptions struct {
	// PerSession is how many turns of one session the first Window
	// results of a set question (AsksForSet) hold at most. Default
	// DefaultCoverPerSession.
	PerSession int
	// Window is how many leading results the cap applies to, in
	// results. It is fixed rather than the query's K so that the top of
	// a list does not depend on how long a list the caller asks for.
	// Default DefaultCoverWindow.
	Window int
}

// Defaults of the cover stage. The window is the engine's default page
// (engine.DefaultK). Three turns of a session leave room for a statement,
// the turn it answers and one follow-up; on LoCoMo dev conversations 1–4
// caps of 3, 4 and 5 are a plateau and 2 is below it (BENCHMARKS.md,
// "Set questions").
const (
	DefaultCoverPerSession = 3
	DefaultCoverWindow     = 10
)

// AsksForSet reports whether a question asks for several things that
// happened or were said on several occasions. "How many times ..."
// counts occasions. Otherwise a question bound to one occasion asks for
// no set: one in the simple past ("did", "was", "were": "What kind of
// activities did Maria do at the picnic?") or naming a time ("... on 31
// October, 2022"), since the present perfect and the habitual present
// are what gathers several occasions. The rest is judged by the first
// question word:
//
//   - "how many ..." counts occasions or things;
//   - "what/which are ..." agrees with a plural answer ("What are
//     Maria's dogs' names?");
//   - "what/which/where/who has|have <Name> ..." asks what a person has
//     done over time ("What has Melanie painted?", "Where has Melanie
//     camped?");
//   - "what/which" followed, before its verb, by a plural noun written
//     in lower case ("What books has Melanie read?", "Which cities has
//     Jon visited?", "What LGBTQ+ events has Caroline attended?").
//
// "What did Melanie paint recently?" and "How long has Melanie been
// painting?" ask for one thing. A text without a question word (a search
// such as "food allergy") asks for nothing.
func AsksForSet(q string) bool { return asksForSet(q, questionWords(q)) }

// asksForSet is AsksForSet(q) given q's questionWords.
func asksForSet(q string, ws []qword) bool {
	for i := 0; i+2 < len(ws); i++ {
		if ws[i].lower == "how" && ws[i+1].lower == "many" && ws[i+2].lower == "times" {
			return true
		}
	}
	if len(TimeMentions(q, time.Time{})) > 0 {
		return false
	}
	for _, w := range ws {
		switch w.lower {
		case "did", "was", "were":
			return false
		}
	}
	for i, w := range ws {
		next := func(k int) qword {
			if i+k < len(ws) {
				return ws[i+k]
			}
			return qword{}
		}
		switch w.lower {
		case "how":
			return next(1).lower == "many"
		case "where", "who", "whom", "what", "which":
			n := next(1)
			if (n.lower == "has" || n.lower == "have") && next(2).capital {
				return true
			}
			if w.lower == "where" || w.lower == "whom" {
				return false
			}
			if n.lower == "are" {
				return true
			}
			if w.lower == "who" {
				return false
			}
			for k := 1; k <= 4 && i+k < len(ws); k++ {
				n := ws[i+k]
				if auxiliaries[n.lower] {
					break
				}
				if !n.capital && isPlural(n.lower) {
					return true
				}
			}
			return false
		case "when", "why":
			return false
		}
	}
	return false
}

// auxiliaries end the noun phrase after "what" or "which".
var auxiliaries = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "has": true, "have": true, "had": true,
	"do": true, "does": true, "did": true, "will": true, "would": true, "can": true, "could": true,
	"should": true, "might": true, "may": true,
}

// irregularPlurals are plural nouns without a final s.
var irregularPlurals = map[string]bool{
	"children": true, "people": true, "men": true, "women": true, "feet": true, "teeth": true, "mice": true,
}

// notPlural are words ending in s that are no plural nouns.
var notPlural = map[string]bool{
	"always": true, "news": true, "series": true, "species": true, "perhaps": true, "sometimes": true,
	"towards": true, "afterwards": true, "besides": true, "yours": true, "ours": true, "theirs": true,
	"hers": true, "whose": true, "lens": true, "tennis": true,
}

// isPlural reports whether a lower-case word reads as a plural noun: an
// irregular plural, or a word of four letters or more ending in s but
// not in ss, us or is ("classes" yes, "class", "famous", "basis" no).
func isPlural(w string) bool {
	if irregularPlurals[w] {
		return true
	}
	if len(w) < 4 || notPlural[w] || !strings.HasSuffix(w, "s") {
		return false
	}
	for _, suf := range []string{"ss", "us", "is"} {
		if strings.HasSuffix(w, suf) {
			return false
		}
	}
	return true
}

// skipsSessionPrior reports whether the session prior is left out for
// q: the cover stage serves a set question, whose answers come from
// several sessions, and pooling a session's best score over its other
// turns would fill the top with the one session that matches best.
func (p *Pipeline) skipsSessionPrior(q *Query) bool {
	return p.o.Stages.Has(StageCover) && q.asksForSet()
}

// coverSessions is the cover stage's selection. For a question asking
// for a set (AsksForSet), whose answers were told on several occasions,
// the first o.Window results hold at most o.PerSession turns of any one
// session: a turn past the cap moves below the window, and the next
// candidate of another session takes its place. Candidates without a
// session are not capped. Order within the window and below it is the
// score order; the moved turns keep theirs, right below the window.
// cands must be sorted best first; they stay sorted (scores of moved
// turns are lowered just below the window's last).
func coverSessions(o *CoverOptions, q *Query, cands []Candidate, src Source) error {
	if len(cands) <= o.Window || !q.asksForSet() {
		return nil
	}
	if err := loadMissingDocs(cands, src); err != nil {
		return err
	}
	n := map[string]int{}
	order := make([]Candidate, 0, len(cands))
	var moved []Candidate
	i := 0
	for ; i < len(cands) && len(order) < o.Window; i++ {
		c := cands[i]
		if d := c.doc; d != nil && d.Session != "" {
			k := d.Scope + "\x00" + d.Session
			if n[k] >= o.PerSession {
				moved = append(moved, c)
				continue
			}
			n[k]++
		}
		order = append(order, c)
	}
	if len(moved) == 0 {
		return nil
	}
	kept := len(order)
	order = append(order, moved...)
	order = append(order, cands[i:]...)
	copy(cands, order)
	// Scores follow the new order.
	for j := kept; j < len(cands); j++ {
		if cands[j].Score >= cands[j-1].Score {
			cands[j].Score = below(cands[j-1].Score)
		}
	}
	return nil
}
