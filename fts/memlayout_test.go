package fts

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestMemLayout pins what the collector and the caches see of a Memory's
// per-posting structures: a tier index holds a posting and a ref per
// distinct term of each document, and neither holds a pointer, so the
// collector skips their arrays; a posting is 16 bytes.
func TestMemLayout(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[memRef](), reflect.TypeFor[memPost]()} {
		if p := pointerFields(typ); len(p) > 0 {
			t.Errorf("%v holds pointers in %v", typ, p)
		}
	}
	if n := unsafe.Sizeof(memPost{}); n != 16 {
		t.Errorf("memPost is %d bytes, want 16", n)
	}
}

// pointerFields names the fields of struct type typ that hold pointers.
func pointerFields(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		if f := typ.Field(i); holdsPointers(f.Type) {
			out = append(out, f.Name)
		}
	}
	return out
}

func holdsPointers(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return false
	case reflect.Array:
		return holdsPointers(typ.Elem())
	case reflect.Struct:
		return len(pointerFields(typ)) > 0
	}
	return true
}
