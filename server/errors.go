package server

import "errors"

// Sentinel errors.
var (
	ErrNotLoopback = errors.New("server: address is not loopback")
	ErrStarted     = errors.New("server: already started")
)
