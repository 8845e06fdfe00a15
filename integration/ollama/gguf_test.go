//go:build ollama

package ollama_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/ollama/ollama/fs/ggml"
)

// Shape of the tiny model: a 2-layer llama with 64-dimensional states. Its
// weights are random, so it writes gibberish: exactly what exercises the
// validation of the LLM steps and their fallbacks.
const (
	tinyEmbd    = 64
	tinyHeads   = 4
	tinyFF      = 128
	tinyLayers  = 2
	tinyContext = 2048
)

// tinyVocab is a SentencePiece vocabulary: the special tokens, the 256
// byte tokens (byte fallback makes every text encodable) and some pieces.
func tinyVocab() (tokens []string, scores []float32, types []int32) {
	add := func(tok string, score float32, typ int32) {
		tokens, scores, types = append(tokens, tok), append(scores, score), append(types, typ)
	}
	add("<unk>", 0, 2)
	add("<s>", 0, 3)
	add("</s>", 0, 3)
	for b := range 256 {
		add(fmt.Sprintf("<0x%02X>", b), 0, 6)
	}
	pieces := []string{"▁", "▁the", "▁a", "▁is", "▁I", "▁my", "▁score", "▁summary", "▁profile", "▁kind", "▁decision"}
	for c := 'a'; c <= 'z'; c++ {
		pieces = append(pieces, string(c), "▁"+string(c))
	}
	for c := '0'; c <= '9'; c++ {
		pieces = append(pieces, string(c))
	}
	pieces = append(pieces, "{", "}", "\"", ":", ",", "[", "]", ".", "▁\"", "\":", "\",")
	seen := map[string]bool{}
	for i, p := range pieces {
		if !seen[p] { // llama.cpp refuses a vocabulary with duplicates
			seen[p] = true
			add(p, -float32(i+1), 1)
		}
	}
	return tokens, scores, types
}

// writeTinyGGUF writes the tiny random-weight llama model to path.
func writeTinyGGUF(path string, seed uint64) error {
	tokens, scores, types := tinyVocab()
	vocab := uint64(len(tokens))
	kv := ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           "hmo-tiny",
		"general.file_type":                      uint32(0),
		"llama.context_length":                   uint32(tinyContext),
		"llama.embedding_length":                 uint32(tinyEmbd),
		"llama.block_count":                      uint32(tinyLayers),
		"llama.feed_forward_length":              uint32(tinyFF),
		"llama.attention.head_count":             uint32(tinyHeads),
		"llama.attention.head_count_kv":          uint32(tinyHeads),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.dimension_count":             uint32(tinyEmbd / tinyHeads),
		"llama.rope.freq_base":                   float32(10000),
		"llama.vocab_size":                       uint32(vocab),
		"tokenizer.ggml.model":                   "llama",
		"tokenizer.ggml.tokens":                  tokens,
		"tokenizer.ggml.scores":                  scores,
		"tokenizer.ggml.token_type":              types,
		"tokenizer.ggml.bos_token_id":            uint32(1),
		"tokenizer.ggml.eos_token_id":            uint32(2),
		"tokenizer.ggml.unknown_token_id":        uint32(0),
		"tokenizer.ggml.add_bos_token":           true,
		"tokenizer.ggml.add_eos_token":           false,
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var ts []*ggml.Tensor
	tensor := func(name string, ones bool, shape ...uint64) {
		n := uint64(1)
		for _, d := range shape {
			n *= d
		}
		buf := make([]byte, 4*n)
		for i := range n {
			v := float32(1)
			if !ones {
				v = float32(rng.NormFloat64() * 0.08)
			}
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		ts = append(ts, &ggml.Tensor{Name: name, Kind: 0, Shape: shape, WriterTo: bytes.NewReader(buf)})
	}
	tensor("token_embd.weight", false, tinyEmbd, vocab)
	for l := range tinyLayers {
		p := fmt.Sprintf("blk.%d.", l)
		tensor(p+"attn_norm.weight", true, tinyEmbd)
		tensor(p+"attn_q.weight", false, tinyEmbd, tinyEmbd)
		tensor(p+"attn_k.weight", false, tinyEmbd, tinyEmbd)
		tensor(p+"attn_v.weight", false, tinyEmbd, tinyEmbd)
		tensor(p+"attn_output.weight", false, tinyEmbd, tinyEmbd)
		tensor(p+"ffn_norm.weight", true, tinyEmbd)
		tensor(p+"ffn_gate.weight", false, tinyEmbd, tinyFF)
		tensor(p+"ffn_up.weight", false, tinyEmbd, tinyFF)
		tensor(p+"ffn_down.weight", false, tinyFF, tinyEmbd)
	}
	tensor("output_norm.weight", true, tinyEmbd)
	tensor("output.weight", false, tinyEmbd, vocab)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := ggml.WriteGGUF(f, kv, ts); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
