package retrieve

import "math"

// Calibration of Relevance: a logistic model of the probability that a
// candidate is evidence for the query, fitted on LoCoMo dev conversations
// 1-4 and checked on conversations 5-7 (tools/calibrate; BENCHMARKS.md).
// Its inputs mean the same in every store and for every query: the share
// of the query's content terms in the record's own text, whether the
// lexical index matched the record (with its context), its cosine in
// standard deviations above the query's similarity to unrelated records
// of the store, and its soft match (Candidate.SoftMatch: the query's
// words found in the record as related words, "food" in "peanuts").
// The soft match lowered the held-out log-loss from 0.0898 to 0.0869
// and the expected calibration error from 0.0067 to 0.0040.
var calibration = struct {
	bias, own, lexical, z, soft float64
}{bias: -6.752, own: 2.096, lexical: 1.037, z: 0.563, soft: 2.433}

// NullMaxZ is how far above the null the most similar of a few hundred
// unrelated records lies, in standard deviations (the expected maximum of
// that many standard normal draws, about sqrt(2 ln n)).
const NullMaxZ = 3.0

// DefaultMinScore is the relevance of a record that holds none of the
// query's words, nor a word related to one, and is as similar to it as
// the most similar unrelated record is expected to be (NullMaxZ): below
// it a result is the unrelated tail. About 0.0063 (tools/calibrate
// prints what it keeps on LoCoMo dev conversations 5-7).
var DefaultMinScore = Relevance(0, false, NullMaxZ, 0)

// Relevance is the calibrated relevance of a candidate, on [0, 1]: the
// probability that it is evidence for the query, given own, the share of
// the query's content terms in its own text, lexical, whether the text
// index matched it, z, its cosine in standard deviations above the
// query's null, and soft, its soft match on [0, 1].
func Relevance(own float64, lexical bool, z, soft float64) float64 {
	s := calibration.bias + calibration.own*own + calibration.z*z + calibration.soft*soft
	if lexical {
		s += calibration.lexical
	}
	return 1 / (1 + math.Exp(-s))
}

// calibrate sets every candidate's OwnCoverage, VectorZ and Relevance.
func calibrate(q *Query, cands []Candidate, src Source) error {
	if err := loadMissingDocs(cands, src); err != nil {
		return err
	}
	terms := q.contentTerms()
	for i := range cands {
		c := &cands[i]
		if c.doc != nil {
			c.OwnCoverage = c.doc.ownCoverage(terms)
		}
		if q.VectorNull.SD > 0 && c.Vector != 0 {
			c.VectorZ = (c.Vector - q.VectorNull.Mean) / q.VectorNull.SD
		}
		c.Relevance = Relevance(c.OwnCoverage, c.Text > 0, c.VectorZ, 0)
	}
	return nil
}

// calibrateSoft sets the soft match of the first q.K candidates (cands
// is selected: the results) and their relevance with it; the others
// keep a relevance without it (soft 0), as does a result the caller
// reaches past a record that is gone. The soft match costs word vectors
// and cosines for every word of a candidate: for every candidate it
// raised the LoCoMo flat median latency from about 7 to 16-20 ms.
func calibrateSoft(q *Query, cands []Candidate, lex Lexicon) error {
	top := cands[:min(len(cands), max(q.K, 1))]
	soft, err := softMatch(q, top, lex)
	if err != nil || soft == nil {
		return err
	}
	for i := range top {
		c := &top[i]
		c.SoftMatch = soft[i]
		c.Relevance = Relevance(c.OwnCoverage, c.Text > 0, c.VectorZ, c.SoftMatch)
	}
	return nil
}

// loadMissingDocs attaches the metadata of candidates that have none yet.
func loadMissingDocs(cands []Candidate, src Source) error {
	var ids []uint64
	var at []int
	for i := range cands {
		if cands[i].doc == nil {
			ids = append(ids, cands[i].ID)
			at = append(at, i)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	docs, err := src.Docs(ids)
	if err != nil {
		return err
	}
	for j, i := range at {
		if j < len(docs) && docs[j].ID == cands[i].ID {
			d := docs[j]
			cands[i].doc = &d
		}
	}
	return nil
}
