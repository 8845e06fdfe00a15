// Package client is an api.Service over the hmo daemon (hmo serve). It
// finds the daemon through serve.json in the store directory and talks to
// it over its Unix socket (or 127.0.0.1 when there is no socket). When no
// daemon answers it can start one (Options.Start) and wait for it, and
// when none can run it falls back to opening the store directly for the
// length of each call (Options.OpenLocal), so the store is never held
// between calls and a daemon can take it over at any time.
package client
