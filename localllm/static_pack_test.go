package localllm_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/hmo-dev/hmo/internal/wvpack"
)

// rawTableSHA256 is the SHA-256 of the uncompressed word table as it was
// committed before internal/wvpack (static/words.bin.zst, one zstd frame,
// 10,653,588 bytes): the repacked file must decode to the same bytes, so
// no vector and no embedder name changes.
const rawTableSHA256 = "5591962847bc53f6f81c4765eef18610a32934423a140d977c58221e92276439"

func TestEmbeddedTableIsTheOriginalByteForByte(t *testing.T) {
	packed, err := os.ReadFile("static/words.wvp")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := wvpack.Unpack(packed, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != rawTableSHA256 {
		t.Fatalf("decoded table SHA-256 %s (%d bytes), want %s", got, len(raw), rawTableSHA256)
	}
}
