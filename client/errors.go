package client

import "errors"

// Sentinel errors.
var (
	ErrNoDaemon = errors.New("client: no hmo daemon answers")
	// ErrImpostor means the process answering at the daemon's address
	// could not prove it is the store's daemon (it does not hold the
	// token, or runs as another user): nothing is sent to it.
	ErrImpostor = errors.New("client: the process at the daemon's address is not this store's daemon")
)
