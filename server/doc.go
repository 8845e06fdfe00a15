// Package server is hmo's local HTTP JSON API: the operations of
// api.Service over HTTP, on a Unix socket in the store directory and on a
// loopback TCP port, behind a bearer token. It never binds a non-loopback
// address. The daemon (hmo serve) runs one Server over the store it owns
// and shuts down after an idle period; package client is its client.
//
// Files in the store directory, all 0600:
//
//	token       the bearer token, generated at first start
//	hmo.sock    the Unix socket
//	serve.json  the running daemon: pid, TCP address, socket path
//
// With Options.UI, the memory browser (package ui) is mounted under /ui/
// and POST /v1/ui/login issues its one-time login links.
//
// The OpenAPI 3 description is served at /openapi.json (no token needed)
// and kept in this package as openapi.json.
package server
