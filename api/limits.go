package api

import (
	"fmt"

	"github.com/hmo-dev/hmo/retrieve"
)

// Limits and defaults of the operations. Token figures are estimates (see
// EstimateTokens); every response is kept far under 25,000 tokens, the
// largest tool output agents such as Claude Code accept.
const (
	DefaultSearchK      = 10   // results per search page
	MaxSearchK          = 50   // largest search page
	MaxSearchDepth      = 200  // results reachable by paging one search
	DefaultSearchTokens = 4000 // SearchRequest.MaxTokens default
	MaxSearchTokens     = 8000 // largest SearchRequest.MaxTokens

	MaxGetIDs       = 50   // ids per Get
	MaxGetTokens    = 8000 // budget of a Get response; longer texts are shortened
	MaxHistory      = 20   // history versions per Get
	MaxAddMemories  = 100  // memories per Add
	MaxDeleteIDs    = 1000 // ids per Delete
	DefaultListSize = 20   // memories per list page
	MaxListSize     = 100  // largest list page
	ListTokens      = 6000 // budget of a list page; the rest goes to the next page

	DefaultContextTokens = 1500 // ContextRequest.MaxTokens default
	MaxContextTokens     = 8000 // largest ContextRequest.MaxTokens
	ContextCandidates    = 20   // memories considered for a context block
)

// DefaultMinScore is the relevance below which search and context drop a
// result as the unrelated tail (retrieve.DefaultMinScore: a record with
// none of the query's words, no more similar than an unrelated one).
var DefaultMinScore = retrieve.DefaultMinScore

// MinScoreFloor resolves a min_score as search and context do: 0 is
// DefaultMinScore, a negative value is no floor (returned as is), above 1
// is ErrInvalid. Other interfaces (the CLI) apply the same rule with it.
func MinScoreFloor(v float64) (float64, error) { return minScore(v) }

// minScore resolves a request's min_score.
func minScore(v float64) (float64, error) {
	switch {
	case v == 0:
		return DefaultMinScore, nil
	case v > 1 || v != v:
		return 0, fmt.Errorf("%w: min_score %v above 1", ErrInvalid, v)
	}
	return v, nil // negative: no floor
}

// Token estimate. There is no tokenizer on the device: a token is taken as
// BytesPerToken bytes of UTF-8, rounded up, which overestimates English
// (about 4 bytes a token) and is close for code and CJK text, so budgets
// err on the small side. Each memory adds MemoryOverheadBytes for its JSON
// fields besides the text and labels.
const (
	BytesPerToken       = 3
	MemoryOverheadBytes = 160
)

// EstimateTokens estimates the tokens of s.
func EstimateTokens(s string) int { return (len(s) + BytesPerToken - 1) / BytesPerToken }

// memoryTokens estimates the tokens of m as JSON.
func memoryTokens(m *Memory) int {
	n := len(m.Text) + len(m.Scope) + len(m.Session) + len(m.Role) + MemoryOverheadBytes
	for _, s := range m.Sources {
		n += len(s) + 3
	}
	return (n + BytesPerToken - 1) / BytesPerToken
}
