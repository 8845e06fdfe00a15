package engine

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/retrieve"
	"github.com/hmo-dev/hmo/timetree"
)

// The temporal-semantic tree (package timetree) holds no text: it is
// built from the records and their vectors in id order when the store
// opens with a pipeline stage that reads it (htreeStages), or else at
// the first HTreeNodes, and after a reindex; once built it is kept up to
// date after each commit. Building it reads every record and vector: at
// 100K records it held half of a cold recall's time and most of its heap,
// for stages the default pipeline does not run.

// htreeStages are the pipeline stages that read the tree.
const htreeStages = retrieve.StageTree | retrieve.StageRobust

// htreeChange is a tree update waiting for its transaction to commit.
type htreeChange struct {
	id    uint64
	scope string
	at    time.Time
	vec   []float32 // nil: remove
}

// addHTreeLeaves queues the new records of a transaction for the tree.
func (e *Engine) addHTreeLeaves(recs []htreeChange, vecs [][]float32) {
	for i := range recs {
		recs[i].vec = vecs[i]
		e.htreePending = append(e.htreePending, recs[i])
	}
}

// applyHTree brings the tree up to date with a transaction that ended with
// err. The caller holds wmu.
func (e *Engine) applyHTree(err error) {
	// Without a tree the changes are in bbolt, where a later build reads
	// them.
	if t := e.htree.Load(); t != nil && err == nil {
		for _, c := range e.htreePending {
			if c.vec == nil {
				t.Remove(c.id)
			} else if aerr := t.Add(c.id, c.scope, c.at, c.vec); aerr != nil {
				// A vector of other dimensions: leave the record out of
				// the tree rather than fail a committed write.
				t.Remove(c.id)
			}
		}
	}
	e.htreePending = e.htreePending[:0]
}

// needHTree returns the tree, building it first when the store opened
// without it. It takes wmu: no caller may hold wmu or swapMu.
func (e *Engine) needHTree() (*timetree.Tree, error) {
	if t := e.htree.Load(); t != nil {
		return t, nil
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if t := e.htree.Load(); t != nil {
		return t, nil
	}
	if err := e.buildHTree(); err != nil {
		return nil, err
	}
	return e.htree.Load(), nil
}

// buildHTree builds the tree from bbolt: every record with a vector of the
// store's dimensions, in id order. The caller holds wmu.
func (e *Engine) buildHTree() error {
	t := timetree.New(nil)
	err := e.db.View(func(tx *bolt.Tx) error {
		vs := e.storedVectors(tx)
		return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			r, err := decodeRecord(v)
			if err != nil {
				return err
			}
			vec, err := vs.getKey(k)
			if err != nil {
				return nil // no vector yet: left out, as the vector index does
			}
			return t.Add(r.ID, r.Scope, r.Time, vec)
		})
	})
	if err != nil {
		return fmt.Errorf("hmo: temporal tree: %w", err)
	}
	e.htree.Store(t)
	return nil
}

// HTreeNodes lists the temporal-semantic tree's nodes of scope, with the
// extractive summary of each (the texts of the records closest to its
// centroid, at most maxRunes runes).
func (e *Engine) HTreeNodes(scope string, maxRunes int) ([]HTreeNode, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	t, err := e.needHTree()
	if err != nil {
		return nil, err
	}
	var out []HTreeNode
	for _, n := range t.Nodes(scope) {
		sum := t.Summary(n.ID, maxRunes, func(id uint64) (string, bool) {
			d, err := e.docs([]uint64{id})
			if err != nil || d[0].ID == 0 {
				return "", false
			}
			return d[0].Text, true
		})
		out = append(out, HTreeNode{Node: n, Summary: sum})
	}
	return out, nil
}

// HTreeNode is a node of the temporal-semantic tree with its summary.
type HTreeNode struct {
	timetree.Node
	Summary string
}

// TreeInfo serves the pipeline's tree stages.
func (s *archiveSource) HTreeInfo(ids []uint64) ([]retrieve.HTreeInfo, error) {
	t := s.e.htree.Load()
	if t == nil {
		// The store opened with a pipeline that reads no tree.
		return make([]retrieve.HTreeInfo, len(ids)), nil
	}
	info := t.Info(ids)
	out := make([]retrieve.HTreeInfo, len(info))
	for i, in := range info {
		out[i] = retrieve.HTreeInfo{Nodes: in.Nodes, N: in.N, Last: in.Last}
	}
	return out, nil
}

var _ retrieve.HTreeSource = (*archiveSource)(nil)

// HTreeInfo serves the tree stages in the tiers too.
func (s *viewSource) HTreeInfo(ids []uint64) ([]retrieve.HTreeInfo, error) {
	return (&archiveSource{e: s.e, q: s.q}).HTreeInfo(ids)
}

var _ retrieve.HTreeSource = (*viewSource)(nil)
