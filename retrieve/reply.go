package retrieve

import (
	"math"
	"slices"
	"strings"
)

// ReplyOptions configure the reply stage.
type ReplyOptions struct {
	// Roles are the speakers whose replies can be echoes: an agent's own
	// turns, which know of the user only what the user said. Default
	// DefaultAgentRoles; matched without regard to case.
	Roles []string
}

// DefaultAgentRoles are the roles of an agent's turns (the role the
// Claude Code and OpenClaw captures and the MCP tools give them).
var DefaultAgentRoles = []string{"assistant"}

// replyOrder ranks an agent's echo right below the user's turn it
// echoes (the reply stage).
//
// A record is indexed with the turn before it as context (Doc.Context),
// so a reply matches every query word of the turn it answers besides its
// own: the assistant's "Cats often need a couple of weeks. Give Pixel a
// quiet corner" scores on the user's "my cat Pixel" before it, and
// outranked that turn for "what is the name of the cat". A reply R
// echoes its context turn P when
//
//   - R is an agent's turn (o.Roles) and P is not: in a user/assistant
//     store the user's statement is the evidence, and an agent restating
//     it is derivative;
//   - P is a candidate, a statement (not IsQuestion) and not a derived
//     record, and its own text holds some of the query's content terms;
//   - R's own text holds some of them too, but no more than P's does
//     (OwnCoverage), so whatever lifts R above P was borrowed from P;
//   - R repeats a content word of P's own text: it restates P ("Noted:
//     no shellfish" after "I'm allergic to shellfish").
//
// The speakers' names are left out of the query's terms and of the
// repeated words. An echo that scores at least as high as its turn swaps
// places with it: the turn takes the echo's score and the echo ranks
// right below it. A reply that adds query terms of its own, or follows a
// question, is left alone.
//
// Between people the same rule costs recall: on LoCoMo (two people, no
// agent) applied to every speaker it lost 0.016 R@10 (BENCHMARKS.md,
// issue 12), since there a reply that restates a turn is as often the
// evidence as the turn itself.
func replyOrder(o *ReplyOptions, q *Query, cands []Candidate, src Source) error {
	if err := loadMissingDocs(cands, src); err != nil {
		return err
	}
	// Only an agent's turn can be an echo: without one there is
	// nothing to reorder (a store of people, as LoCoMo).
	ag := agents{o: o}
	if !ag.any(cands) {
		return nil
	}
	names := speakerNames(cands, true)
	var terms []string
	for _, t := range q.contentTerms().terms {
		if !slices.Contains(names, t) {
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return nil
	}
	var idx *places // the candidates' places, made at the first reply that needs it
	ts := newTermSet(terms)
	own := func(i int) float64 { return cands[i].doc.ownCoverage(ts) }
	type edge struct{ reply, turn int }
	var edges []edge
	for i := range cands {
		d := cands[i].doc
		if d == nil || d.Derived || d.Context == 0 || !ag.is(d.Speaker) {
			continue
		}
		if idx == nil {
			idx = takePlaces(len(cands))
			defer dropPlaces(idx)
			for k := range cands {
				idx.put(cands[k].ID, k)
			}
		}
		j, ok := idx.get(d.Context)
		if !ok || cands[j].doc == nil {
			continue
		}
		p := cands[j].doc
		if p.Derived || ag.is(p.Speaker) || p.isQuestion() {
			continue
		}
		if cr, cp := own(i), own(j); cr > 0 && cr <= cp && d.repeats(p, names) {
			edges = append(edges, edge{reply: i, turn: j})
		}
	}
	// Each turn has at most one reply, so the edges form chains; a swap
	// can break the order of the pair before it, hence the passes (at
	// most one per edge of the longest chain).
	for pass := 0; pass <= len(edges); pass++ {
		changed := false
		for _, e := range edges {
			r, t := &cands[e.reply], &cands[e.turn]
			if r.Score < t.Score {
				continue
			}
			t.Score = r.Score
			r.Score = below(t.Score)
			changed = true
		}
		if !changed {
			break
		}
	}
	return nil
}

// agents is agent for one list of candidates, whose turns have few
// speakers: the answer for each speaker asked is kept.
type agents struct {
	o        *ReplyOptions
	speakers []string
	agent    []bool
}

// is is agent(a.o, speaker).
func (a *agents) is(speaker string) bool {
	for i, s := range a.speakers {
		if s == speaker {
			return a.agent[i]
		}
	}
	is := agent(a.o, speaker)
	if len(a.speakers) < 16 {
		a.speakers, a.agent = append(a.speakers, speaker), append(a.agent, is)
	}
	return is
}

// any reports whether a candidate is an agent's turn.
func (a *agents) any(cands []Candidate) bool {
	for i := range cands {
		if d := cands[i].doc; d != nil && a.is(d.Speaker) {
			return true
		}
	}
	return false
}

// agent reports whether speaker is one of o.Roles.
func agent(o *ReplyOptions, speaker string) bool {
	for _, r := range o.Roles {
		if strings.EqualFold(strings.TrimSpace(speaker), r) {
			return true
		}
	}
	return false
}

// repeats is repeats(d.Text, turn.Text, names), from the documents'
// content keys when both are analysed (Doc.Analyse): a source that
// caches its documents does not split their texts into terms again.
func (d *Doc) repeats(turn *Doc, names []string) bool {
	if !d.analysed || !turn.analysed || d.keys == nil || turn.keys == nil {
		return repeats(d.Text, turn.Text, names)
	}
	// Every term of turn has a key (no term is longer than termKey
	// takes): a name without one is none of them.
	for _, k := range turn.keys {
		if !slices.Contains(d.keys, k) {
			continue
		}
		named := false
		for _, n := range names {
			if termKey(n) == k {
				named = true
				break
			}
		}
		if !named {
			return true
		}
	}
	return false
}

// repeats reports whether reply holds a content term of turn's, names
// aside.
func repeats(reply, turn string, names []string) bool {
	said := map[string]bool{}
	eachTerm(turn, func(w string) {
		if !slices.Contains(names, w) {
			said[w] = true
		}
	})
	found := false
	eachTerm(reply, func(w string) { found = found || said[w] })
	return found
}

// below is a score just under s that survives the rescaling of
// decomposed questions' lists (a relative gap, not one ulp).
func below(s float64) float64 {
	return s - max(math.Abs(s)*1e-9, math.SmallestNonzeroFloat64)
}
