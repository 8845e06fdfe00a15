package api

import "unicode/utf8"

// minTextBytes is the least text kept when a memory is shortened.
const minTextBytes = 64

// ellipsis marks a shortened text.
const ellipsis = "…"

// minMemoryTokens is the estimate of a memory shortened to minTextBytes
// with empty labels.
const minMemoryTokens = (minTextBytes + len(ellipsis) + MemoryOverheadBytes + BytesPerToken - 1) / BytesPerToken

// budget fills a response within an estimated token budget.
type budget struct {
	left      int // tokens left
	truncated bool
}

// fit admits m whole if it fits. Otherwise, when force is set (the first
// memory of a page, or any memory of a Get), it shortens m's text to what
// is left (at least minTextBytes) and admits it; else it refuses m.
func (b *budget) fit(m *Memory, force bool) bool {
	need := memoryTokens(m)
	if need <= b.left {
		b.left -= need
		return true
	}
	if !force {
		return false
	}
	over := (need - max(b.left, 0)) * BytesPerToken
	keep := max(len(m.Text)-over-len(ellipsis), minTextBytes)
	if keep < len(m.Text) {
		m.Text = shorten(m.Text, keep)
		b.truncated = true
	}
	b.left -= memoryTokens(m)
	return true
}

// shorten cuts s to at most n bytes at a rune boundary and marks the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ellipsis
}
