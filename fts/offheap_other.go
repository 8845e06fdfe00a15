//go:build !unix

package fts

import "errors"

// mapAnon fails where there are no anonymous mappings: the cached
// postings then stay on the Go heap.
func mapAnon(int) ([]byte, error) { return nil, errors.New("fts: no anonymous mappings") }

func unmapAnon([]byte) error { return nil }
