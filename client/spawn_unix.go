//go:build unix

package client

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Detach starts exe with args as a daemon: in a session of its own, with
// no terminal, stdin from /dev/null and stdout and stderr appended to
// logPath (created 0600). It does not wait: the caller is expected to be
// a short-lived launcher (hmo serve --detach) that exits at once, so the
// daemon is adopted and reaped by init, never left as a zombie of a
// long-running client.
func Detach(exe string, args []string, logPath string) (pid int, err error) {
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("client: daemon log: %w", err)
	}
	defer log.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("client: start daemon: %w", err)
	}
	pid = cmd.Process.Pid
	return pid, cmd.Process.Release()
}
