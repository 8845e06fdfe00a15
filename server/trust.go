package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hmo-dev/hmo/engine"
)

// ErrUntrusted means a store directory or one of the daemon's files may
// have been written by another user, so it is not used.
var ErrUntrusted = engine.ErrUntrusted

// CheckDir refuses a store directory that another user owns or that
// group or others may write (engine.CheckDir).
func CheckDir(dir string) error { return engine.CheckDir(dir) }

// checkFile refuses a daemon file (token, serve.json) that another user
// owns, that is not a regular file, or that group or others may read or
// write.
func checkFile(path string) error { return engine.CheckPrivateFile(path) }

// Identity proof: the client sends a random nonce with the health
// check; the daemon answers with an HMAC of it under the token, bound
// to the address the client dialled. Only a holder of the token can
// answer, and the client sends neither the token nor a query to a
// daemon that did not.
const (
	// ChallengeHeader carries the client's nonce (hex) on /v1/health.
	ChallengeHeader = "X-Hmo-Challenge"
	// ProofHeader carries the daemon's answer (hex).
	ProofHeader = "X-Hmo-Proof"
)

// Proof is the answer to nonce for a daemon reached at addr (the TCP
// address, or "unix" for the socket) holding token.
func Proof(token, nonce, addr string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("hmo-daemon-proof/1\x00" + addr + "\x00" + nonce))
	return hex.EncodeToString(m.Sum(nil))
}

// VerifyProof reports whether proof answers nonce for addr under token.
func VerifyProof(token, nonce, addr, proof string) bool {
	want, _ := hex.DecodeString(Proof(token, nonce, addr))
	got, err := hex.DecodeString(proof)
	return err == nil && hmac.Equal(want, got)
}

// socketPath is where the daemon of dir listens: hmo.sock in dir, or,
// when that path is too long for a Unix socket, a socket named after
// dir in a private directory ($XDG_RUNTIME_DIR, else hmo-<uid> in the
// temporary directory, created 0700 and checked). Empty when neither
// fits.
func socketPath(dir string) (string, error) {
	p := filepath.Join(dir, SocketFile)
	if len(p) <= maxSocketPath {
		return p, nil
	}
	sum := sha256.Sum256([]byte(dir))
	name := "hmo-" + hex.EncodeToString(sum[:8]) + ".sock"
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base == "" || !filepath.IsAbs(base) || CheckDir(base) != nil {
		base = filepath.Join(os.TempDir(), fmt.Sprintf("hmo-%d", os.Getuid()))
		if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("server: socket dir: %w", err)
		}
		if err := CheckDir(base); err != nil {
			return "", err
		}
	}
	p = filepath.Join(base, name)
	if len(p) > maxSocketPath {
		return "", nil
	}
	return p, nil
}
