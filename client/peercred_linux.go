package client

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// checkPeer refuses a Unix socket whose server runs as another user
// (SO_PEERCRED): a socket someone else planted.
func checkPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("%w: peer credentials: %v", ErrImpostor, cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("%w: the socket's server runs as uid %d, not as you (uid %d)", ErrImpostor, cred.Uid, os.Getuid())
	}
	return nil
}
