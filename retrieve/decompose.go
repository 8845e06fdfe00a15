package retrieve

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DecomposeOptions configure the query decomposition stage.
type DecomposeOptions struct {
	// MaxParts caps the parts a question is split into (each part runs
	// the query path once more). Default DefaultMaxParts, at most
	// MaxDecomposeParts.
	MaxParts int
}

// Bounds of decomposition.
const (
	DefaultMaxParts   = 3
	MaxDecomposeParts = 8
)

// questionOpeners are capitalised words that are no names.
var questionOpeners = map[string]bool{
	"what": true, "when": true, "where": true, "who": true, "whom": true, "whose": true, "why": true, "how": true,
	"which": true, "did": true, "do": true, "does": true, "is": true, "are": true, "was": true, "were": true,
	"has": true, "have": true, "had": true, "can": true, "could": true, "would": true, "will": true, "should": true,
	"i": true, "and": true, "or": true, "both": true, "in": true, "on": true, "at": true, "the": true, "a": true,
}

// clauseStarts begin a second question joined by "and".
var clauseStarts = map[string]bool{
	"what": true, "when": true, "where": true, "who": true, "why": true, "how": true, "which": true,
	"did": true, "does": true, "do": true, "is": true, "was": true, "has": true, "have": true,
}

// partsMemo is a question and the parts Pipeline.Parts runs it as.
type partsMemo struct {
	text  string
	parts []string
}

// split is Parts with the stage on: the tier walk asks it of one
// question several times (the term tests, hopeless, Run), so the last
// question's parts are kept. The caller must not change them.
func (p *Pipeline) split(text string) []string {
	if m := p.parts.Load(); m != nil && m.text == text {
		return m.parts
	}
	var parts []string
	if d := Decompose(text, p.o.Decompose.MaxParts); len(d) > 1 {
		parts = d
	}
	p.parts.Store(&partsMemo{text: text, parts: parts})
	return parts
}

// Decompose splits a multi-part question into its parts, at most
// maxParts of them, by rules that need no model:
//
//   - names joined by "and" or "or" ("What do Jon and Gina both like?",
//     "Who is older, Jon or Gina?", "Jon, Gina and Maria") give one part
//     per name, the rest of the question kept and "both", "each",
//     "either" dropped;
//   - two questions joined by "and" ("When did she paint and where did
//     she go?") give one part each.
//
// A question that is not multi-part gives itself alone. It never fails.
func Decompose(q string, maxParts int) []string {
	maxParts = max(maxParts, 1)
	toks := strings.Fields(q)
	if parts := splitNames(toks); len(parts) > 1 {
		return parts[:min(len(parts), maxParts)]
	}
	if parts := splitClauses(toks); len(parts) > 1 {
		return parts[:min(len(parts), maxParts)]
	}
	return []string{q}
}

// splitNames finds the first list of two or more names joined by "and"
// or "or" and writes one question per name.
func splitNames(toks []string) []string {
	for i := 0; i < len(toks); i++ {
		if !nameToken(toks[i]) {
			continue
		}
		names := []int{i}
		j := i
		for j+2 < len(toks) {
			switch {
			case strings.HasSuffix(toks[j], ",") && nameToken(toks[j+1]):
				j++
			case isConj(toks[j+1]) && nameToken(toks[j+2]):
				j += 2
			default:
				j = len(toks)
				continue
			}
			names = append(names, j)
		}
		if len(names) < 2 {
			continue
		}
		last := names[len(names)-1]
		out := make([]string, 0, len(names))
		for _, n := range names {
			var b []string
			b = append(b, toks[:i]...)
			b = append(b, strings.TrimRight(toks[n], ","))
			for _, t := range toks[last+1:] {
				switch strings.ToLower(strings.Trim(t, ",.?!")) {
				case "both", "each", "either", "all":
					continue
				}
				b = append(b, t)
			}
			out = append(out, strings.Join(b, " "))
		}
		return out
	}
	return nil
}

// splitClauses splits at "and" followed by a word that starts a
// question.
func splitClauses(toks []string) []string {
	var out []string
	start := 0
	for i := 1; i+1 < len(toks); i++ {
		if strings.ToLower(toks[i]) == "and" && clauseStarts[strings.ToLower(toks[i+1])] && i-start >= 2 {
			out = append(out, strings.Join(toks[start:i], " "))
			start = i + 1
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append(out, strings.Join(toks[start:], " "))
}

func isConj(t string) bool {
	t = strings.ToLower(t)
	return t == "and" || t == "or" || t == "&"
}

// nameToken reports whether a token reads as a name: capitalised, two
// letters or more, not a question word.
func nameToken(t string) bool {
	t = strings.Trim(t, ",.?!;:\"()")
	for _, suf := range []string{"'s", "’s", "'", "’"} {
		t = strings.TrimSuffix(t, suf)
	}
	r, _ := utf8.DecodeRuneInString(t)
	if !unicode.IsUpper(r) || utf8.RuneCountInString(t) < 2 || questionOpeners[strings.ToLower(t)] {
		return false
	}
	for _, c := range t {
		if !unicode.IsLetter(c) && c != '-' {
			return false
		}
	}
	return true
}

// runParts runs the query path for the whole question and for each part
// and merges the lists: each list's scores are divided by its best, and a
// record keeps its best normalised score, so the top of every part's list
// reaches the merged top. Every run has the whole question's vector, so
// the vector candidates are searched for once, by the first run.
func (p *Pipeline) runParts(ctx context.Context, q *Query, parts []string, src Source) ([]Candidate, error) {
	merged := map[uint64]int{}
	var out []Candidate
	vec := &vectorMemo{}
	for i := -1; i < len(parts); i++ {
		pq := *q
		pq.vec = vec
		if i >= 0 {
			pq.Text = parts[i]
		}
		cands, err := p.run(ctx, &pq, src)
		if err != nil {
			return nil, err
		}
		top := 0.0
		if len(cands) > 0 {
			top = cands[0].Score
		}
		for _, c := range cands {
			if top > 0 {
				c.Score /= top
			}
			if j, ok := merged[c.ID]; ok {
				if c.Score > out[j].Score {
					out[j].Score = c.Score
				}
				continue
			}
			merged[c.ID] = len(out)
			out = append(out, c)
		}
	}
	selectBest(out)
	return out, nil
}
