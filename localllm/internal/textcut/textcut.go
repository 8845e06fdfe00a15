// Package textcut holds the word-boundary helpers shared by the heuristic
// summariser (package heuristic) and the Ollama steps (package ollama):
// what a word rune is, what an apostrophe is, and how to cut a text at a
// word boundary with an ellipsis. It is internal to localllm.
package textcut

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks a sentence or line cut short.
const Ellipsis = "…"

// CutWords returns the longest prefix of s made of whole words that fits
// in maxRunes runes with "…" appended, or "" when not even the first word
// fits. A word ends before white space, or after a letter or digit that is
// followed by punctuation other than an apostrophe or hyphen and not by
// another letter or digit ("3.5" and "don't" are one word).
func CutWords(s string, maxRunes int) string {
	if utf8.RuneCountInString(s) <= maxRunes {
		return s
	}
	budget := maxRunes - utf8.RuneCountInString(Ellipsis)
	end, n := -1, 0 // end: byte offset of the last word end that fits
	prev := ' '
	for i, r := range s {
		if n > budget {
			break
		}
		if next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):]); isWordEnd(prev, r, next) {
			end = i
		}
		prev = r
		n++
	}
	if end <= 0 {
		return ""
	}
	return strings.TrimRightFunc(s[:end], isCutPunct) + Ellipsis
}

// isWordEnd reports whether a word ends between the runes prev and r;
// next follows r. Punctuation between two word runes ("3.5", "10:30",
// "e.g.") is inside a word.
func isWordEnd(prev, r, next rune) bool {
	if unicode.IsSpace(r) {
		return !unicode.IsSpace(prev)
	}
	return IsWordRune(prev) && !IsWordRune(r) && !IsApostrophe(r) && r != '-' && !IsWordRune(next)
}

// isCutPunct reports whether r may be dropped before an ellipsis.
func isCutPunct(r rune) bool {
	return unicode.IsSpace(r) || r == ',' || r == ';' || r == ':' || r == '-' || r == '—'
}

// IsWordRune reports whether r is part of a word: a letter or a digit.
func IsWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// IsApostrophe reports whether r is written as an apostrophe.
func IsApostrophe(r rune) bool {
	return r == '\'' || r == '\u2019' || r == '\u2018' || r == '\u02bc'
}
