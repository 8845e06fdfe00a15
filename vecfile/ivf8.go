package vecfile

import (
	"encoding/binary"
	"math"
	"sync"

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
	size := p.size
	// The nearest lists, the lists and their spans are kept for the
	// next search (ivf8Bufs): the hits returned are the scan's own.
	buf := ivf8Bufs.Get().(*ivf8Buf)
	defer ivf8Bufs.Put(buf)
	near := p.appendNearest(buf.near[:0], uq, min(max(x.opts.Int8Probes, int(math.Ceil(ivf8MinShare*float64(p.lists)))), p.lists), dims)
	lists := buf.lists[:0]
	total := 0
	for _, h := range near {
		lists = append(lists, h.Row)
		total += size(h.Row)
	}
	if total < ivfMinRows*cands && len(lists) < p.lists {
		near = p.appendNearest(near[:0], uq, p.lists, dims)
		for _, h := range near[len(lists):] {
			if total >= ivfMinRows*cands {
				break
			}
			lists = append(lists, h.Row)
			total += size(h.Row)
		}
	}
	outside := len(p.outRows)
	if x.n > p.rows {
		outside += x.n - p.rows
	}
	spans, lane := p.appendLaneSpans(buf.spans[:0], buf.lane, lists, vecscan.Parts(total+outside))
	defer func() { buf.near, buf.lists, buf.spans, buf.lane = near[:0], lists[:0], spans[:0], lane[:0] }()
	if x.n > p.rows {
		spans = append(spans, ivfSpan{p.rows, x.n - p.rows, false})
	}
	for _, r := range p.outRows {
		spans = append(spans, ivfSpan{r, 1, false})
	}
	q16, qscale := quantizeQuery(uq, dims)
	hits, err := p.scanEntries(spans, cands, keep, float32(math.Inf(-1)), x.mat, st, func(data []byte, out []float32) int {
		return dot8.DotsScaled(q16, data, st, dims, out)
	})
	if err != nil {
		return nil, nil, err
	}
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

// appendLaneSpans appends to spans the spans of the entries of lists
// (nearest first) for a scan split into parts contiguous parts
// (vecscan.ScanFunc), and returns it with lane, lane[i] the lane of
// lists[i]: each list goes, in lists' order, to the lane with the fewest
// rows so far (the first of them on a tie), and the lanes follow each
// other, each in lists' order, so that every part starts at its share
// of the nearest lists. A part's heap then raises its bar early and
// takes fewer rows; the rows scanned, and so the best of them, are the
// same in any order.
func (p *partition) appendLaneSpans(spans []ivfSpan, lane, lists []int, parts int) ([]ivfSpan, []int) {
	lane = lane[:0]
	var rowsBuf [16]int
	var rows []int // the rows of each lane so far
	if parts <= len(rowsBuf) {
		rows = rowsBuf[:max(parts, 1)]
	} else {
		rows = make([]int, parts)
	}
	for _, l := range lists {
		j := 0
		for i := 1; i < len(rows); i++ {
			if rows[i] < rows[j] {
				j = i
			}
		}
		rows[j] += p.size(l)
		lane = append(lane, j)
	}
	for j := range rows {
		for i, l := range lists {
			if n := p.size(l); lane[i] == j && n > 0 {
				spans = append(spans, ivfSpan{p.starts[l], n, true})
			}
		}
	}
	return spans, lane
}

// ivf8Buf is scanIVF8's nearest lists, the lists to probe, their spans
// and lanes, kept for reuse.
type ivf8Buf struct {
	near  []vecscan.Hit
	lists []int
	spans []ivfSpan
	lane  []int
}

var ivf8Bufs = sync.Pool{New: func() any { return new(ivf8Buf) }}
