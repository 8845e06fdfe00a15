package retrieve

// Fusion names how the lexical and vector candidate lists are combined.
type Fusion string

// Fusion methods.
const (
	FusionLinear Fusion = "linear" // min-max normalised scores, weighted sum
	FusionRRF    Fusion = "rrf"    // reciprocal-rank fusion
	FusionScale  Fusion = "scale"  // BM25 divided by its maximum, cosine as is, weighted sum
)

// FusionOptions configure the fusion stage.
type FusionOptions struct {
	// Method combines the lists. Default FusionLinear.
	Method Fusion
	// TextWeight is the weight of the lexical side in linear and scale
	// fusion, in [0, 1]; the vector side gets 1 - TextWeight. When only
	// one generator runs it gets the whole weight. Default 0.8.
	TextWeight float64
	// RRFK is the reciprocal-rank constant. Default 60.
	RRFK int
}

// fuse merges the generators' lists into candidates with a fused score.
func fuse(o *FusionOptions, text, vec []Hit, useText, useVec bool) []Candidate {
	idx := takePlaces(len(text) + len(vec))
	defer dropPlaces(idx)
	// pos[i] is the place in out of text[i], pos[len(text)+j] that of
	// vec[j]: the sums below add to it without looking the id up again.
	// The places are counted first, so that out is made at the size of
	// the union (a tier's two lists share most of their records), with a
	// quarter more room for the candidates the context credit adds (never
	// more than the two lists' lengths, as it was made before).
	pos := make([]int32, len(text)+len(vec))
	n := 0
	place := func(id uint64, at int) {
		i, ok := idx.get(id)
		if !ok {
			i = n
			idx.put(id, i)
			n++
		}
		pos[at] = int32(i)
	}
	for i, h := range text {
		place(h.ID, i)
	}
	for j, h := range vec {
		place(h.ID, len(text)+j)
	}
	out := make([]Candidate, n, min(n+n/4, len(text)+len(vec)))
	for i, h := range text {
		c := &out[pos[i]]
		c.ID, c.Text, c.Coverage = h.ID, h.Score, h.Coverage
	}
	for j, h := range vec {
		c := &out[pos[len(text)+j]]
		c.ID, c.Vector = h.ID, h.Score
	}
	addText := func(i int, v float64) { out[pos[i]].Fused += v }
	addVec := func(j int, v float64) { out[pos[len(text)+j]].Fused += v }
	switch o.Method {
	case FusionRRF:
		addRRF(addText, text, o.RRFK)
		addRRF(addVec, vec, o.RRFK)
	case FusionScale:
		addScaled(addText, text, o.TextWeight, true)
		addScaled(addVec, vec, 1-o.TextWeight, false)
	default:
		w := o.TextWeight
		if !useVec {
			w = 1
		} else if !useText {
			w = 0
		}
		addMinMax(addText, text, w)
		addMinMax(addVec, vec, 1-w)
	}
	for i := range out {
		out[i].Score = out[i].Fused
	}
	return out
}

// The add functions add to the candidate of list[i] (add(i, v)).

func addRRF(add func(int, float64), list []Hit, k int) {
	for rank := range list {
		add(rank, 1/float64(k+rank+1))
	}
}

// addMinMax adds w times the min-max normalised score of each hit.
func addMinMax(add func(int, float64), list []Hit, w float64) {
	if len(list) == 0 || w == 0 {
		return
	}
	lo, hi := list[0].Score, list[0].Score
	for _, h := range list {
		lo, hi = min(lo, h.Score), max(hi, h.Score)
	}
	for i, h := range list {
		n := 1.0
		if hi > lo {
			n = (h.Score - lo) / (hi - lo)
		}
		add(i, w*n)
	}
}

// addScaled adds w times each score, divided by the list's maximum when
// byMax (BM25 has no fixed scale; cosine has).
func addScaled(add func(int, float64), list []Hit, w float64, byMax bool) {
	if len(list) == 0 || w == 0 {
		return
	}
	hi := 1.0
	if byMax {
		hi = list[0].Score
		for _, h := range list {
			hi = max(hi, h.Score)
		}
	}
	for i, h := range list {
		add(i, w*max(h.Score, 0)/hi)
	}
}
