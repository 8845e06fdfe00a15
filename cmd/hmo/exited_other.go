//go:build !unix

package main

// exited reports whether the child process pid has exited; where that
// cannot be told, the caller waits for its deadline.
func exited(pid int) bool { return false }
