// Package pair runs a loop's work on the calling goroutine and one more
// goroutine, for work that a query would otherwise do on one core while
// the other is idle.
package pair

// Run runs work on the calling goroutine and on one more, and returns
// once both calls have returned. The two calls are meant to take their
// items from a counter they share (sync/atomic), each the next one that
// neither has taken: the second takes a share only when it runs, on a
// core the caller leaves idle, and when none is free it starts once the
// caller waits for it and finds nothing left. work must be safe to call
// from two goroutines at once.
func Run(work func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		work()
	}()
	work()
	<-done
}
