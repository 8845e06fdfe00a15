package retrieve

import "math"

// Calibration of Relevance: a logistic model of the probability that a
// candidate is evidence for the query, fitted on LoCoMo dev conversations
// 1-4 and checked on conversations 5-7 (tools/calibrate; BENCHMARKS.md).
// Its inputs mean the same in every store and for every query: the share
// of the query's content terms in the record's own text, whether the
// lexical index matched the record (with its context), and its cosine in
// standard deviations above the query's similarity to unrelated records
// of the store.
var calibration = struct {
	bias, own, lexical, z float64
}{bias: -6.606, own: 3.913, lexical: 1.507, z: 0.567}

// NullMaxZ is how far above the null the most similar of a few hundred
// unrelated records lies, in standard deviations (the expected maximum of
// that many standard normal draws, about sqrt(2 ln n)).
const NullMaxZ = 3.0

// DefaultMinScore is the relevance of a record that holds none of the
// query's words and is as similar to it as the most similar unrelated
// record is expected to be (NullMaxZ): below it a result is the
// unrelated tail. About 0.0073; on LoCoMo dev conversations 5-7 it keeps
// 88% of the evidence among the top 50 candidates and drops 53% of the
// rest (tools/calibrate).
var DefaultMinScore = Relevance(0, false, NullMaxZ)

// Relevance is the calibrated relevance of a candidate, on [0, 1]: the
// probability that it is evidence for the query, given own, the share of
// the query's content terms in its own text, lexical, whether the text
// index matched it, and z, its cosine in standard deviations above the
// query's null.
func Relevance(own float64, lexical bool, z float64) float64 {
	s := calibration.bias + calibration.own*own + calibration.z*z
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
	terms := ContentTerms(q.Text)
	for i := range cands {
		c := &cands[i]
		if c.doc != nil {
			c.OwnCoverage = c.doc.ownCoverage(terms)
		}
		if q.VectorNull.SD > 0 && c.Vector != 0 {
			c.VectorZ = (c.Vector - q.VectorNull.Mean) / q.VectorNull.SD
		}
		c.Relevance = Relevance(c.OwnCoverage, c.Text > 0, c.VectorZ)
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
