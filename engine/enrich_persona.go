package engine

import (
	"context"
	"encoding/json"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Sources of the persona profile text.
const (
	ProfileLLM        = "llm"        // written by the Enricher at the last gate firing
	ProfileExtractive = "extractive" // the persona's salient terms and statements
)

// PersonaProfile returns the persona's text profile and its source: the
// one the Enricher wrote, if it is current (written at the latest gate
// firing), else the extractive one. It is empty in flat mode and before
// the persona's first update.
func (e *Engine) PersonaProfile() (text, source string) {
	p := e.Persona()
	if p == nil || p.Updates() == 0 {
		return "", ""
	}
	if lp := e.storedProfile(); lp.Text != "" && lp.Firings >= p.Firings() {
		return lp.Text, ProfileLLM
	}
	return p.Profile().String(), ProfileExtractive
}

func (e *Engine) storedProfile() llmProfile {
	var lp llmProfile
	e.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketMeta).Get(metaProfileLLM); b != nil {
			json.Unmarshal(b, &lp) // a bad value reads as no profile: the extractive one serves
		}
		return nil
	})
	return lp
}

// refreshProfile asks the Enricher for a new persona profile; on failure
// the extractive profile serves until the next firing.
func (e *Engine) refreshProfile(ctx context.Context) error {
	p := e.Persona()
	firings := p.Firings()
	sctx, cancel := context.WithTimeout(ctx, e.opts.EnrichTimeout)
	text, err := e.opts.Enricher.Profile(sctx, p.Profile().String())
	cancel()
	if ctx.Err() != nil {
		e.profileFired() // closing: due again on the next open
		return nil
	}
	text = strings.TrimSpace(text)
	if err == nil && text == "" {
		err = ErrModelOutput
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if cerr := e.checkOpen(); cerr != nil {
		return cerr
	}
	return e.db.Update(func(tx *bolt.Tx) error {
		if err == nil {
			b, merr := json.Marshal(llmProfile{Text: text, Firings: firings, Time: e.opts.Clock().UTC()})
			if merr != nil {
				return merr
			}
			if perr := tx.Bucket(bucketMeta).Put(metaProfileLLM, b); perr != nil {
				return perr
			}
		}
		return e.countSteps(tx, map[string]error{StepProfile: err})
	})
}

// reweigh gives an active record the I0 the Enricher scored, re-ranking it
// in the tiers. Records in the archive only keep the I0 stored with them.
// wmu is held (dequeue).
func (e *Engine) reweigh(id uint64, i0 float64) error {
	ts := e.tiers
	if ts == nil {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if h, ok := ts.accessed[id]; ok {
		h.I0 = i0
		ts.accessed[id] = h
	}
	_, moves, ok := ts.mgr.Reweigh(id, i0, e.opts.Clock())
	if !ok {
		return nil
	}
	ts.dirty[id] = true
	err := e.db.View(func(tx *bolt.Tx) error { return e.applyMoves(tx, moves) })
	if err != nil {
		return err
	}
	return e.flushTiers()
}
