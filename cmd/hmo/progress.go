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
	on := false
	if f, ok := env.stderr.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progress{w: env.stderr, label: label, on: on, start: time.Now()}
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
