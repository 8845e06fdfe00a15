package fts

import (
	"encoding/binary"
	"fmt"

	"github.com/hmo-dev/hmo/engine"
)

// Field lengths are kept beside the documents, with bleve's internal
// values written in the same batch as the documents: the total length of
// each field (keyLengths) and each document's own lengths (docLenKey), so
// that a delete can take its document's lengths off the totals. bleve's
// own statistics have no true total length (its BM25 uses the size of the
// term dictionary instead).
var keyLengths = []byte("hmo_lengths") // nFields big-endian uint64 totals

func docLenKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte("hmo_dl:"), id)
}

type totals [nFields]uint64

func (t *totals) add(l *[nFields]uint32) {
	if l == nil {
		return
	}
	for f := range nFields {
		t[f] += uint64(l[f])
	}
}

func (t *totals) sub(l *[nFields]uint32) {
	if l == nil {
		return
	}
	for f := range nFields {
		t[f] -= min(t[f], uint64(l[f]))
	}
}

func (t *totals) encode() []byte {
	b := make([]byte, 0, 8*nFields)
	for _, v := range t {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

func decodeTotals(b []byte) (totals, error) {
	var t totals
	switch len(b) {
	case 0:
		return t, nil
	case 8 * nFields:
		for f := range nFields {
			t[f] = binary.BigEndian.Uint64(b[8*f:])
		}
		return t, nil
	}
	return t, fmt.Errorf("fts: field lengths: %w (%d bytes)", ErrCorrupt, len(b))
}

func encodeDocLen(l *[nFields]uint32) []byte {
	b := make([]byte, 0, 4*nFields)
	for _, v := range l {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// lengths reads the field totals. The caller holds applyMu.
func (x *Index) lengths() (totals, error) {
	b, err := x.bi.GetInternal(keyLengths)
	if err != nil {
		return totals{}, x.wrap("apply", err)
	}
	return decodeTotals(b)
}

// docLengths reads a document's field lengths, nil when it has none.
func (x *Index) docLengths(id uint64) (*[nFields]uint32, error) {
	b, err := x.bi.GetInternal(docLenKey(id))
	if err != nil {
		return nil, x.wrap("apply", err)
	}
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) != 4*nFields {
		return nil, fmt.Errorf("fts: document %d lengths: %w (%d bytes)", id, ErrCorrupt, len(b))
	}
	var l [nFields]uint32
	for f := range nFields {
		l[f] = binary.BigEndian.Uint32(b[4*f:])
	}
	return &l, nil
}

// fieldLengths analyses d's scored fields and counts their tokens, as
// bleve counts a field's length.
func (x *Index) fieldLengths(d *engineDoc) [nFields]uint32 {
	var l [nFields]uint32
	for f, text := range docFields(d) {
		if text != "" {
			l[f] = uint32(len(x.analyzer.Analyze([]byte(text))))
		}
	}
	return l
}

type engineDoc = engine.TextDoc

// docFields are d's scored fields in the order of the per-field arrays.
func docFields(d *engineDoc) [nFields]string {
	return [nFields]string{fText: d.Text, fContext: d.Context, fRole: d.Role}
}
