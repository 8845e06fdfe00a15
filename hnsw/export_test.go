package hnsw

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
)

// Hooks into the loader for fuzz_test.go.

// SealMeta appends the checksum to the body of a meta file, so that a
// fuzzer's mutations reach the parser behind it.
func SealMeta(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, castagnoli))
}

// ReencodeMeta decodes a meta file saved with dims and encodes it again.
func ReencodeMeta(b []byte, dims int) ([]byte, error) {
	m, err := decodeMeta(b, dims)
	if err != nil {
		return nil, err
	}
	return m.encode(), nil
}

// LoadGraph checks and imports b as an exported graph of nslots slots of
// dims components, then searches it and adds a node to it, returning the
// first error. A recovered coder/hnsw panic shows as ErrInternal.
func LoadGraph(b []byte, dims, nslots int) error {
	o, err := (&Options{Dims: dims}).withDefaults()
	if err != nil {
		return err
	}
	g, err := decodeGraph(b, &o, nslots)
	if err != nil {
		return err
	}
	q := make([]float32, dims)
	q[0] = 1
	for _, k := range []int{1, 3, nslots + 1} {
		if _, err := graphSearch(g, q, k); err != nil {
			return err
		}
	}
	return graphAdd(g, &o, uint64(nslots), q)
}

// LoadGraphFile loads the graph file named by the meta file saved in dir.
func LoadGraphFile(dir string, dims int) error {
	o, err := (&Options{Dims: dims}).withDefaults()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, metaName))
	if err != nil {
		return err
	}
	m, err := decodeMeta(b, dims)
	if err != nil {
		return err
	}
	if m.graphSize == 0 {
		return errors.New("meta names no graph")
	}
	_, err = loadGraph(filepath.Join(dir, graphName(m.gen)), m, &o)
	return err
}
