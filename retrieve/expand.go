package retrieve

import (
	"slices"
	"sort"
)

// Linker is implemented by a Source that knows which records share
// entities with others (the entity graph). The expansion stage runs only
// over sources that implement it.
type Linker interface {
	// Linked returns, for each seed, up to fanout records sharing an
	// entity with it, best first, each with a weight in (0, 1].
	Linked(seeds []uint64, fanout int) ([][]Hit, error)
}

// ExpandOptions configure the multi-hop expansion stage.
type ExpandOptions struct {
	// Seeds is how many of the best candidates the expansion starts
	// from. Default DefaultExpandSeeds.
	Seeds int
	// Fanout is how many linked records each seed reaches at most.
	// Default DefaultExpandFanout.
	Fanout int
	// Share is the share of a seed's score a linked record gets, times
	// the link's weight. Default DefaultExpandShare.
	Share float64
	// Prior is the weight of the entity prior (entityprior stage): a
	// share of the best fused score for records naming a specific
	// entity. Default DefaultEntityWeight.
	Prior float64
}

// Defaults of the expansion stage: a few seeds (the top of the list is
// where the first hop is right), a bounded fan-out, and a share small
// enough that a linked record passes only candidates the text scored
// weakly.
const (
	DefaultExpandSeeds  = 5
	DefaultExpandFanout = 10
	DefaultExpandShare  = 0.3
)

// expandEntities adds to the candidates the records linked to the best seeds,
// each getting Share times its best seed's score times the link weight;
// a linked record already a candidate gets that much added. It runs after
// the priors, so the seeds are the pipeline's best guess so far.
func expandEntities(o *ExpandOptions, cands []Candidate, l Linker) ([]Candidate, error) {
	selectBest(cands)
	n := min(o.Seeds, len(cands))
	if n == 0 {
		return cands, nil
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = cands[i].ID
	}
	links, err := l.Linked(seeds, o.Fanout)
	if err != nil {
		return nil, err
	}
	gain := map[uint64]float64{}
	for i, ls := range links {
		for _, h := range ls {
			gain[h.ID] = max(gain[h.ID], o.Share*cands[i].Score*h.Score)
		}
	}
	if len(gain) == 0 {
		return cands, nil
	}
	for i := range cands {
		if g, ok := gain[cands[i].ID]; ok {
			cands[i].Score += g
			delete(gain, cands[i].ID)
		}
	}
	// New candidates, in id order for a deterministic result.
	ids := make([]uint64, 0, len(gain))
	for id := range gain {
		ids = append(ids, id)
	}
	sortIDs(ids)
	cands = slices.Grow(cands, len(ids))
	for _, id := range ids {
		cands = append(cands, Candidate{ID: id, Score: gain[id]})
	}
	return cands, nil
}

func sortIDs(ids []uint64) {
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
}

// Specifier is implemented by a Source that can tell which records name
// specific entities (the entity graph). The entity prior runs only over
// sources that implement it.
type Specifier interface {
	// Specific returns, for each id, how many specific (non-hub)
	// entities the record names.
	Specific(ids []uint64) ([]int, error)
}

// DefaultEntityWeight is the weight of the entity prior.
const DefaultEntityWeight = 0.1

// entityPrior adds w times the best fused score to candidates that name
// a specific entity.
func entityPrior(cands []Candidate, sp Specifier, w, scale float64) error {
	ids := make([]uint64, len(cands))
	for i := range cands {
		ids[i] = cands[i].ID
	}
	n, err := sp.Specific(ids)
	if err != nil {
		return err
	}
	for i := range cands {
		if n[i] > 0 {
			cands[i].Score += w * scale
		}
	}
	return nil
}
