package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/capture"
	"github.com/hmo-dev/hmo/claudecode"
	"github.com/hmo-dev/hmo/engine"
)

// RoleSummary is the role of a compaction summary's memory.
const RoleSummary = capture.RoleSummary

// storeSummary remembers the summary a compaction wrote (PostCompact's
// compact_summary) as one memory of the session, once: its source is
// the session and a hash of the summary, so a repeated hook stores
// nothing new.
func storeSummary(ctx context.Context, p *Payload, scope string, svc api.Service, o *Options) error {
	text := strings.TrimSpace(p.CompactSummary)
	if text == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(text))
	src := claudecode.SourcePrefix + "compact:" + p.SessionID + ":" + hex.EncodeToString(sum[:8])
	m := api.NewMemory{
		Text: cut(text, engine.DefaultMaxTextBytes), Scope: scope, Session: p.SessionID, Role: RoleSummary,
		Time: o.Clock().UTC(), Sources: []string{src},
	}
	if _, err := svc.Add(ctx, api.AddRequest{Memories: []api.NewMemory{m}}); err != nil {
		return fmt.Errorf("add compact summary: %w", err)
	}
	return nil
}

// cut shortens s to at most n bytes at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
