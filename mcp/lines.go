package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hmo-dev/hmo/api"
)

// DefaultMaxLineBytes caps one JSON-RPC line on stdio: far above the
// largest request (a memory_add of 64 KiB of text, escaped).
const DefaultMaxLineBytes = 4 << 20

// maxDepth is the deepest JSON nesting a message may have.
const maxDepth = 64

// JSON-RPC error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// StdioTransport is newline-delimited JSON-RPC over a reader and a
// writer (stdin and stdout), like the SDK's StdioTransport, with the
// lines checked first: a malformed line (not JSON, invalid UTF-8 or a
// lone surrogate escape, a batch, a wrong version, an id that is not a
// string or an integer, nesting deeper than 64, a line over
// MaxLineBytes) is answered with a JSON-RPC error (-32700 or -32600) and
// the session goes on. The SDK's own transport ends the session on such
// a line.
type StdioTransport struct {
	In  io.Reader
	Out io.Writer
	// MaxLineBytes caps one line. Default DefaultMaxLineBytes.
	MaxLineBytes int
}

// Connect implements sdk.Transport. A goroutine owned by the connection
// reads In until it ends.
func (t *StdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	max := t.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	out := &lockedWriter{w: t.Out}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(filterLines(t.In, pw, out, max))
	}()
	return (&sdk.IOTransport{Reader: pr, Writer: out, MaxLineLength: max + 1}).Connect(ctx)
}

// lockedWriter serialises the SDK's writes and the filter's error
// replies, one whole line each.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// filterLines copies the valid lines of in to good and answers the
// others on reply. It returns nil at the end of in.
func filterLines(in io.Reader, good io.Writer, reply io.Writer, max int) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, over, err := readLine(br, max)
		if len(line) > 0 || over {
			var resp []byte
			if over {
				resp = errorLine(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: line over %d bytes", max))
			} else {
				resp = checkLine(line)
			}
			if resp != nil {
				if _, werr := reply.Write(resp); werr != nil {
					return werr
				}
			} else if _, werr := good.Write(append(line, '\n')); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its newline; a line over max comes
// back nil with over set, and is consumed entirely.
func readLine(br *bufio.Reader, max int) (line []byte, over bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(line)+len(chunk) > max+1 {
				over, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(line), over, err
	}
}

// integerID is the form of a numeric id the session accepts.
var integerID = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,17})$`)

// checkLine returns the error reply for a malformed message, or nil.
func checkLine(line []byte) []byte {
	if err := api.CheckRawJSON(line); err != nil {
		return errorLine(nil, codeParseError, "Parse error: "+err.Error())
	}
	if !json.Valid(line) {
		return errorLine(nil, codeParseError, "Parse error: not valid JSON")
	}
	if depth(line) > maxDepth {
		return errorLine(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: nested deeper than %d", maxDepth))
	}
	if line[0] != '{' {
		if line[0] == '[' {
			return errorLine(nil, codeInvalidRequest, "Invalid Request: batches are not supported")
		}
		return errorLine(nil, codeInvalidRequest, "Invalid Request: not a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return errorLine(nil, codeInvalidRequest, "Invalid Request: "+err.Error())
	}
	var id json.RawMessage
	if raw, ok := m["id"]; ok {
		var s string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			id = raw
		case integerID.Match(raw):
			id = raw
		default:
			return errorLine(nil, codeInvalidRequest, "Invalid Request: id must be a string or an integer")
		}
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return errorLine(id, codeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	method, hasMethod := m["method"]
	if hasMethod {
		var s string
		if json.Unmarshal(method, &s) != nil || s == "" {
			return errorLine(id, codeInvalidRequest, "Invalid Request: method must be a non-empty string")
		}
		if p, ok := m["params"]; ok && len(p) > 0 && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return errorLine(id, codeInvalidRequest, "Invalid Request: params must be an object or an array")
		}
		return nil
	}
	// A response to a request of the server's.
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if id == nil || hasResult == hasError {
		return errorLine(id, codeInvalidRequest, "Invalid Request: neither a request nor a response")
	}
	if hasError {
		var e struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(m["error"], &e) != nil {
			return errorLine(id, codeInvalidRequest, "Invalid Request: malformed error object")
		}
	}
	return nil
}

// depth is the deepest nesting of arrays and objects in valid JSON.
func depth(b []byte) int {
	d, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// errorLine is a JSON-RPC error response, newline-terminated.
func errorLine(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}

// CheckBodies guards the streamable HTTP transport as StdioTransport
// guards stdio: a POST body over maxBytes, with invalid UTF-8 or a lone
// surrogate escape, or nested too deep, gets a JSON-RPC error (HTTP
// 400) instead of reaching the SDK, which would decode it with U+FFFD.
func CheckBodies(h http.Handler, maxBytes int) http.Handler {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxLineBytes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(maxBytes)))
		var resp []byte
		switch {
		case err != nil:
			resp = errorLine(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: body over %d bytes or unreadable", maxBytes))
		case api.CheckRawJSON(body) != nil:
			resp = errorLine(nil, codeParseError, "Parse error: "+api.CheckRawJSON(body).Error())
		case depth(body) > maxDepth:
			resp = errorLine(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: nested deeper than %d", maxDepth))
		}
		if resp != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(resp)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}
