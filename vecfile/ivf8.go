package vecfile

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/hmo-dev/hmo/internal/dot8"
	"github.com/hmo-dev/hmo/internal/vecscan"
)

// ivf8MinShare is the share of a partition's lists of int8 rows a search
// probes at least: with a fixed number of probes the recall falls as
// the rows grow (on 300,000 synthetic records, lists of 125 rows: 320
// probes found 0.9937 of the exact top 10, 480, a fifth of the lists,
// 0.9975; BENCHMARKS.md, branch vec9). Tests set it to 0.
var ivf8MinShare = 0.2

// scanIVF8 is the unfiltered search of every row of an Int8Rescore index
// through the partition of its int8 rows (an ivf8 file): the int8 rows of
// the Int8Probes lists whose centroids are nearest to the query (or
// ivf8MinShare of the lists, when more; more, nearest first, while
// their rows are fewer than ivfMinRows*cands), and
// those outside the partition (appended or rewritten since its build,
// read from the matrix), ranked by their int8 dot product with the query
// as scanQuant ranks them; the best cands passing keep (nil: all), best
// first, and each one's scale. A row of a list not probed is not found.
// The caller holds mu for reading.
func (x *Index) scanIVF8(uq []float32, cands int, keep func(int) bool) ([]vecscan.Hit, []float32, error) {
	p := x.part
	dims, st := x.opts.Dims, p.stride
	size := func(l int) int { return p.starts[l+1] - p.starts[l] }
	rank := func(n int) []vecscan.Hit {
		sel := vecscan.NewHeap(n)
		for l := range p.lists {
			sel.Push(l, vecscan.Dot(uq, p.centroids[l*dims:(l+1)*dims]))
		}
		return sel.Sorted()
	}
	near := rank(min(max(x.opts.Int8Probes, int(math.Ceil(ivf8MinShare*float64(p.lists)))), p.lists))
	var lists []int
	total := 0
	for _, h := range near {
		lists = append(lists, h.Row)
		total += size(h.Row)
	}
	if total < ivfMinRows*cands && len(lists) < p.lists {
		for _, h := range rank(p.lists)[len(lists):] {
			if total >= ivfMinRows*cands {
				break
			}
			lists = append(lists, h.Row)
			total += size(h.Row)
		}
	}
	slices.Sort(lists) // in file order
	var spans []ivfSpan
	for _, l := range lists {
		if n := size(l); n > 0 {
			spans = append(spans, ivfSpan{p.starts[l], n, true})
		}
	}
	if x.n > p.rows {
		spans = append(spans, ivfSpan{p.rows, x.n - p.rows, false})
	}
	for _, r := range p.outRows {
		spans = append(spans, ivfSpan{r, 1, false})
	}
	// The virtual row v of the scan is the v-th of the spans' rows.
	begin := make([]int, len(spans)+1)
	for i, s := range spans {
		begin[i+1] = begin[i] + s.n
	}
	q16, qscale := quantizeQuery(uq, dims)
	// A hit holds its row in the high 32 bits, so that equal scores go
	// to the lower row as in the scan of every row, and its entry plus 1
	// (0: a row of the matrix) in the low ones, where its scale is read.
	hits, err := vecscan.ScanFunc(begin[len(spans)], cands, nil, func(lo, hi int, h *vecscan.Heap) {
		out := make([]float32, scanBlock)
		floor := h.Floor()
		i, _ := slices.BinarySearch(begin, lo+1)
		for i--; i < len(spans) && begin[i] < hi; i++ {
			s := spans[i]
			a, b := max(lo, begin[i])-begin[i], min(hi, begin[i+1])-begin[i]
			for blk := a; blk < b; blk += scanBlock {
				m := min(scanBlock, b-blk)
				var data []byte
				if s.ivf {
					data = p.ent[(s.pos+blk)*st:]
				} else {
					data = x.mat[pageSize+(s.pos+blk)*st:]
				}
				if dot8.DotsScaled(q16, data, st, dims, out[:m]) < m {
					panic("ivf8 rows shorter than their count") // turned into ErrFault by ScanFunc
				}
				for j, sc := range out[:m] {
					if sc < floor {
						continue
					}
					r, e := s.pos+blk+j, 0
					if s.ivf {
						if r, e = p.rowOf(r), r+1; p.isOut(r) {
							continue
						}
					}
					if keep == nil || keep(r) {
						h.Push(r<<32+e, sc)
						floor = h.Floor()
					}
				}
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(hits, vecscan.Compare)
	scales := make([]float32, len(hits))
	for k, h := range hits {
		r := h.Row >> 32
		var b []byte
		if e := h.Row - r<<32 - 1; e < 0 {
			b = x.rowAt(r)
		} else {
			b = p.ent[e*st : (e+1)*st]
		}
		scales[k] = math.Float32frombits(binary.LittleEndian.Uint32(b[dims:]))
		hits[k].Row, hits[k].Score = r, h.Score*qscale
	}
	return hits, scales, nil
}
