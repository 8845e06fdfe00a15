package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// HTTP helpers shared by the daemon's API (package server) and the memory
// browser's (package ui).

// HTTPStatus is the HTTP status that carries an error of the given code.
func HTTPStatus(code string) int {
	switch code {
	case CodeInvalid:
		return http.StatusBadRequest
	case CodeNotFound:
		return http.StatusNotFound
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeConflict:
		return http.StatusConflict
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// DecodeJSON reads one JSON request object from r's body into v. It
// refuses a Content-Type other than JSON (none is accepted), unknown
// fields, trailing data, bodies over limit bytes, and text that is not
// valid UTF-8 (CheckRawJSON), with ErrInvalid or ErrTooLarge.
func DecodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("%w: content type %q, want application/json", ErrInvalid, ct)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Errorf("%w: body over %d bytes", ErrTooLarge, limit)
	}
	if err != nil {
		return fmt.Errorf("%w: reading the body: %v", ErrInvalid, err)
	}
	// encoding/json would turn invalid UTF-8 and lone surrogates into
	// U+FFFD: refuse them as the CLI does.
	if err := CheckRawJSON(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil && dec.Decode(new(json.RawMessage)) != io.EOF {
		err = errors.New("data after the JSON object")
	}
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mbe):
		return fmt.Errorf("%w: body over %d bytes", ErrTooLarge, limit)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: empty body", ErrInvalid)
	}
	return fmt.Errorf("%w: %v", ErrInvalid, err)
}
