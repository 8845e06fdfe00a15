package fts

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// verify checks the CRC-32 that ends every segment file of the loaded
// snapshot. Scorch reads only the footer of a segment when it opens it, so
// damage elsewhere would surface later as search errors or panics; this
// surfaces it at Open as ErrCorrupt instead.
func (x *Index) verify() error {
	r, err := x.s.Reader()
	if err != nil {
		return fmt.Errorf("fts: verify %s: %w", x.dir, err)
	}
	defer r.Close() // holds the segment files while they are read
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return fmt.Errorf("fts: verify %s: %w (reader %T)", x.dir, ErrCorrupt, r)
	}
	for _, s := range snap.Segments() {
		p, ok := s.Segment().(interface{ Path() string })
		if !ok {
			continue // in memory, not yet persisted
		}
		if err := verifyFile(p.Path()); err != nil {
			return fmt.Errorf("fts: verify %s: %w (%w)", x.dir, ErrCorrupt, err)
		}
	}
	return nil
}

// verifyFile checks that the last 4 bytes of the file at path are the
// big-endian CRC-32 (IEEE) of the bytes before them.
func verifyFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	n := fi.Size() - 4
	if n < 0 {
		return fmt.Errorf("%s: %d bytes", path, fi.Size())
	}
	h := crc32.NewIEEE()
	if _, err := io.CopyN(h, f, n); err != nil {
		return err
	}
	var tail [4]byte
	if _, err := io.ReadFull(f, tail[:]); err != nil {
		return err
	}
	if want := binary.BigEndian.Uint32(tail[:]); h.Sum32() != want {
		return fmt.Errorf("%s: checksum %08x, footer says %08x", path, h.Sum32(), want)
	}
	return nil
}
