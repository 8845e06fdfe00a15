package static

import "math"

// embed computes the SIF vector of one text; s.mu is held for reading.
// acc is scratch space of length dims.
func (s *Static) embed(sc *scanner, text string, acc []float64) []float32 {
	clear(acc)
	words := 0
	sc.scan(text, func(id int, tok []byte) {
		r := tokenRef{id: id}
		if id < 0 {
			if s.opts.Unknown == UnknownSkip {
				return
			}
			r.hash = hashBytes(tok)
		}
		if s.addToken(acc, r) {
			words++
		}
	})
	return s.finish(acc, words)
}

// addToken adds the weighted vector of token r to acc and reports
// whether it counts as a word (an unknown word under UnknownSkip does
// not); s.mu is held for reading.
func (s *Static) addToken(acc []float64, r tokenRef) bool {
	dims := s.tab.dims
	if r.id >= 0 {
		w := s.weight(s.probKnown(r.id)) * float64(s.tab.scales[r.id])
		addScaled(acc, s.tab.vecs[r.id*dims:(r.id+1)*dims], w)
		return true
	}
	if s.opts.Unknown == UnknownSkip {
		return false
	}
	addHashed(acc, r.hash, s.weight(s.probUnknown(r.hash))*s.opts.UnknownNorm/math.Sqrt(float64(dims)))
	return true
}

// finish removes the common component and normalises. A text without
// usable words, or whose vector is the common component itself, gets the
// fallback vector.
func (s *Static) finish(acc []float64, words int) []float32 {
	out := make([]float32, len(acc))
	if words > 0 && s.common != nil {
		var dot float64
		for j, u := range s.common {
			dot += acc[j] * u
		}
		for j, u := range s.common {
			acc[j] -= dot * u
		}
	}
	var ss float64
	for _, x := range acc {
		ss += x * x
	}
	if words == 0 || ss < 1e-18 {
		copy(out, s.empty)
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for j, x := range acc {
		out[j] = float32(x * inv)
	}
	return out
}

// weight is the SIF weight of a word of probability p.
func (s *Static) weight(p float64) float64 {
	return s.opts.A / (s.opts.A + p)
}

// prior is the Zipf probability of the word of the given source rank.
func (s *Static) prior(rank int) float64 {
	return 1 / (float64(rank+1) * s.tab.zipfH)
}

// probKnown is p(w) of table word id; s.mu is held for reading.
func (s *Static) probKnown(id int) float64 {
	var n uint32
	if s.corpus.known != nil {
		n = s.corpus.known[id]
	}
	return s.prob(n, s.prior(int(s.tab.ranks[id])))
}

// probUnknown is p(w) of an unknown word with the given hash; its prior is
// that of a word ranked just past the source vocabulary.
func (s *Static) probUnknown(h uint64) float64 {
	return s.prob(s.corpus.unknown[h], s.prior(s.tab.sourceSize))
}

func (s *Static) prob(n uint32, prior float64) float64 {
	total := float64(s.corpus.total)
	switch s.opts.Probabilities {
	case ProbPrior:
		return prior
	case ProbStore:
		if total == 0 {
			return 0
		}
		return float64(n) / total
	default:
		m := s.opts.PriorTokens
		return (float64(n) + m*prior) / (total + m)
	}
}

// addScaled adds w times the int8 components q to acc.
func addScaled(acc []float64, q []byte, w float64) {
	acc = acc[:len(q)]
	for j, b := range q {
		acc[j] += w * float64(int8(b))
	}
}

// addHashed adds w times the pseudo-random ±1 vector of hash h to acc.
func addHashed(acc []float64, h uint64, w float64) {
	var bits uint64
	for j := range acc {
		if j%64 == 0 {
			bits = splitmix64(h + uint64(j/64+1)*0x9e3779b97f4a7c15)
		}
		if bits&1 == 0 {
			acc[j] += w
		} else {
			acc[j] -= w
		}
		bits >>= 1
	}
}

// splitmix64 is the output function of the SplitMix64 generator.
func splitmix64(x uint64) uint64 {
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// commonKey identifies a prior common component: it depends on the table,
// A and the vocabulary size.
type commonKey struct {
	a     float64
	limit int
}

// initCommon sets the fallback vector and, under CommonPrior, the common
// component: the SIF-weighted mean word vector under the Zipf prior,
// normalised. Texts without usable words get it as their vector, so they
// score cosine 0 against every text whose vector has it removed.
func (s *Static) initCommon() {
	key := commonKey{s.opts.A, s.limit}
	u, ok := s.tab.commons.Load(key)
	if !ok {
		u, _ = s.tab.commons.LoadOrStore(key, s.priorMean())
	}
	mu := u.([]float64)
	s.empty = make([]float32, len(mu))
	for j, x := range mu {
		s.empty[j] = float32(x)
	}
	if s.opts.CommonComponent == CommonPrior {
		s.common = mu
	}
}

// priorMean computes the normalised SIF-weighted mean word vector under
// the Zipf prior (the first basis vector if it is zero).
func (s *Static) priorMean() []float64 {
	dims := s.tab.dims
	mu := make([]float64, dims)
	for id := range s.limit {
		p := s.prior(int(s.tab.ranks[id]))
		addScaled(mu, s.tab.vecs[id*dims:(id+1)*dims], p*s.weight(p)*float64(s.tab.scales[id]))
	}
	var ss float64
	for _, x := range mu {
		ss += x * x
	}
	if ss == 0 {
		mu[0] = 1
		return mu
	}
	inv := 1 / math.Sqrt(ss)
	for j := range mu {
		mu[j] *= inv
	}
	return mu
}
