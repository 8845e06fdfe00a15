package fts

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
)

// Field lengths are kept beside the documents, written in the same batch:
// the total length of each field in a bleve internal value (keyLengths),
// and each document's own lengths in its stored field fieldLengths, so
// that a delete can take them off the totals. bleve's own statistics have
// no true total length (its BM25 uses the size of the term dictionary
// instead). Per-document lengths must not be internal values: scorch
// rewrites every internal value at every persist, which made ingest
// quadratic in the archive's size.
var keyLengths = []byte("hmo_lengths") // nFields big-endian uint64 totals

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

// encodeDocLen is the stored value of a document's field lengths:
// decimal numbers separated by spaces.
func encodeDocLen(l *[nFields]uint32) string {
	b := make([]byte, 0, 8*nFields)
	for f, v := range l {
		if f > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return string(b)
}

func decodeDocLen(id uint64, v []byte) (*[nFields]uint32, error) {
	parts := strings.Fields(string(v))
	if len(parts) != nFields {
		return nil, fmt.Errorf("fts: document %d lengths: %w (%q)", id, ErrCorrupt, v)
	}
	var l [nFields]uint32
	for f, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("fts: document %d lengths: %w (%q)", id, ErrCorrupt, v)
		}
		l[f] = uint32(n)
	}
	return &l, nil
}

// lengths reads the field totals. The caller holds applyMu.
func (x *Index) lengths() (totals, error) {
	b, err := x.getInternal(keyLengths)
	if err != nil {
		return totals{}, x.wrap("apply", err)
	}
	return decodeTotals(b)
}

// lengthReader reads stored document lengths through one index reader,
// opened on first use: an Apply looks up every document it replaces or
// deletes, and a reader per lookup cost more than the lookup.
type lengthReader struct {
	r index.IndexReader
}

// docLengths reads a document's field lengths, nil when it is not
// indexed. The caller holds applyMu.
func (lr *lengthReader) docLengths(x *Index, id uint64) (*[nFields]uint32, error) {
	if lr.r == nil {
		r, err := x.s.Reader()
		if err != nil {
			return nil, x.wrap("apply", err)
		}
		lr.r = r
	}
	x.lookups.Add(1)
	doc, err := lr.r.Document(docID(id))
	if err != nil {
		return nil, x.wrap("apply", err)
	}
	if doc == nil {
		return nil, nil
	}
	var v []byte
	doc.VisitFields(func(f index.Field) {
		if f.Name() == fieldLengths {
			v = f.Value()
		}
	})
	if v == nil {
		return nil, nil
	}
	return decodeDocLen(id, v)
}

// close closes the reader if it was opened, reporting its error through
// err if err is nil.
func (lr *lengthReader) close(err *error) {
	if lr.r != nil {
		closeReader(lr.r, err)
	}
}

// fieldLengths analyses d's scored fields and counts their tokens, as
// bleve counts a field's length.
func (x *Index) fieldLengths(d *engineDoc) [nFields]uint32 {
	return x.an.analyseDocs([]engineDoc{*d})[0].lengths()
}

// docTokens are the token streams of a document's scored fields, nil for
// an empty field.
type docTokens [nFields]analysis.TokenStream

// lengths counts the tokens of each field, as bleve counts a field's
// length.
func (t *docTokens) lengths() [nFields]uint32 {
	var l [nFields]uint32
	for f, ts := range t {
		l[f] = uint32(len(ts))
	}
	return l
}

// parallelTexts is the number of texts from which inParallel works on
// several goroutines.
const parallelTexts = 16

// distinctTexts returns the distinct non-empty scored fields of docs, in
// their first order, and the index of each in texts.
func distinctTexts(docs []engineDoc) (texts []string, at map[string]int) {
	at = map[string]int{}
	for i := range docs {
		for _, text := range docFields(&docs[i]) {
			if _, ok := at[text]; !ok && text != "" {
				at[text] = len(texts)
				texts = append(texts, text)
			}
		}
	}
	return texts, at
}

// inParallel runs work over n texts on up to analysisWorkers goroutines
// (one below parallelTexts texts): each call takes the texts first,
// first+step, ... It returns when every call has.
func inParallel(n int, work func(first, step int)) {
	workers := min(analysisWorkers, runtime.GOMAXPROCS(0), n)
	if n < parallelTexts {
		workers = min(workers, 1)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w, workers)
		}()
	}
	wg.Wait()
}

// analyseDocs analyses the scored fields of docs, each distinct text once
// (a record's context is, by default, the text of the record before it,
// and most roles are one of two words), on up to analysisWorkers
// goroutines that return before it does. The streams are shared between
// the fields with the same text and are not to be changed.
func (an *analyzers) analyseDocs(docs []engineDoc) []docTokens {
	toks, _ := an.analyse(docs, false)
	return toks
}

// analyseForIndex is analyseDocs with, for each field, the terms and
// frequencies bleve's text field makes of its tokens, made once per
// distinct text on the same goroutines and shared by the fields with
// that text (newDocument's prepared fields).
func (an *analyzers) analyseForIndex(docs []engineDoc) ([]docTokens, []docFreqs) {
	return an.analyse(docs, true)
}

func (an *analyzers) analyse(docs []engineDoc, withFreqs bool) ([]docTokens, []docFreqs) {
	texts, at := distinctTexts(docs)
	streams := make([]analysis.TokenStream, len(texts))
	var freqs []fieldFreqs
	if withFreqs {
		freqs = make([]fieldFreqs, len(texts))
	}
	inParallel(len(texts), func(first, step int) {
		for i := first; i < len(texts); i += step {
			streams[i] = an.text.Analyze([]byte(texts[i]))
			if withFreqs {
				freqs[i] = newFieldFreqs(streams[i], optScored)
			}
		}
	})
	out := make([]docTokens, len(docs))
	var fq []docFreqs
	if withFreqs {
		fq = make([]docFreqs, len(docs))
	}
	for i := range docs {
		for f, text := range docFields(&docs[i]) {
			if text != "" {
				out[i][f] = streams[at[text]]
				if withFreqs {
					fq[i][f] = &freqs[at[text]]
				}
			}
		}
	}
	return out, fq
}

// indexFreqs is analyseForIndex's docFreqs of docs (whose lengths are
// the fields' lengths), each distinct text analysed once on the same
// goroutines, by the pool's analyzer: the texts its counter reproduces
// are counted from their words and cached stems without a token stream,
// and the others analysed with the stems cached. Stems are a function of
// the word, so the terms are the uncached analyzer's.
func (x *Index) indexFreqs(docs []engineDoc) []docFreqs {
	texts, at := distinctTexts(docs)
	freqs := make([]fieldFreqs, len(texts))
	inParallel(len(texts), func(first, step int) {
		var scratch []byte
		for i := first; i < len(texts); i += step {
			ok := false
			if x.counter != nil {
				freqs[i], ok, scratch = x.counter.freqs(texts[i], optScored, scratch)
			}
			if !ok {
				freqs[i] = newFieldFreqs(x.pool.text.Analyze([]byte(texts[i])), optScored)
			}
		}
	})
	fq := make([]docFreqs, len(docs))
	for i := range docs {
		for f, text := range docFields(&docs[i]) {
			if text != "" {
				fq[i][f] = &freqs[at[text]]
			}
		}
	}
	return fq
}

// lengths are the fields' lengths of a document's analysis.
func (fq *docFreqs) lengths() [nFields]uint32 {
	var l [nFields]uint32
	for f, ff := range fq {
		if ff != nil {
			l[f] = uint32(ff.length)
		}
	}
	return l
}

// fieldFreqs is a field's analysis as bleve's fields hold it: the number
// of its tokens and each distinct term with its frequency.
type fieldFreqs struct {
	length int
	freqs  index.TokenFrequencies
	size   int // freqs.Size(), counted once
}

// docFreqs are the analysis of a document's scored fields, nil for an
// empty field.
type docFreqs [nFields]*fieldFreqs

// newFieldFreqs counts the terms of ts as bleve's analysis.TokenFrequency
// does for a field indexed with opts and without term vectors (each term
// once, its frequency counted unless opts skip it), with the term entries
// in one array and the terms' bytes, which the map's keys and the
// entries' terms share, in another.
func newFieldFreqs(ts analysis.TokenStream, opts index.FieldIndexingOptions) fieldFreqs {
	return countFreqs(ts, func(t *analysis.Token) string { return unsafe.String(unsafe.SliceData(t.Term), len(t.Term)) }, opts)
}

// countFreqs is newFieldFreqs of the tokens ts, whose terms term gives,
// in their order. It keeps no reference to the terms' bytes.
func countFreqs[T any](ts []T, term func(T) string, opts index.FieldIndexingOptions) fieldFreqs {
	n := 0
	for _, t := range ts {
		n += len(term(t))
	}
	rv := make(index.TokenFrequencies, len(ts))
	// Neither array grows past its capacity, so the entries and the bytes
	// the keys view stay where they are; the bytes are never changed.
	slab := make([]index.TokenFreq, 0, len(ts))
	terms := make([]byte, 0, n)
	size := sizeOfMap
	for _, tok := range ts {
		t := term(tok)
		tf, ok := rv[t]
		if !ok {
			start := len(terms)
			terms = append(terms, t...)
			kept := terms[start:len(terms):len(terms)]
			slab = append(slab, index.TokenFreq{Term: kept})
			tf = &slab[len(slab)-1]
			rv[unsafe.String(unsafe.SliceData(kept), len(kept))] = tf
			size += sizeOfString + sizeOfPtr + 2*len(kept) + sizeOfTokenFreq
		}
		if !opts.SkipFreqNorm() {
			tf.SetFrequency(tf.Frequency() + 1)
		}
	}
	return fieldFreqs{length: len(ts), freqs: rv, size: size}
}

// The sizes bleve's TokenFrequencies.Size counts.
var (
	sizeOfMap       = int(unsafe.Sizeof(map[int]int(nil)))
	sizeOfPtr       = int(unsafe.Sizeof(uintptr(0)))
	sizeOfString    = int(unsafe.Sizeof(""))
	sizeOfTokenFreq = (&index.TokenFreq{}).Size()
)

type engineDoc = engine.TextDoc

// docFields are d's scored fields in the order of the per-field arrays.
func docFields(d *engineDoc) [nFields]string {
	return [nFields]string{fText: d.Text, fContext: d.Context, fRole: d.Role}
}
