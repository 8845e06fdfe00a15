package fts

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestMemLayout pins what the collector and the caches see of a Memory's
// per-posting structures: a document's refs hold no pointer (the
// collector skips their arrays: a tier index holds one per distinct term
// of each document), and a posting stays 24 bytes with its document's
// slot in what was padding.
func TestMemLayout(t *testing.T) {
	if p := pointerFields(reflect.TypeFor[memRef]()); len(p) > 0 {
		t.Errorf("memRef holds pointers in %v", p)
	}
	if n := unsafe.Sizeof(memPost{}); n != 24 {
		t.Errorf("memPost is %d bytes, want 24", n)
	}
}

// pointerFields names the fields of struct type typ that hold pointers.
func pointerFields(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		switch f := typ.Field(i); f.Type.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
		default:
			out = append(out, f.Name)
		}
	}
	return out
}
