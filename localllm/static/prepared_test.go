package static_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/localllm/static"
)

var _ engine.TextPreparer = (*static.Static)(nil)

// preparedPieces are texts whose concatenations the prepared texts must
// embed and observe as the joined text: words, unknown words, separators,
// and pieces a token crosses when joined (hyphens, apostrophes, letters
// on both sides, combining marks, non-ASCII letters).
var preparedPieces = []string{
	"user: ", "assistant: ", "Caroline: ", "\n", " ", ": ", "",
	"I went hiking in the mountains", "well", "-known", "well-", "known", "don", "'t", "don'", "t",
	"we", "'re", "café", "cafe", "\u0301", "naïve résumé", "zorblax quuxifier", "rock'n'roll",
	"o'clock", "e-mail", "2024", "v1.2", "Paris", "ﬁne", "’s", "Ünïcödé", "。", "the", "a",
}

// TestEmbedPreparedIsEmbed: a text prepared in parts embeds bit for bit
// as Embed embeds the parts concatenated, and observing the prepared
// texts leaves the statistics Observe leaves, with either handling of
// unknown words.
func TestEmbedPreparedIsEmbed(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, unknown := range []static.Unknown{static.UnknownHash, static.UnknownSkip} {
		a := newStatic(t, &static.Options{Unknown: unknown})
		b := newStatic(t, &static.Options{Unknown: unknown})
		for round := range 20 {
			var joined []string
			var prepared [][]engine.PreparedText
			for range 30 {
				var sb strings.Builder
				var parts []engine.PreparedText
				for range 1 + r.IntN(6) {
					p := preparedPieces[r.IntN(len(preparedPieces))]
					sb.WriteString(p)
					parts = append(parts, b.PrepareText(p))
				}
				joined = append(joined, sb.String())
				prepared = append(prepared, parts)
			}
			want, err := a.Embed(context.Background(), joined)
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.EmbedPrepared(context.Background(), prepared)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if !equalVec(got[i], want[i]) {
					t.Fatalf("unknown=%d round %d: %q prepared in parts embeds differently", unknown, round, joined[i])
				}
			}
			// Observing changes the weights of the next round.
			a.Observe(joined[:10])
			var obs []engine.PreparedText
			for _, j := range joined[:10] {
				obs = append(obs, b.PrepareText(j))
			}
			b.ObservePrepared(obs)
			if !bytes.Equal(mustMarshal(t, a), mustMarshal(t, b)) {
				t.Fatalf("unknown=%d round %d: ObservePrepared left other statistics than Observe", unknown, round)
			}
		}
	}
}

// TestEmbedPreparedRefusesForeignTexts: a text another embedder prepared
// is an error, not a wrong vector.
func TestEmbedPreparedRefusesForeignTexts(t *testing.T) {
	a, b := newStatic(t, nil), newStatic(t, nil)
	if _, err := a.EmbedPrepared(context.Background(), [][]engine.PreparedText{{b.PrepareText("hello")}}); err == nil {
		t.Fatal("EmbedPrepared took a text another embedder prepared")
	}
	if _, err := a.EmbedPrepared(context.Background(), [][]engine.PreparedText{{"hello"}}); err == nil {
		t.Fatal("EmbedPrepared took a string")
	}
}
