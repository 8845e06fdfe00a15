package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The generated files are committed; this fails when one is stale, that
// is when a type or limit of package api changed without go generate.
func TestGeneratedFilesAreFresh(t *testing.T) {
	root := filepath.Join("..", "..")
	ts, err := TypeScript()
	if err != nil {
		t.Fatal(err)
	}
	tsPath := filepath.Join(root, "integrations", "openclaw", "src", "schema.gen.ts")
	if old, err := os.ReadFile(tsPath); err != nil || !bytes.Equal(old, ts) {
		t.Errorf("%s is stale (err %v); run go generate ./schema/", tsPath, err)
	}
	oaPath := filepath.Join(root, "server", "openapi.json")
	old, err := os.ReadFile(oaPath)
	if err != nil {
		t.Fatal(err)
	}
	oa, err := OpenAPI(old)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, oa) {
		t.Errorf("%s is stale; run go generate ./schema/", oaPath)
	}
}

// A drifted request schema is rewritten, and the rest of the document
// (its key order, the descriptions of properties) is kept.
func TestOpenAPIRewritesRequestSchemas(t *testing.T) {
	in := []byte(`{"openapi": "3.0.3", "paths": {"/b": {}, "/a": {}}, "components": {"schemas": {
		"GetRequest": {"type": "object", "properties": {"ids": {"type": "array", "maxItems": 100, "description": "memory ids"}}},
		"NewMemory": {"properties": {"text": {"description": "what to remember"}}},
		"Other": {"type": "string", "description": "<kept>"}}}}`)
	out, err := OpenAPI(in)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{`"maxItems": 50`, `"description": "memory ids"`, `"description": "what to remember"`, `"description": "<kept>"`, `"$ref": "#/components/schemas/NewMemory"`, `"SearchRequest"`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %s:\n%s", want, s)
		}
	}
	if bytes.Contains(out, []byte(`"maxItems": 100,`)) && bytes.Contains(out, []byte(`"memory ids"`)) && !bytes.Contains(out, []byte(`"maxItems": 50`)) {
		t.Errorf("drifted maxItems kept")
	}
	if i, j := bytes.Index(out, []byte(`"/b"`)), bytes.Index(out, []byte(`"/a"`)); i < 0 || j < i {
		t.Errorf("key order lost:\n%s", s)
	}
	again, err := OpenAPI(out)
	if err != nil || !bytes.Equal(again, out) {
		t.Errorf("not idempotent: %v", err)
	}
	if _, err := OpenAPI([]byte(`{"components": {}}`)); err == nil {
		t.Error("a document without components.schemas was accepted")
	}
}
