// Package hymem is HyMem's dual-granularity retrieval (seed 001). Event
// units are the level-1 segments of the segment tree (contiguous turns on
// one topic, package segtree): each has a Level-1 memory, its extractive
// summary (package hymem/event, stored by the engine beside the tree),
// linked to its Level-2 memory, the raw turns. A query first
// takes the light path: the summaries of the event units its best records
// belong to. Only when the engine's Sufficiency (the score test offline,
// the LLM's judgement when a chat model is configured) finds the light
// result insufficient does it take the deep path to the raw turns of the
// best units, and reflection rounds, at most Options.MaxRounds, add the
// next batch of units while the deep result is still insufficient.
package hymem

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/retrieve"
	"github.com/hmo-dev/hmo/xmemory"
)

// ErrInvalidOption is returned for options out of range.
var ErrInvalidOption = errors.New("hymem: invalid option")

// Source is what the paths read: the engine implements it.
type Source interface {
	Recall(ctx context.Context, q engine.Query) ([]engine.Result, error)
	// Episode returns a record's event unit: its level-1 segment, the
	// segment's records and its summary; segment 0 when it has none.
	Episode(id uint64) (seg uint64, members []uint64, summary string, err error)
	Get(id uint64) (engine.Record, error)
}

var _ Source = (*engine.Engine)(nil)

// Options tune Retrieve. Zero values mean the defaults.
type Options struct {
	// K is how many records the light path recalls to find its units
	// (the paper's k = 10). Default DefaultK.
	K int
	// Batch is how many event units the deep path expands per round.
	// Default DefaultBatch.
	Batch int
	// MaxRounds caps the deep path's rounds (the first one and the
	// reflection rounds). Default DefaultMaxRounds.
	MaxRounds int
}

// Defaults of Options.
const (
	DefaultK         = 10
	DefaultBatch     = 3
	DefaultMaxRounds = 2
)

func (o Options) withDefaults() (Options, error) {
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.Batch == 0 {
		o.Batch = DefaultBatch
	}
	if o.MaxRounds == 0 {
		o.MaxRounds = DefaultMaxRounds
	}
	if o.K < 1 || o.K > engine.DefaultMaxK || o.Batch < 1 || o.MaxRounds < 1 {
		return o, fmt.Errorf("%w: k %d, batch %d, rounds %d", ErrInvalidOption, o.K, o.Batch, o.MaxRounds)
	}
	return o, nil
}

// Unit is an event unit: its Level-1 summary and its Level-2 turns.
type Unit struct {
	Segment uint64          // 0 for a record outside any segment (its own unit)
	Summary string          // Level-1 memory
	Turns   []uint64        // Level-2 memory, in time order
	Best    engine.Result   // the unit's best recalled record
	Records []engine.Record // the Level-2 turns, filled on the deep path
}

// Path names the path a query ended on.
type Path string

// Paths.
const (
	Light Path = "light"
	Deep  Path = "deep"
)

// Result is what Retrieve found.
type Result struct {
	Path   Path
	Units  []Unit // best first; on the deep path, those expanded
	Rounds int    // deep rounds run (0 on the light path)
}

// Retrieve answers q by the light path, or the deep path when suff finds
// the light result insufficient.
func Retrieve(ctx context.Context, src Source, suff engine.Sufficiency, q engine.Query, o *Options) (*Result, error) {
	var c Options
	if o != nil {
		c = *o
	}
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	q.K = c.K * 3 // the coarse recall (the paper's N = 30 for k = 10)
	q.NoAccess = true
	res, err := src.Recall(ctx, q)
	if err != nil {
		return nil, err
	}
	units, err := unitsOf(src, res)
	if err != nil {
		return nil, err
	}
	terms := retrieve.ContentTerms(q.Text)
	light := units[:min(len(units), c.K)]
	lq := q
	lq.K = min(c.K, len(light))
	if ok, _ := suff.Sufficient(ctx, &lq, 1, asResults(light, terms)); ok || len(light) == 0 {
		return &Result{Path: Light, Units: light}, nil
	}
	out := &Result{Path: Deep}
	for round := 0; round < c.MaxRounds; round++ {
		from := round * c.Batch
		if from >= len(units) {
			break
		}
		batch := units[from:min(len(units), from+c.Batch)]
		for i := range batch {
			for _, id := range batch[i].Turns {
				if r, err := src.Get(id); err == nil && r.SupersededBy == 0 {
					batch[i].Records = append(batch[i].Records, r)
				}
			}
		}
		out.Units = append(out.Units, batch...)
		out.Rounds++
		var deep []engine.Result
		for _, u := range out.Units {
			for _, r := range u.Records {
				deep = append(deep, engine.Result{Record: r, Coverage: retrieve.OwnCoverage(terms, r.Text), Score: u.Best.Score})
			}
		}
		dq := q
		dq.K = 1
		if ok, _ := suff.Sufficient(ctx, &dq, 3, bestCoverageFirst(deep)); ok {
			break
		}
	}
	return out, nil
}

// unitsOf groups recalled records into their event units, best first.
func unitsOf(src Source, res []engine.Result) ([]Unit, error) {
	var units []Unit
	seen := map[uint64]bool{}
	for _, r := range res {
		seg, members, summary, err := src.Episode(r.Record.ID)
		if err != nil {
			return nil, err
		}
		if seg == 0 {
			units = append(units, Unit{Summary: r.Record.Text, Turns: []uint64{r.Record.ID}, Best: r})
			continue
		}
		if seen[seg] {
			continue
		}
		seen[seg] = true
		units = append(units, Unit{Segment: seg, Summary: summary, Turns: members, Best: r})
	}
	return units, nil
}

// asResults presents the light path's summaries to a Sufficiency: one
// result per unit whose text is the summary and whose coverage is the
// summary's own coverage of the query's terms.
func asResults(units []Unit, terms []string) []engine.Result {
	out := make([]engine.Result, len(units))
	for i, u := range units {
		r := u.Best
		r.Record.Text = u.Summary
		r.Record.Prev = 0
		r.Coverage = retrieve.OwnCoverage(terms, u.Summary)
		out[i] = r
	}
	return bestCoverageFirst(out)
}

// bestCoverageFirst moves the result of the highest coverage to the front
// (the score test judges the best result).
func bestCoverageFirst(res []engine.Result) []engine.Result {
	b := 0
	for i := range res {
		if res[i].Coverage > res[b].Coverage {
			b = i
		}
	}
	if b > 0 {
		res[0], res[b] = res[b], res[0]
	}
	return res
}

// Render lays the result out within maxBytes: on the light path one line
// per unit, "- [event date, N turns: #first-#last] summary"; on the deep
// path the units' turns, "- [#id date role] text". It returns the text
// and the ids of the records whose own text it shows (on the light path,
// the turns whose whole semantic fact, xmemory.StatedFact, the summary
// holds).
// A line that does not fit is left out; nothing is cut in half.
func Render(res *Result, src Source, maxBytes int) (string, []uint64) {
	var sb []byte
	var ids []uint64
	put := func(line string) bool {
		if len(sb)+len(line) > maxBytes {
			return false
		}
		sb = append(sb, line...)
		return true
	}
	for _, u := range res.Units {
		if res.Path == Light {
			first, last := u.Turns[0], u.Turns[len(u.Turns)-1]
			line := fmt.Sprintf("- [event %s, %d turns: #%d-#%d] %s\n", u.Best.Record.Time.UTC().Format("2006-01-02"), len(u.Turns), first, last, oneLine(u.Summary))
			if !put(line) {
				continue
			}
			for _, id := range u.Turns {
				if r, err := src.Get(id); err == nil && holdsFact(oneLine(u.Summary), r.Text) {
					ids = append(ids, id)
				}
			}
			continue
		}
		for _, r := range u.Records {
			line := fmt.Sprintf("- [#%d %s %s] %s\n", r.ID, r.Time.UTC().Format("2006-01-02"), r.Role, oneLine(r.Text))
			if put(line) {
				ids = append(ids, r.ID)
			}
		}
	}
	return string(sb), ids
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// holdsFact reports whether summary holds text's semantic fact whole.
func holdsFact(summary, text string) bool {
	f := xmemory.StatedFact(text)
	return f != "" && strings.Contains(summary, f)
}
