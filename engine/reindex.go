package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

var (
	bucketReindex    = []byte("reindex")     // progress of a running reindex: target, dims, cursor
	bucketReindexVec = []byte("reindex_vec") // id -> vector of the target embedder
	metaVectorDir    = []byte("vector_dir")  // directory of the vector index, relative to the store

	reindexTarget = []byte("target")
	reindexDims   = []byte("dims")
	reindexCursor = []byte("cursor") // last record id embedded in the cursor pass
)

// reindexBatch is the number of records embedded per transaction.
const reindexBatch = 64

// Reindex switches the store to another embedder: it re-embeds every
// record with emb, then swaps the vectors, the vector index and the
// store's embedder identity in one bbolt transaction. Until the swap the
// old vectors and index keep serving recall, and writes go on (records
// added meanwhile are embedded before the swap). Progress is kept in
// bbolt: a Reindex to the same embedder after an interruption resumes
// where it stopped. progress, if not nil, is called with the records done
// and the total.
//
// In tiered mode the tier views are reloaded with the new vectors at the
// switch (membership, headers and counters are kept). The persona vector,
// whose space changes, is reset.
func (e *Engine) Reindex(ctx context.Context, emb Embedder, progress func(done, total int)) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	if emb == nil || emb.Dims() < 1 {
		return fmt.Errorf("%w: reindex needs an embedder with dimensions", ErrInvalidOption)
	}
	if progress == nil {
		progress = func(int, int) {}
	}
	corpus, _ := emb.(CorpusAware)
	if err := e.beginReindex(emb, corpus); err != nil {
		return err
	}
	if err := e.reindexPass(ctx, emb, progress); err != nil {
		return err
	}
	if err := e.swapEmbedder(ctx, emb, corpus); err != nil {
		return err
	}
	// The tree's centroids are in the old embedder's space: rebuild.
	return e.syncSegTree()
}

// beginReindex opens the vector index (so recall never waits for the
// write lock during the swap), starts or resumes the staging area, and
// feeds a corpus-aware target the store's text.
func (e *Engine) beginReindex(emb Embedder, corpus CorpusAware) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if err := e.checkOpen(); err != nil {
		return err
	}
	if err := e.openVector(); err != nil {
		return err
	}
	return e.db.Update(func(tx *bolt.Tx) error {
		rb, err := tx.CreateBucketIfNotExists(bucketReindex)
		if err != nil {
			return err
		}
		if string(rb.Get(reindexTarget)) != emb.Name() || string(rb.Get(reindexDims)) != strconv.Itoa(emb.Dims()) {
			if err := resetStaging(tx); err != nil {
				return err
			}
			rb = tx.Bucket(bucketReindex)
			if err := rb.Put(reindexTarget, []byte(emb.Name())); err != nil {
				return err
			}
			if err := rb.Put(reindexDims, []byte(strconv.Itoa(emb.Dims()))); err != nil {
				return err
			}
		} else if _, err := tx.CreateBucketIfNotExists(bucketReindexVec); err != nil {
			return err
		}
		if corpus == nil {
			return nil
		}
		return tx.Bucket(bucketRecords).ForEach(func(_, v []byte) error {
			r, err := decodeRecord(v)
			if err != nil {
				return err
			}
			corpus.Observe([]string{r.Text})
			return nil
		})
	})
}

func resetStaging(tx *bolt.Tx) error {
	for _, b := range [][]byte{bucketReindex, bucketReindexVec} {
		if err := tx.DeleteBucket(b); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
			return err
		}
		if _, err := tx.CreateBucket(b); err != nil {
			return err
		}
	}
	return nil
}

// reindexPass embeds the records after the cursor in batches, without the
// write lock, committing each batch with the new cursor.
func (e *Engine) reindexPass(ctx context.Context, emb Embedder, progress func(done, total int)) error {
	for {
		ids, texts, done, total, err := e.nextBatch()
		if err != nil {
			return err
		}
		progress(done, total)
		if len(ids) == 0 {
			return nil
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("hmo: reindex: embed: %w", err)
		}
		if err := checkVectors(vecs, len(ids), emb.Dims()); err != nil {
			return err
		}
		err = e.db.Update(func(tx *bolt.Tx) error {
			if err := stageVectors(tx, ids, vecs); err != nil {
				return err
			}
			return putU64(tx.Bucket(bucketReindex), reindexCursor, ids[len(ids)-1])
		})
		if err != nil {
			return err
		}
	}
}

// nextBatch reads the records after the cursor and counts progress.
func (e *Engine) nextBatch() (ids []uint64, texts []string, done, total int, err error) {
	err = e.db.View(func(tx *bolt.Tx) error {
		total = tx.Bucket(bucketRecords).Stats().KeyN
		done = tx.Bucket(bucketReindexVec).Stats().KeyN
		cursor := getU64(tx.Bucket(bucketReindex), reindexCursor)
		c := tx.Bucket(bucketRecords).Cursor()
		for k, v := c.Seek(u64key(cursor + 1)); k != nil && len(ids) < reindexBatch; k, v = c.Next() {
			r, err := decodeRecord(v)
			if err != nil {
				return err
			}
			ids, texts = append(ids, r.ID), append(texts, e.indexText(tx, &r))
		}
		return nil
	})
	return ids, texts, min(done, total), total, err
}

func checkVectors(vecs [][]float32, n, dims int) error {
	if len(vecs) != n {
		return fmt.Errorf("hmo: reindex: embedder returned %d vectors for %d texts", len(vecs), n)
	}
	for _, v := range vecs {
		if len(v) != dims {
			return fmt.Errorf("%w: reindex: embedder returned %d, says %d", ErrDims, len(v), dims)
		}
	}
	return nil
}

func stageVectors(tx *bolt.Tx, ids []uint64, vecs [][]float32) error {
	b := tx.Bucket(bucketReindexVec)
	for i, id := range ids {
		if err := b.Put(u64key(id), encodeVector(vecs[i])); err != nil {
			return err
		}
	}
	return nil
}

// unstage drops a record's staged vector (forgotten, or its indexed
// context changed): the swap embeds it again if it still exists.
func unstage(tx *bolt.Tx, id uint64) error {
	if b := tx.Bucket(bucketReindexVec); b != nil {
		return b.Delete(u64key(id))
	}
	return nil
}

// swapEmbedder embeds what the pass missed, builds the new vector index
// in a fresh directory while the old one serves, and switches in one
// transaction. Writers wait from here to the end; readers only for the
// switch itself.
func (e *Engine) swapEmbedder(ctx context.Context, emb Embedder, corpus CorpusAware) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	defer e.null.invalidate() // the sample holds the old embedder's vectors
	if err := e.checkOpen(); err != nil {
		return err
	}
	if err := e.catchUp(ctx, emb, corpus); err != nil {
		return err
	}
	newDir, vec, err := e.buildStagedIndex(emb.Dims())
	if err != nil {
		return err
	}
	e.swapMu.Lock()
	// Access headers kept in memory go to the store before the tiers
	// are reloaded from it.
	err = e.flushAccesses()
	if err == nil {
		err = e.db.Update(func(tx *bolt.Tx) error { return e.commitSwap(tx, emb, corpus, newDir) })
	}
	if err != nil {
		e.swapMu.Unlock()
		vec.Close()
		os.RemoveAll(filepath.Join(e.dir, newDir))
		return err
	}
	old, oldDir := e.vec, e.vecDir
	e.opts.Embedder, e.dims, e.corpus, e.vecDir = emb, emb.Dims(), corpus, newDir
	e.opts.Persona.Dims = emb.Dims()
	e.setVec(vec)
	err = e.reloadTiers()
	if err == nil && e.htree.Load() != nil {
		err = e.buildHTree() // the tree clusters by the new vectors
	}
	if err == nil { // so do the themes (commitSwap marked them stale)
		err = e.db.Update(func(tx *bolt.Tx) error { return e.rebuildThemes(tx, e.xmemoryVersion(emb)) })
	}
	e.swapMu.Unlock()
	if old != nil {
		old.Close()
	}
	os.RemoveAll(filepath.Join(e.dir, oldDir))
	if err != nil {
		return fmt.Errorf("hmo: reindexed, but reloading the tiers: %w (reopen the store)", err)
	}
	return nil
}

// reloadTiers rebuilds the tier state from the store: the views load the
// new vectors, the persona starts afresh in the new space. The caller
// holds wmu and swapMu.
func (e *Engine) reloadTiers() error {
	if e.tiers == nil {
		return nil
	}
	e.tiers.stopFlusher()
	e.tiers = nil
	if err := e.openTiers(); err != nil {
		return err
	}
	e.startFlusher()
	return nil
}

// catchUp embeds the records that have no staged vector: added after the
// cursor pass, or re-indexed since. The caller holds wmu.
func (e *Engine) catchUp(ctx context.Context, emb Embedder, corpus CorpusAware) error {
	var ids []uint64
	var texts []string
	err := e.db.View(func(tx *bolt.Tx) error {
		sb := tx.Bucket(bucketReindexVec)
		return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			if sb.Get(k) != nil {
				return nil
			}
			r, err := decodeRecord(v)
			if err != nil {
				return err
			}
			ids, texts = append(ids, r.ID), append(texts, e.indexText(tx, &r))
			return nil
		})
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	if corpus != nil {
		corpus.Observe(texts)
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("hmo: reindex: embed: %w", err)
	}
	if err := checkVectors(vecs, len(ids), emb.Dims()); err != nil {
		return err
	}
	return e.db.Update(func(tx *bolt.Tx) error { return stageVectors(tx, ids, vecs) })
}

// buildStagedIndex writes the staged vectors into a new vector index
// directory. The caller holds wmu, so no change is logged meanwhile.
func (e *Engine) buildStagedIndex(dims int) (string, VectorIndex, error) {
	newDir := nextVectorDir(e.vecDir)
	path := filepath.Join(e.dir, newDir)
	if err := os.RemoveAll(path); err != nil {
		return "", nil, fmt.Errorf("hmo: reindex: %w", err)
	}
	vec, err := e.opts.OpenVectorIndex(path, dims)
	if err != nil {
		return "", nil, fmt.Errorf("hmo: reindex: open vector index: %w", err)
	}
	var last uint64
	err = e.db.View(func(tx *bolt.Tx) error {
		last = tx.Bucket(bucketChanges).Sequence()
		var docs []VectorDoc
		c := tx.Bucket(bucketReindexVec).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if tx.Bucket(bucketRecords).Get(k) == nil {
				continue
			}
			vv, err := decodeVector(v, dims)
			if err != nil {
				return err
			}
			docs = append(docs, VectorDoc{ID: keyU64(k), Vector: vv})
			if len(docs) == syncChunk {
				if err := vec.Apply(docs, nil, 0); err != nil {
					return err
				}
				docs = docs[:0]
			}
		}
		return vec.Apply(docs, nil, last)
	})
	if err == nil {
		err = vec.Save()
	}
	if err != nil {
		vec.Close()
		os.RemoveAll(path)
		return "", nil, fmt.Errorf("hmo: reindex: build vector index: %w", err)
	}
	return newDir, vec, nil
}

// nextVectorDir names the directory of the next vector index generation:
// vectors, vectors.1, vectors.2, ...
func nextVectorDir(cur string) string {
	n := 0
	if _, suffix, ok := strings.Cut(cur, "."); ok {
		n, _ = strconv.Atoi(suffix)
	}
	return VectorDir + "." + strconv.Itoa(n+1)
}

// commitSwap replaces the vectors with the staged ones and switches the
// store's embedder identity and vector index directory.
func (e *Engine) commitSwap(tx *bolt.Tx, emb Embedder, corpus CorpusAware, newDir string) error {
	if err := tx.DeleteBucket(bucketVectors); err != nil {
		return err
	}
	vb, err := tx.CreateBucket(bucketVectors)
	if err != nil {
		return err
	}
	vb.FillPercent = fixedFill
	rb := tx.Bucket(bucketRecords)
	err = tx.Bucket(bucketReindexVec).ForEach(func(k, v []byte) error {
		if rb.Get(k) == nil {
			return nil
		}
		return vb.Put(k, v)
	})
	if err != nil {
		return err
	}
	m := tx.Bucket(bucketMeta)
	for k, v := range map[string]string{
		string(metaEmbedder):  emb.Name(),
		string(metaDims):      strconv.Itoa(emb.Dims()),
		string(metaVectorDir): newDir,
	} {
		if err := m.Put([]byte(k), []byte(v)); err != nil {
			return err
		}
	}
	// The persona vector lives in the old embedder's space.
	// So do xMemory's themes: rebuilt after the swap, or on the next
	// Open if the process stops before.
	for _, k := range [][]byte{metaPersona, metaProfileLLM, metaCorpus, metaXMemory} {
		if err := m.Delete(k); err != nil {
			return err
		}
	}
	if corpus != nil {
		st, err := corpus.MarshalState()
		if err != nil {
			return err
		}
		if err := m.Put(metaCorpus, st); err != nil {
			return err
		}
	}
	for _, b := range [][]byte{bucketReindex, bucketReindexVec} {
		if err := tx.DeleteBucket(b); err != nil {
			return err
		}
	}
	return nil
}

// removeStaleVectorDirs deletes vector index directories of other
// generations: left by a reindex that was interrupted, or by one that
// committed but did not get to delete the old index.
func (e *Engine) removeStaleVectorDirs() {
	entries, err := os.ReadDir(e.dir)
	if err != nil {
		return
	}
	for _, d := range entries {
		n := d.Name()
		if d.IsDir() && (n == VectorDir || strings.HasPrefix(n, VectorDir+".")) && n != e.vecDir {
			os.RemoveAll(filepath.Join(e.dir, n))
		}
	}
}
