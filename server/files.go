package server

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Files in the store directory.
const (
	TokenFile  = "token"
	SocketFile = "hmo.sock"
	InfoFile   = "serve.json"
)

// tokenBytes is the entropy of a generated token.
const tokenBytes = 32

// Info describes a running daemon; it is written to InfoFile once the
// daemon listens, and removed when it stops.
type Info struct {
	PID     int       `json:"pid"`
	Dir     string    `json:"dir"`    // the store directory, absolute
	Addr    string    `json:"addr"`   // 127.0.0.1:port
	Port    int       `json:"port"`   // the TCP port of Addr
	Socket  string    `json:"socket"` // Unix socket path (absolute), empty when none
	Started time.Time `json:"started"`
}

// LoadOrCreateToken returns the bearer token kept in dir, generating it
// (0600, created exclusively so concurrent starters agree) when absent.
func LoadOrCreateToken(dir string) (string, error) {
	path := filepath.Join(dir, TokenFile)
	if tok, err := ReadToken(dir); err == nil {
		return tok, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("server: token dir: %w", err)
	}
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		// Another process made it first: wait for its write.
		for range 50 {
			if tok, err := ReadToken(dir); err == nil {
				return tok, nil
			}
			time.Sleep(10 * time.Millisecond)
		}
		return ReadToken(dir)
	}
	if err != nil {
		return "", fmt.Errorf("server: create token: %w", err)
	}
	_, err = f.WriteString(tok + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("server: write token: %w", err)
	}
	return tok, nil
}

// ReadToken reads the token kept in dir. A token file another user owns
// or may read or write is refused with ErrUntrusted.
func ReadToken(dir string) (string, error) {
	path := filepath.Join(dir, TokenFile)
	if err := checkFile(path); err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) != 2*tokenBytes {
		return "", fmt.Errorf("server: token file %s is malformed", filepath.Join(dir, TokenFile))
	}
	return tok, nil
}

// ReadInfo reads the running daemon's description from dir. The
// directory and the file must be trusted (see CheckDir), and a socket
// path must be absolute.
func ReadInfo(dir string) (Info, error) {
	var in Info
	if err := CheckDir(dir); err != nil {
		return in, err
	}
	path := filepath.Join(dir, InfoFile)
	if err := checkFile(path); err != nil {
		return in, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return in, err
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("server: %s: %w", InfoFile, err)
	}
	if in.Socket != "" && !filepath.IsAbs(in.Socket) {
		// Written by an older daemon started with a relative --dir.
		in.Socket = filepath.Join(dir, filepath.Base(in.Socket))
	}
	return in, nil
}

// writeInfo replaces InfoFile atomically.
func writeInfo(dir string, in *Info) error {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, InfoFile+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, InfoFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("server: write %s: %w", InfoFile, err)
	}
	return nil
}

// removeInfo removes InfoFile if it still describes pid.
func removeInfo(dir string, pid int) {
	if in, err := ReadInfo(dir); err == nil && in.PID == pid {
		os.Remove(filepath.Join(dir, InfoFile))
	}
}
