package offheap_test

import (
	"errors"
	"testing"

	"github.com/hmo-dev/hmo/internal/offheap"
)

func TestMapUnmap(t *testing.T) {
	b, err := offheap.Map(3 << 20)
	if errors.Is(err, offheap.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 3<<20 {
		t.Fatalf("len %d, want %d", len(b), 3<<20)
	}
	for i := range b {
		if b[i] != 0 {
			t.Fatalf("byte %d is %d, want zeroed memory", i, b[i])
		}
		b[i] = byte(i)
	}
	if b[len(b)-1] != byte(len(b)-1) {
		t.Fatal("written byte not read back")
	}
	if err := offheap.Unmap(b); err != nil {
		t.Fatal(err)
	}
}
