package api

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// Cursors are opaque to clients: base64url of a kind byte, then for
// searches a hash of the query and filter and the ids already shown, for listings a hash of the filter and direction and the engine's
// time-index position.
const (
	cursorSearch byte = 's'
	cursorList   byte = 'l'
)

func queryHash(parts ...string) uint32 {
	h := fnv.New32a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum32()
}

func filterParts(f *Filter) []string {
	return []string{f.Scope, f.Session, timeText(f.From), timeText(f.To)}
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func encodeCursor(kind byte, hash uint32, payload []byte) string {
	b := append([]byte{kind}, binary.BigEndian.AppendUint32(nil, hash)...)
	return base64.RawURLEncoding.EncodeToString(append(b, payload...))
}

// decodeCursor checks a cursor's kind and hash and returns its payload.
func decodeCursor(c string, kind byte, hash uint32) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 5 || b[0] != kind {
		return nil, fmt.Errorf("%w: malformed", ErrBadCursor)
	}
	if binary.BigEndian.Uint32(b[1:5]) != hash {
		return nil, fmt.Errorf("%w: it belongs to another query", ErrBadCursor)
	}
	return b[5:], nil
}

// A search cursor pins what the earlier pages showed: the ids shown, sorted
// and delta-coded. A page is the next results of the query's ranking
// that were not shown, so pages never repeat a memory even when the
// ranking moves between calls (writes, tier promotions), and paging ends
// when the ranking has nothing new or MaxSearchDepth memories were shown.
func searchCursor(req *SearchRequest, shown []uint64) string {
	h := queryHash(append([]string{"search", req.Query}, filterParts(&req.Filter)...)...)
	ids := slices.Clone(shown)
	slices.Sort(ids)
	p := binary.AppendUvarint(nil, uint64(len(ids)))
	var last uint64
	for _, id := range ids {
		p = binary.AppendUvarint(p, id-last)
		last = id
	}
	return encodeCursor(cursorSearch, h, p)
}

// searchShown decodes the ids a search cursor says were shown.
func searchShown(req *SearchRequest) (map[uint64]bool, error) {
	shown := map[uint64]bool{}
	if req.Cursor == "" {
		return shown, nil
	}
	h := queryHash(append([]string{"search", req.Query}, filterParts(&req.Filter)...)...)
	p, err := decodeCursor(req.Cursor, cursorSearch, h)
	if err != nil {
		return nil, err
	}
	n, k := binary.Uvarint(p)
	if k <= 0 || n == 0 || n > MaxSearchDepth {
		return nil, fmt.Errorf("%w: bad count", ErrBadCursor)
	}
	p = p[k:]
	var id uint64
	for range n {
		d, k := binary.Uvarint(p)
		if k <= 0 || (d == 0 && len(shown) > 0) {
			return nil, fmt.Errorf("%w: bad id list", ErrBadCursor)
		}
		id += d
		shown[id] = true
		p = p[k:]
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", ErrBadCursor)
	}
	return shown, nil
}

func listHash(req *ListRequest) uint32 {
	dir := "asc"
	if req.Reverse {
		dir = "desc"
	}
	return queryHash(append([]string{"list", dir}, filterParts(&req.Filter)...)...)
}

func listCursor(req *ListRequest, pos []byte) string {
	return encodeCursor(cursorList, listHash(req), pos)
}

func listPosition(req *ListRequest) ([]byte, error) {
	if req.Cursor == "" {
		return nil, nil
	}
	p, err := decodeCursor(req.Cursor, cursorList, listHash(req))
	if err != nil {
		return nil, err
	}
	if len(p) != engine.PositionSize {
		return nil, fmt.Errorf("%w: bad position", ErrBadCursor)
	}
	return p, nil
}
