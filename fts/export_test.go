package fts

// SetStoredIDsPreadMin sets the segment length from which stored ids are
// read by pread (storedid.go) until the returned func restores it.
func SetStoredIDsPreadMin(n int) (restore func()) {
	was := storedIDsPreadMin
	storedIDsPreadMin = n
	return func() { storedIDsPreadMin = was }
}

// StoredIDAt is storedIDAt.
var StoredIDAt = storedIDAt
