//go:build !unix

package engine

import "errors"

// mapAnon fails where there are no anonymous mappings: the memory is
// then the Go heap's.
func mapAnon(int) ([]byte, error) { return nil, errors.New("hmo: no anonymous mappings") }

func unmapAnon([]byte) error { return nil }
