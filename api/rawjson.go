package api

import (
	"fmt"
	"unicode/utf8"
)

// CheckRawJSON refuses JSON text whose strings would not decode to valid
// UTF-8: invalid UTF-8 bytes, and \u escapes of lone surrogates (a high
// surrogate not followed by a low one, or a low one alone). Go's
// encoding/json silently replaces both with U+FFFD, so they must be
// caught in the raw bytes, before decoding: every interface (CLI, HTTP,
// MCP) then refuses the same input with the same error. The error wraps
// ErrInvalid and names the byte offset.
func CheckRawJSON(b []byte) error {
	if !utf8.Valid(b) {
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				return fmt.Errorf("%w: text is not valid UTF-8 (byte %d)", ErrInvalid, i)
			}
			i += n
		}
	}
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(b) {
				return nil // truncated: the decoder reports it
			}
			if b[i+1] != 'u' {
				i++ // skip the escaped character
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				return nil // malformed escape: the decoder reports it
			}
			switch {
			case r >= 0xD800 && r <= 0xDBFF:
				lo, ok := -1, false
				if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					lo, ok = hex4(b, i+8)
				}
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return fmt.Errorf("%w: text is not valid UTF-8 (lone surrogate \\u%04x at byte %d)", ErrInvalid, r, i)
				}
				i += 11
			case r >= 0xDC00 && r <= 0xDFFF:
				return fmt.Errorf("%w: text is not valid UTF-8 (lone surrogate \\u%04x at byte %d)", ErrInvalid, r, i)
			default:
				i += 5
			}
		}
	}
	return nil
}

// hex4 parses the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (int, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[i : i+4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= int(c - '0')
		case c >= 'a' && c <= 'f':
			v |= int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v |= int(c-'A') + 10
		default:
			return 0, false
		}
	}
	return v, true
}
