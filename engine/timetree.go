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
// opens (and after a reindex), and kept up to date after each commit.

// treeChange is a tree update waiting for its transaction to commit.
type treeChange struct {
	id    uint64
	scope string
	at    time.Time
	vec   []float32 // nil: remove
}

// addTreeLeaves queues the new records of a transaction for the tree.
func (e *Engine) addTreeLeaves(recs []treeChange, vecs [][]float32) {
	for i := range recs {
		recs[i].vec = vecs[i]
		e.treePending = append(e.treePending, recs[i])
	}
}

// applyTree brings the tree up to date with a transaction that ended with
// err. The caller holds wmu.
func (e *Engine) applyTree(err error) {
	if err == nil {
		for _, c := range e.treePending {
			if c.vec == nil {
				e.tree.Remove(c.id)
			} else if aerr := e.tree.Add(c.id, c.scope, c.at, c.vec); aerr != nil {
				// A vector of other dimensions: leave the record out of
				// the tree rather than fail a committed write.
				e.tree.Remove(c.id)
			}
		}
	}
	e.treePending = e.treePending[:0]
}

// buildTree builds the tree from bbolt: every record with a vector of the
// store's dimensions, in id order.
func (e *Engine) buildTree() error {
	t := timetree.New(nil)
	err := e.db.View(func(tx *bolt.Tx) error {
		vb := tx.Bucket(bucketVectors)
		return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			r, err := decodeRecord(v)
			if err != nil {
				return err
			}
			vec, err := decodeVector(vb.Get(k), e.dims)
			if err != nil {
				return nil // no vector yet: left out, as the vector index does
			}
			return t.Add(r.ID, r.Scope, r.Time, vec)
		})
	})
	if err != nil {
		return fmt.Errorf("hmo: temporal tree: %w", err)
	}
	e.tree = t
	return nil
}

// TreeNodes lists the temporal-semantic tree's nodes of scope, with the
// extractive summary of each (the texts of the records closest to its
// centroid, at most maxRunes runes).
func (e *Engine) TreeNodes(scope string, maxRunes int) ([]TreeNode, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	e.swapMu.RLock()
	t := e.tree
	e.swapMu.RUnlock()
	var out []TreeNode
	for _, n := range t.Nodes(scope) {
		sum := t.Summary(n.ID, maxRunes, func(id uint64) (string, bool) {
			d, err := e.docs([]uint64{id})
			if err != nil || d[0].ID == 0 {
				return "", false
			}
			return d[0].Text, true
		})
		out = append(out, TreeNode{Node: n, Summary: sum})
	}
	return out, nil
}

// TreeNode is a node of the temporal-semantic tree with its summary.
type TreeNode struct {
	timetree.Node
	Summary string
}

// TreeInfo serves the pipeline's tree stages.
func (s *archiveSource) TreeInfo(ids []uint64) ([]retrieve.TreeInfo, error) {
	info := s.e.tree.Info(ids)
	out := make([]retrieve.TreeInfo, len(info))
	for i, in := range info {
		out[i] = retrieve.TreeInfo{Nodes: in.Nodes, N: in.N, Last: in.Last}
	}
	return out, nil
}

var _ retrieve.TreeSource = (*archiveSource)(nil)
