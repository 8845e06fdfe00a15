//go:build unix

package main

import "syscall"

// exited reports whether the child process pid has exited, reaping it.
func exited(pid int) bool {
	var ws syscall.WaitStatus
	got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	return got == pid || err == syscall.ECHILD
}
