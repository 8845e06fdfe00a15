package static

import (
	"context"
	"fmt"
	"strings"

	"github.com/hmo-dev/hmo/engine"
)

// preparedText is a text tokenised against the table (PrepareText): the
// tokens Embed and Observe would read from it, in order.
type preparedText struct {
	s    *Static
	text string
	refs []tokenRef
	ok   bool // tokenised; false when the table did not decode
}

// PrepareText tokenises text as Embed and Observe do (engine.TextPreparer).
// It waits for the table.
func (s *Static) PrepareText(text string) engine.PreparedText {
	p := &preparedText{s: s, text: text}
	if s.wait(context.Background()) != nil {
		return p
	}
	sc := s.scratch.Get().(*scanner)
	defer s.scratch.Put(sc)
	p.refs = scanRefs(sc, text, nil)
	p.ok = true
	return p
}

// scanRefs appends text's tokens to refs.
func scanRefs(sc *scanner, text string, refs []tokenRef) []tokenRef {
	sc.scan(text, func(id int, tok []byte) {
		if id >= 0 {
			refs = append(refs, tokenRef{id: id})
		} else {
			refs = append(refs, tokenRef{id: -1, hash: hashBytes(tok)})
		}
	})
	return refs
}

// EmbedPrepared returns what Embed returns for each text made of its
// prepared parts concatenated (engine.TextPreparer). Parts whose
// boundary a token could cross (a letter, a digit, a hyphen or an
// apostrophe on both sides) are tokenised again as one text, so the
// result is Embed's whatever the parts are.
func (s *Static) EmbedPrepared(ctx context.Context, texts [][]engine.PreparedText) ([][]float32, error) {
	for _, t := range texts {
		for _, p := range t {
			if q, ok := p.(*preparedText); !ok || q.s != s {
				return nil, fmt.Errorf("static: EmbedPrepared: a text this embedder did not prepare (%T)", p)
			}
		}
	}
	parts := make([]*preparedText, 0, 8)
	return s.embedEach(ctx, len(texts), func(sc *scanner, acc []float64, i int) []float32 {
		parts = parts[:0]
		for _, p := range texts[i] {
			parts = append(parts, p.(*preparedText))
		}
		if !separable(parts) {
			return s.embed(sc, joinTexts(parts), acc)
		}
		clear(acc)
		words := 0
		for _, p := range parts {
			for _, r := range p.refs {
				if s.addToken(acc, r) {
					words++
				}
			}
		}
		return s.finish(acc, words)
	})
}

// ObservePrepared is Observe of the prepared texts' texts
// (engine.TextPreparer).
func (s *Static) ObservePrepared(texts []engine.PreparedText) {
	s.updateRefs(len(texts), func(sc *scanner, i int, refs []tokenRef) []tokenRef {
		p, ok := texts[i].(*preparedText)
		switch {
		case !ok:
			return refs
		case p.ok && p.s == s:
			return append(refs, p.refs...)
		default:
			return scanRefs(sc, p.text, refs)
		}
	}, func(c *corpus, r tokenRef) { c.add(r, s.limit) })
}

// separable reports whether the tokens of parts concatenated are the
// parts' tokens one after the other: every part was tokenised, and at
// each boundary one side is an ASCII character that is neither a letter,
// a digit, a hyphen nor an apostrophe (so no token, nor the joining of
// one, crosses it, and Unicode normalisation does not reorder across it).
func separable(parts []*preparedText) bool {
	prev := "" // the last non-empty part
	for _, p := range parts {
		if !p.ok {
			return false
		}
		if p.text == "" {
			continue
		}
		if prev != "" && !separator(prev[len(prev)-1]) && !separator(p.text[0]) {
			return false
		}
		prev = p.text
	}
	return true
}

// separator reports whether the byte c is an ASCII character that ends
// any token and joins none.
func separator(c byte) bool {
	return c < 0x80 && c != '-' && c != '\'' && !isWordRune(rune(c))
}

func joinTexts(parts []*preparedText) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.text)
	}
	return b.String()
}
