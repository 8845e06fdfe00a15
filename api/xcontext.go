package api

import (
	"context"
	"fmt"
	"strings"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/retrieve"
	"github.com/hmo-dev/hmo/xmemory"
)

// Assembly is how Context fills its token budget.
type Assembly int

// Assemblies.
const (
	// AssemblyTopK renders the ContextCandidates best memories, best
	// first, one dated line each, until the budget is spent.
	AssemblyTopK Assembly = iota
	// AssemblyRanked renders the ThemeCandidates best memories, best
	// first, in the compact layout of AssemblyThemes (a date line per
	// change of date): plain top-k that fills the budget.
	AssemblyRanked
	// AssemblyRankedFacts is AssemblyRanked with each memory shown as its
	// semantic fact (xmemory.Fact: without its small talk): the
	// ablation of AssemblyThemes without the selection.
	AssemblyRankedFacts
	// AssemblyThemes is xMemory's top-down assembly (seed 002): among
	// the ThemeCandidates best memories it selects a compact, diverse
	// set of themes and then of facts by greedy coverage plus relevance
	// (xmemory.Select, Eq. 4), expands a fact to the turns next to it in
	// its episode only when they hold query terms the block lacks, and
	// fills what budget is left best first. Each memory is shown as its
	// semantic fact (xmemory.Fact), or whole when the rest of the message
	// holds query terms the fact lacks.
	AssemblyThemes
)

// DefaultAssembly is the assembly of NewLocal (BENCHMARKS.md, "xMemory").
const DefaultAssembly = AssemblyThemes

// ThemeCandidates is how many memories AssemblyThemes and AssemblyRanked
// consider.
const ThemeCandidates = 60

// ThemeReps is how many themes, and then facts, AssemblyThemes selects
// by coverage plus relevance before it fills the budget best first: the
// compact backbone of the block. LoCoMo dev at 1,500 tokens: 3, 5 and 8
// representatives give all-evidence 0.768, 0.770, 0.767; without a
// bound (coverage 1) 0.761, under plain top-k's 0.763 (BENCHMARKS.md).
const ThemeReps = 5

// String names the assembly as the eval reports it.
func (a Assembly) String() string {
	switch a {
	case AssemblyTopK:
		return "topk"
	case AssemblyRanked:
		return "ranked"
	case AssemblyRankedFacts:
		return "facts"
	case AssemblyThemes:
		return "themes"
	}
	return fmt.Sprintf("assembly(%d)", int(a))
}

// WithAssembly returns a Local over the same engine that assembles
// context blocks with a.
func (l *Local) WithAssembly(a Assembly) *Local {
	return &Local{e: l.e, assembly: a, noAccess: l.noAccess}
}

// WithoutAccess returns a Local whose context blocks are not counted as
// recalls of the memories they show: for measurements that must not
// change the tiers they measure.
func (l *Local) WithoutAccess() *Local {
	return &Local{e: l.e, assembly: l.assembly, noAccess: true}
}

// assemble builds the block for a non-empty prompt.
func (l *Local) assemble(ctx context.Context, req *ContextRequest, tokens int) (ContextResponse, error) {
	if l.assembly == AssemblyTopK {
		recs, err := l.contextRecords(ctx, req)
		if err != nil {
			return ContextResponse{}, err
		}
		return render(recs, tokens), nil
	}
	floor, err := minScore(req.MinScore)
	if err != nil {
		return ContextResponse{}, err
	}
	res, err := l.e.Recall(ctx, engine.Query{Text: req.Prompt, K: ThemeCandidates, Scope: req.Scope, NoAccess: true})
	if err != nil {
		return ContextResponse{}, err
	}
	kept := res[:0]
	for _, r := range res {
		if r.Relevance >= floor {
			kept = append(kept, r)
		}
	}
	terms := retrieve.ContentTerms(req.Prompt)
	switch l.assembly {
	case AssemblyRanked, AssemblyRankedFacts:
		recs := make([]engine.Record, len(kept))
		for i := range kept {
			recs[i] = kept[i].Record
		}
		recs = l.withAnswered(recs)
		if l.assembly == AssemblyRankedFacts {
			asFacts(recs, terms)
		}
		return renderCompact(recs, tokens), nil
	}
	recs, err := l.themed(req, kept)
	if err != nil {
		return ContextResponse{}, err
	}
	recs = l.withAnswered(recs)
	asFacts(recs, terms)
	return renderCompact(recs, tokens), nil
}

// themed orders results for AssemblyThemes: Stage I (themes, then facts,
// by xmemory.Select), Stage II (episode neighbours that add query terms),
// then the rest best first.
func (l *Local) themed(req *ContextRequest, res []engine.Result) ([]engine.Record, error) {
	if len(res) == 0 {
		return nil, nil
	}
	ids := make([]uint64, len(res))
	for i := range res {
		ids[i] = res[i].Record.ID
	}
	themeOf, cents, err := l.e.Themes(req.Scope, ids)
	if err != nil {
		return nil, err
	}
	vecs, err := l.e.Vectors(ids)
	if err != nil {
		return nil, err
	}
	rel := normalised(res)
	// Stage I, themes: one item per theme among the candidates (a
	// record without a theme is its own), relevance its best member's.
	type group struct {
		rel     float64
		vec     []float32
		members []int
	}
	var groups []*group
	byTheme := map[uint64]*group{}
	for i := range res {
		g := byTheme[themeOf[i]]
		if g == nil || themeOf[i] == 0 {
			g = &group{rel: rel[i], vec: vecs[i]}
			if c := cents[themeOf[i]]; c != nil {
				g.vec = c
			}
			groups = append(groups, g)
			if themeOf[i] != 0 {
				byTheme[themeOf[i]] = g
			}
		}
		g.members = append(g.members, i)
	}
	items := make([]xmemory.Item, len(groups))
	for i, g := range groups {
		items[i] = xmemory.Item{Relevance: g.rel, Vec: g.vec}
	}
	var facts []int
	for _, gi := range xmemory.Select(items, xmemory.SelectOptions{Max: ThemeReps}) {
		facts = append(facts, groups[gi].members...)
	}
	// Stage I, facts: among the chosen themes' facts.
	fitems := make([]xmemory.Item, len(facts))
	for i, f := range facts {
		fitems[i] = xmemory.Item{Relevance: rel[f], Vec: vecs[f]}
	}
	order := make([]int, 0, len(res))
	for _, fi := range xmemory.Select(fitems, xmemory.SelectOptions{Max: ThemeReps}) {
		order = append(order, facts[fi])
	}
	// Stage II: a chosen fact brings the turns beside it in its episode
	// when they hold query terms the block does not hold yet.
	terms := retrieve.ContentTerms(req.Prompt)
	have := map[string]bool{}
	var out []engine.Record
	in := map[uint64]bool{}
	add := func(r engine.Record) {
		in[r.ID] = true
		out = append(out, r)
		for _, t := range retrieve.ContentTerms(r.Text) {
			have[t] = true
		}
	}
	for _, i := range order {
		r := res[i].Record
		if in[r.ID] {
			continue
		}
		add(r)
		for _, n := range l.neighbours(r.ID) {
			if in[n.ID] || n.SupersededBy != 0 || !addsTerms(terms, have, n.Text) {
				continue
			}
			add(n)
		}
	}
	for i := range res {
		if !in[res[i].Record.ID] {
			add(res[i].Record)
		}
	}
	return out, nil
}

// withAnswered puts before an assistant's reply the turn it answers, by
// another speaker, unless the block has it already (as contextRecords
// does): "Noted: no shellfish." is read with "I'm allergic to shellfish".
func (l *Local) withAnswered(recs []engine.Record) []engine.Record {
	in := map[uint64]bool{}
	for _, r := range recs {
		in[r.ID] = true
	}
	out := make([]engine.Record, 0, len(recs))
	for _, r := range recs {
		if p := r.Prev; p != 0 && r.Role == roleAssistant && !in[p] {
			if prev, err := l.e.Get(p); err == nil && prev.Role != roleAssistant && prev.SupersededBy == 0 {
				in[p] = true
				out = append(out, prev)
			}
		}
		out = append(out, r)
	}
	return out
}

// asFacts replaces each record's text by its semantic fact, unless the
// words the fact leaves out hold a query term the fact lacks (then the
// raw message is what answers).
func asFacts(recs []engine.Record, terms []string) {
	for i := range recs {
		f := xmemory.Fact(recs[i].Text)
		have := map[string]bool{}
		for _, t := range retrieve.ContentTerms(f) {
			have[t] = true
		}
		if !addsTerms(terms, have, recs[i].Text) {
			recs[i].Text = f
		}
	}
}

// neighbours are the records just before and after id in its episode.
func (l *Local) neighbours(id uint64) []engine.Record {
	_, members, _, err := l.e.Episode(id)
	if err != nil {
		return nil
	}
	var out []engine.Record
	for j, m := range members {
		if m != id {
			continue
		}
		for _, k := range []int{j - 1, j + 1} {
			if k >= 0 && k < len(members) {
				if r, err := l.e.Get(members[k]); err == nil {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// addsTerms reports whether text holds a query term not in have.
func addsTerms(terms []string, have map[string]bool, text string) bool {
	for _, t := range retrieve.ContentTerms(text) {
		if have[t] {
			continue
		}
		for _, q := range terms {
			if q == t {
				return true
			}
		}
	}
	return false
}

// normalised maps the results' scores to [0, 1] by min-max.
func normalised(res []engine.Result) []float64 {
	lo, hi := res[0].Score, res[0].Score
	for _, r := range res {
		lo, hi = min(lo, r.Score), max(hi, r.Score)
	}
	out := make([]float64, len(res))
	for i, r := range res {
		if hi > lo {
			out[i] = (r.Score - lo) / (hi - lo)
		} else {
			out[i] = 1
		}
	}
	return out
}

// renderCompact lays records out like render, but writes the date once
// per change of date ("[2023-05-08]") and the speaker and id on each
// line ("- [#12 Caroline] text"), and passes over a memory that does not
// fit for a shorter one further down: more memories in the same budget.
func renderCompact(recs []engine.Record, tokens int) ContextResponse {
	day := ""
	dayOf := func(r *engine.Record) string { return r.Time.UTC().Format("2006-01-02") }
	line := func(r *engine.Record) string {
		var sb strings.Builder
		if d := dayOf(r); d != day {
			fmt.Fprintf(&sb, "[%s]\n", d)
		}
		fmt.Fprintf(&sb, "- [#%d", r.ID)
		if r.Role != "" {
			sb.WriteString(" " + r.Role)
		}
		sb.WriteString("] ")
		sb.WriteString(strings.Join(strings.Fields(r.Text), " "))
		sb.WriteString("\n")
		return sb.String()
	}
	return layout(recs, tokens, line, func(r *engine.Record) { day = dayOf(r) }, true)
}
