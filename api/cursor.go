package api

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// Cursors are opaque to clients: base64url of a kind byte, then for
// searches a hash of the query and filter and the offset of the next
// result, for listings a hash of the filter and direction and the engine's
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

func searchCursor(req *SearchRequest, offset int) string {
	h := queryHash(append([]string{"search", req.Query}, filterParts(&req.Filter)...)...)
	return encodeCursor(cursorSearch, h, binary.AppendUvarint(nil, uint64(offset)))
}

func searchOffset(req *SearchRequest) (int, error) {
	if req.Cursor == "" {
		return 0, nil
	}
	h := queryHash(append([]string{"search", req.Query}, filterParts(&req.Filter)...)...)
	p, err := decodeCursor(req.Cursor, cursorSearch, h)
	if err != nil {
		return 0, err
	}
	off, n := binary.Uvarint(p)
	if n != len(p) || off > MaxSearchDepth {
		return 0, fmt.Errorf("%w: bad offset", ErrBadCursor)
	}
	return int(off), nil
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
