package claudecode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ScanOptions configure a Scanner. The zero value is the hook's view: it
// skips malformed lines and leaves a last line without newline unread,
// since Claude Code may still be writing it.
type ScanOptions struct {
	// Offset is the byte position in the transcript where the reader
	// starts; Turn.Offset and Scanner.Offset count from it. Default 0.
	Offset int64
	// Strict makes a malformed line an error instead of a skipped line.
	// Default false.
	Strict bool
	// Final treats the end of input as the end of the last line, so a last
	// line without newline is read. Default false.
	Final bool
}

// Scanner reads the prose turns of a transcript line by line, tracking
// the byte offset just past the last complete line it read, so a later
// scan can resume there. A Scanner is not safe for concurrent use.
type Scanner struct {
	br      *bufio.Reader
	opts    ScanOptions
	off     int64 // byte offset just past the last line consumed
	line    int   // lines consumed
	skipped int   // malformed or oversize lines skipped
	turn    Turn
	err     error
	done    bool
}

// NewScanner returns a Scanner reading r. Nil opts means the zero
// ScanOptions.
func NewScanner(r io.Reader, opts *ScanOptions) *Scanner {
	s := &Scanner{br: bufio.NewReaderSize(r, 64<<10)}
	if opts != nil {
		s.opts = *opts
	}
	s.off = s.opts.Offset
	return s
}

// Scan advances to the next turn. It returns false at the end of input or
// on an error (see Err).
func (s *Scanner) Scan() bool {
	for !s.done {
		start := s.off
		line, n, err := s.readLine()
		if err != nil {
			s.done = true
			if err != io.EOF {
				s.err = err
			}
			return false
		}
		s.off += n
		s.line++
		if line == nil { // oversize, skipped
			s.skipped++
			continue
		}
		t, ok, perr := ParseLine(line)
		if perr != nil {
			if s.opts.Strict {
				s.done = true
				s.err = fmt.Errorf("line %d: %w", s.line, perr)
				return false
			}
			s.skipped++
			continue
		}
		if ok {
			t.Offset = start
			s.turn = t
			return true
		}
	}
	return false
}

// Turn is the turn Scan found.
func (s *Scanner) Turn() Turn { return s.turn }

// Offset is the byte offset just past the last line consumed: where a
// later scan of the same transcript should start.
func (s *Scanner) Offset() int64 { return s.off }

// Skipped counts the malformed and oversize lines skipped so far.
func (s *Scanner) Skipped() int { return s.skipped }

// Err is the first error other than the end of input.
func (s *Scanner) Err() error { return s.err }

// readLine returns the next complete line and the bytes it took, newline
// included. A line longer than MaxLineBytes comes back nil with its length.
// A trailing line without newline is io.EOF unless opts.Final.
func (s *Scanner) readLine() ([]byte, int64, error) {
	var buf []byte
	var n int64
	over := false
	for {
		chunk, err := s.br.ReadSlice('\n')
		n += int64(len(chunk))
		if !over {
			if len(buf)+len(chunk) > MaxLineBytes+2 {
				over, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if n == 0 || !s.opts.Final {
				return nil, 0, io.EOF
			}
		case err != nil:
			return nil, 0, err
		}
		if over {
			return nil, n, nil
		}
		if buf == nil {
			buf = []byte{}
		}
		return bytes.TrimRight(buf, "\r\n"), n, nil
	}
}

// Read parses a whole transcript strictly: the first malformed line is an
// error naming its line number, and nothing is returned with it.
func Read(r io.Reader) ([]Turn, error) {
	s := NewScanner(r, &ScanOptions{Strict: true, Final: true})
	var out []Turn
	for s.Scan() {
		out = append(out, s.Turn())
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
