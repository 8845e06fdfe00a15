package engine

import (
	"bytes"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Listing defaults.
const (
	DefaultListLimit = 20     // records per page when a ListQuery says 0
	MaxListLimit     = 1000   // largest page
	MaxListScan      = 100000 // time-index entries examined per call; a page may end early, with a cursor
)

// ListQuery pages through current records in event-time order. Zero
// filter fields do not filter. History versions are never listed.
type ListQuery struct {
	Scope   string
	Session string
	From    time.Time // event time, inclusive
	To      time.Time // event time, exclusive
	Limit   int       // records per page; 0 means DefaultListLimit
	Reverse bool      // newest first
	// After is the position to continue from: a previous page's Next.
	// Nil starts at the beginning (or the end, when Reverse).
	After []byte
}

// ListPage is one page of a listing. Next is nil at the end.
type ListPage struct {
	Records []Record
	Next    []byte
}

// PositionSize is the length of a listing position (ListQuery.After).
const PositionSize = 16

func (q *ListQuery) validate() error {
	switch {
	case q.Limit < 0 || q.Limit > MaxListLimit:
		return fmt.Errorf("%w: limit %d outside [0, %d]", ErrInvalidQuery, q.Limit, MaxListLimit)
	case q.After != nil && len(q.After) != PositionSize:
		return fmt.Errorf("%w: bad list position", ErrInvalidQuery)
	case !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To):
		return fmt.Errorf("%w: empty time range", ErrInvalidQuery)
	}
	if q.Limit == 0 {
		q.Limit = DefaultListLimit
	}
	return nil
}

// List returns one page of current records in event-time order (then id).
func (e *Engine) List(q ListQuery) (ListPage, error) {
	if err := e.checkOpen(); err != nil {
		return ListPage{}, err
	}
	if err := q.validate(); err != nil {
		return ListPage{}, err
	}
	match := Query{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To}
	var page ListPage
	err := e.db.View(func(tx *bolt.Tx) error {
		w := &timeWalk{c: tx.Bucket(bucketByTime).Cursor(), q: &q}
		var done []byte // the last key fully examined
		for k := w.first(); k != nil && w.inRange(k); k = w.next() {
			if w.scanned > MaxListScan {
				// Long run of non-matching records: end the page
				// early; the caller continues with the cursor.
				page.Next = bytes.Clone(done)
				return nil
			}
			r, err := getRecord(tx, keyU64(k[8:]))
			if err == nil && match.match(&r) {
				if len(page.Records) == q.Limit {
					page.Next = bytes.Clone(done)
					return nil
				}
				page.Records = append(page.Records, r)
			}
			done = k
		}
		return nil
	})
	// Outside the read transaction: the tier lock is taken by writers
	// that may wait for readers to finish.
	for i := range page.Records {
		e.overlayHeader(&page.Records[i])
	}
	return page, err
}

// timeWalk steps through the time index forwards or backwards, starting
// after a position or at the query's time bound.
type timeWalk struct {
	c       *bolt.Cursor
	q       *ListQuery
	scanned int
}

func (w *timeWalk) first() []byte {
	w.scanned++
	if !w.q.Reverse {
		if w.q.After != nil {
			k, _ := w.c.Seek(w.q.After)
			if bytes.Equal(k, w.q.After) {
				k, _ = w.c.Next()
			}
			return k
		}
		if !w.q.From.IsZero() {
			k, _ := w.c.Seek(timeKey(w.q.From, 0))
			return k
		}
		k, _ := w.c.First()
		return k
	}
	var start []byte
	switch {
	case w.q.After != nil:
		start = w.q.After
	case !w.q.To.IsZero():
		start = timeKey(w.q.To, 0)
	default:
		k, _ := w.c.Last()
		return k
	}
	// The last key strictly before start.
	k, _ := w.c.Seek(start)
	if k == nil {
		k, _ = w.c.Last()
		if k != nil && bytes.Compare(k, start) >= 0 {
			k, _ = w.c.Prev()
		}
		return k
	}
	k, _ = w.c.Prev()
	return k
}

func (w *timeWalk) next() []byte {
	w.scanned++
	if w.q.Reverse {
		k, _ := w.c.Prev()
		return k
	}
	k, _ := w.c.Next()
	return k
}

// inRange reports whether k is still inside the query's time bound in the
// walk's direction; the walk stops at the first key outside.
func (w *timeWalk) inRange(k []byte) bool {
	if len(k) != PositionSize {
		return false
	}
	if w.q.Reverse {
		return w.q.From.IsZero() || bytes.Compare(k, timeKey(w.q.From, 0)) >= 0
	}
	return w.q.To.IsZero() || bytes.Compare(k, timeKey(w.q.To, 0)) < 0
}

// Position is r's place in the time index: pass it as ListQuery.After to
// list the records after r.
func Position(r *Record) []byte { return timeKey(r.Time, r.ID) }
