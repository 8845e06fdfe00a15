package persona

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Term is a salient term of the profile. Weight is the importance-weighted
// moving average of "the record mentions the term", on [0, 1]: the same
// average as the persona vector, applied to term indicators.
type Term struct {
	Text   string  `json:"text"`
	Weight float64 `json:"weight"`
}

// Statement is the text of a high-importance record, kept verbatim (cut
// to MaxStatementBytes at a word boundary).
type Statement struct {
	Text       string    `json:"text"`
	Importance float64   `json:"importance"` // the record's I0
	Time       time.Time `json:"time"`       // when it was observed (now of Observe)
}

// Profile is the extractive text profile: the salient terms, heaviest
// first (ties by text), and the statements, most important first (ties:
// newer first, then by text).
type Profile struct {
	Terms      []Term      `json:"terms"`
	Statements []Statement `json:"statements"`
}

// String renders the profile for a prompt: a line of terms and one line
// per statement. The empty profile renders as "".
func (p Profile) String() string {
	var b strings.Builder
	if len(p.Terms) > 0 {
		b.WriteString("Salient terms:")
		for i, t := range p.Terms {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte(' ')
			b.WriteString(t.Text)
		}
		b.WriteByte('\n')
	}
	if len(p.Statements) > 0 {
		b.WriteString("Key statements:\n")
		for _, s := range p.Statements {
			b.WriteString("- ")
			b.WriteString(s.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Snapshot is the persona at one gate firing.
type Snapshot struct {
	Time   time.Time `json:"time"`   // now of the Observe that fired
	Update uint64    `json:"update"` // the update's number, from 1
	Drift  float64   `json:"drift"`  // 1 − cos(p, anchor) that fired (1 for the first update)
	Terms  []string  `json:"terms"`  // the top HistoryTerms terms
}

// termStat is one tracked term. Its weight is raw·Persona.scale: decaying
// every weight is one multiplication of the scale.
type termStat struct {
	raw  float64
	last uint64 // the update that last mentioned the term
}

// minScale is the scale below which the raw weights are renormalised.
const minScale = 1e-100

// observeTerms applies the moving average with step x to the term
// indicators of text: every weight times (1 − x), plus x for each term
// the text mentions.
func (p *Persona) observeTerms(text string, x float64) {
	if x == 0 {
		return
	}
	s := p.scale * (1 - x)
	if s < minScale {
		for t, st := range p.terms {
			if st.raw *= s; st.raw == 0 {
				delete(p.terms, t)
			}
		}
		s = 1
	}
	p.scale = s
	inc := x / s
	terms(text, func(t string) {
		st := p.terms[t]
		if st == nil {
			st = &termStat{}
			p.terms[t] = st
		}
		st.raw += inc
		st.last = p.updates
	})
	if len(p.terms) > p.opts.TermCapacity {
		p.pruneTerms(p.opts.TermCapacity - p.opts.TermCapacity/8)
	}
}

type rankedTerm struct {
	text string
	*termStat
}

// rankedTerms returns the tracked terms, heaviest first; ties: more
// recently mentioned first, then by text.
func (p *Persona) rankedTerms() []rankedTerm {
	out := make([]rankedTerm, 0, len(p.terms))
	for t, st := range p.terms {
		out = append(out, rankedTerm{t, st})
	}
	slices.SortFunc(out, func(a, b rankedTerm) int {
		if c := cmp.Compare(b.raw, a.raw); c != 0 {
			return c
		}
		if c := cmp.Compare(b.last, a.last); c != 0 {
			return c
		}
		return strings.Compare(a.text, b.text)
	})
	return out
}

// pruneTerms keeps the n highest-ranked terms.
func (p *Persona) pruneTerms(n int) {
	for _, t := range p.rankedTerms()[n:] {
		delete(p.terms, t.text)
	}
}

// topTerms returns the n highest-ranked terms.
func (p *Persona) topTerms(n int) []Term {
	ranked := p.rankedTerms()
	out := make([]Term, 0, min(n, len(ranked)))
	for _, t := range ranked[:min(n, len(ranked))] {
		out = append(out, Term{Text: t.text, Weight: t.raw * p.scale})
	}
	return out
}

// observeStatement keeps text as a statement if importance qualifies and
// it ranks among the best MaxStatements. A statement already kept (same
// text, ignoring case) takes the larger importance and the later time.
func (p *Persona) observeStatement(text string, importance float64, now time.Time) {
	if p.lim.statements == 0 || importance < p.opts.StatementMin {
		return
	}
	s := clip(strings.Join(strings.Fields(text), " "), p.opts.MaxStatementBytes)
	if s == "" {
		return
	}
	i := slices.IndexFunc(p.stmts, func(st Statement) bool { return strings.EqualFold(st.Text, s) })
	if i >= 0 {
		st := &p.stmts[i]
		st.Importance = max(st.Importance, importance)
		if now.After(st.Time) {
			st.Time = now.UTC()
		}
	} else {
		p.stmts = append(p.stmts, Statement{Text: s, Importance: importance, Time: now.UTC()})
	}
	p.sortStatements()
}

func (p *Persona) sortStatements() {
	slices.SortFunc(p.stmts, func(a, b Statement) int {
		if c := cmp.Compare(b.Importance, a.Importance); c != 0 {
			return c
		}
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Text, b.Text)
	})
	if len(p.stmts) > p.lim.statements {
		p.stmts = slices.Delete(p.stmts, p.lim.statements, len(p.stmts))
	}
}

// clip cuts s to at most n bytes: where a word ends, else at the last
// space if one lies in the second half, else at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if r, _ := utf8.DecodeRuneInString(s[cut:]); unicode.IsLetter(r) || unicode.IsDigit(r) {
		if sp := strings.LastIndexByte(s[:cut], ' '); sp >= n/2 {
			cut = sp
		}
	}
	return strings.TrimSpace(s[:cut])
}

// ForgetText removes the statement quoted from text, if the profile keeps
// one, and the text's terms from the tracked terms and the history, so a forgotten
// record's words do not survive in the profile. It reports whether
// anything was removed. The persona vector is an average and keeps no
// text.
func (p *Persona) ForgetText(text string) bool {
	s := clip(strings.Join(strings.Fields(text), " "), p.opts.MaxStatementBytes)
	p.mu.Lock()
	defer p.mu.Unlock()
	n, m := len(p.stmts), len(p.terms)
	p.stmts = slices.DeleteFunc(p.stmts, func(st Statement) bool { return strings.EqualFold(st.Text, s) })
	// The text's terms go too, even where other records also mention
	// them: a forgotten word must not survive in the profile, and the
	// others bring it back when they are seen again.
	gone := map[string]bool{}
	terms(text, func(t string) { gone[t] = true; delete(p.terms, t) })
	scrubbed := false
	for i := range p.history {
		k := len(p.history[i].Terms)
		p.history[i].Terms = slices.DeleteFunc(p.history[i].Terms, func(t string) bool { return gone[t] })
		scrubbed = scrubbed || len(p.history[i].Terms) < k
	}
	return len(p.stmts) < n || len(p.terms) < m || scrubbed
}
