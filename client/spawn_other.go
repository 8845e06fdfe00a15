//go:build !unix

package client

import "errors"

// Detach is not supported on this system: clients fall back to opening
// the store directly.
func Detach(exe string, args []string, logPath string) (int, error) {
	return 0, errors.New("client: no daemon on this system")
}
