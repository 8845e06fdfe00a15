package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress draws a one-line bar on a terminal and stays silent otherwise.
type progress struct {
	w     io.Writer
	label string
	on    bool
	start time.Time
	last  time.Time
}

func newProgress(env *env, label string) *progress {
	return &progress{w: env.stderr, label: label, on: isTerminal(env.stderr), start: time.Now()}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// update redraws the bar at most ten times a second, and always at the end.
func (p *progress) update(done, total int) {
	if !p.on || total <= 0 {
		return
	}
	now := time.Now()
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	n := width * done / total
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '.'
		if i < n {
			bar[i] = '#'
		}
	}
	fmt.Fprintf(p.w, "\r%s [%s] %d/%d %s", p.label, bar, done, total, now.Sub(p.start).Round(time.Second))
	if done >= total {
		fmt.Fprintln(p.w)
	}
}
