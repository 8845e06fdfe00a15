package fts

import (
	"fmt"
	"math"
)

// Scoring configures BM25F, the lexical score of both the on-disk Index
// and the in-memory Memory index. A document has three fields, scored as
// one document: the record's own text, its context (previous turns) and
// its role (speaker). For each distinct query term t,
//
//	tf~(t, d) = Σ_f w_f · tf_f(t, d) / (1 − b + b · len_f(d) / avglen_f)
//	score(d)  = Σ_t idf(t) · tf~ · (k1 + 1) / (k1 + tf~)
//	idf(t)    = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//
// with lengths in analysed tokens, avglen_f the true mean length of field
// f over the N documents, and df(t) the largest per-field document
// frequency of t (a lower bound of the documents holding t anywhere). A
// query term repeated in the query counts once. With one field and w = 1
// this is textbook BM25 (Robertson and Zaragoza, 2009).
type Scoring struct {
	// K1 saturates term frequency. Default DefaultK1.
	K1 float64
	// B is the strength of length normalisation, in [0, 1]. Default
	// DefaultB; set NoLengthNorm for 0.
	B float64
	// NoLengthNorm sets B to 0 (no length normalisation).
	NoLengthNorm bool
	// ContextWeight is the weight of a term in the context turns
	// relative to the record's own text. Default DefaultContextWeight.
	ContextWeight float64
	// RoleWeight is the weight of a term in the role field relative to
	// the record's own text. Default DefaultRoleWeight.
	RoleWeight float64
}

// Scoring defaults: the usual Robertson k1 and b; a context turn counts
// half as much as the record's own words (it describes the record less
// directly than what it says); the speaker's name counts as one of its
// words, as it did when it was indexed in the text ("role: text").
const (
	DefaultK1            = 1.2
	DefaultB             = 0.75
	DefaultContextWeight = 0.5
	DefaultRoleWeight    = 1.0
)

// Fields of the BM25F document, in the order of the per-field arrays.
const (
	fText = iota
	fContext
	fRole
	nFields
)

func (s Scoring) withDefaults() (Scoring, error) {
	if s.K1 == 0 {
		s.K1 = DefaultK1
	}
	if s.B == 0 && !s.NoLengthNorm {
		s.B = DefaultB
	}
	if s.NoLengthNorm {
		s.B = 0
	}
	if s.ContextWeight == 0 {
		s.ContextWeight = DefaultContextWeight
	}
	if s.RoleWeight == 0 {
		s.RoleWeight = DefaultRoleWeight
	}
	if s.K1 < 0 || s.B < 0 || s.B > 1 || s.ContextWeight < 0 || s.RoleWeight < 0 ||
		math.IsNaN(s.K1+s.B+s.ContextWeight+s.RoleWeight) {
		return s, fmt.Errorf("%w: scoring %+v", ErrInvalidOption, s)
	}
	return s, nil
}

func (s *Scoring) weights() [nFields]float64 {
	return [nFields]float64{1, s.ContextWeight, s.RoleWeight}
}

// idf is the BM25 inverse document frequency of a term found in df of n
// documents.
func idf(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// fieldStats are the collection statistics BM25F needs: the number of
// documents and the total length of each field in tokens.
type fieldStats struct {
	n     float64
	total [nFields]float64
}

func (st *fieldStats) avg(f int) float64 {
	if st.n == 0 {
		return 0
	}
	return st.total[f] / st.n
}

// termScore is one term's BM25F contribution to a document with term
// frequencies tf and field lengths dl.
func (s *Scoring) termScore(idf float64, st *fieldStats, tf, dl *[nFields]float64) float64 {
	w := s.weights()
	var t float64
	for f := range nFields {
		if tf[f] == 0 {
			continue
		}
		norm := 1.0
		if avg := st.avg(f); avg > 0 {
			norm = 1 - s.B + s.B*dl[f]/avg
		}
		t += w[f] * tf[f] / norm
	}
	if t == 0 {
		return 0
	}
	return idf * t * (s.K1 + 1) / (s.K1 + t)
}

// said reports whether a term occurs in what the record itself says.
// Coverage (engine.TextHit.Coverage) counts only such terms: a query
// naming a speaker is not answered by the speaker's name alone, nor by
// the turn before the record (which has its own document).
func said(tf *[nFields]float64) bool { return tf[fText] > 0 }
