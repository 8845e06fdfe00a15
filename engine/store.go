package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/retrieve"
	"github.com/hmo-dev/hmo/timetree"
)

// SchemaVersion is the on-disk layout version of the bbolt store.
const SchemaVersion = 1

// Files and directories inside a store directory.
const (
	DBFile    = "hmo.db"
	VectorDir = "vectors"
	TextDir   = "text"
)

var (
	bucketMeta     = []byte("meta")
	bucketRecords  = []byte("records")
	bucketVectors  = []byte("vectors")
	bucketChanges  = []byte("changes")
	bucketSessions = []byte("sessions")
	bucketByTime   = []byte("bytime")
	bucketNext     = []byte("next")

	metaSchema      = []byte("schema")
	metaEmbedder    = []byte("embedder")
	metaDims        = []byte("dims")
	metaIndexLayout = []byte("index_layout")
	metaCorpus      = []byte("corpus")
	metaLogTrimmed  = []byte("log_trimmed")
	metaCount       = []byte("count") // records in the store
)

var allBuckets = [][]byte{bucketMeta, bucketRecords, bucketVectors, bucketChanges, bucketSessions, bucketByTime, bucketNext, bucketActive, bucketSessSeq, bucketEnrich, bucketHistory, bucketSegTree, bucketDedup, bucketDedupIDs, bucketEntities, bucketXMemory, bucketEvents}

// Engine is an open memory store. It is safe for concurrent use: reads run
// in parallel; writes are serialised.
type Engine struct {
	dir  string
	opts *Options
	pipe *retrieve.Pipeline // the query path; immutable
	db   *boltDB
	dims int

	rebuilds []Rebuild // index rebuilds not yet persisted; guarded by wmu

	// wmu serialises writers, so bbolt commits and index updates happen in
	// change-log order. It guards text, corpus and sinceCheckpoint, and
	// is held whenever vec is assigned.
	wmu             sync.Mutex
	text            TextIndex
	corpus          CorpusAware // nil when the embedder is not corpus-aware
	sinceCheckpoint int
	// fresh are the records and vectors of the write whose post-commit
	// work runs (RememberBatch, RememberBatches), nil otherwise; stored
	// with wmu held while no such work runs. Recalls read it too (a tier
	// move reads records and their context turns), hence atomic.
	fresh atomic.Pointer[freshWrite]

	vecMu  sync.RWMutex // guards vec; assigned with wmu held too
	vec    VectorIndex  // nil until first used (vectorIndex)
	vecDir string       // vector index directory under dir; changed by Reindex with wmu and swapMu held

	// swapMu is held for reading by Recall and for writing by Reindex
	// while it switches the embedder: it guards opts.Embedder, dims and
	// corpus against readers that do not hold wmu.
	swapMu sync.RWMutex

	enr *enricher // nil without an Enricher

	docCache docCache // the pipeline's record metadata
	// poolCounted is whether the text index asked for the last feedback
	// pool's documents (archiveSource.Text reads them ahead accordingly).
	poolCounted atomic.Bool
	words       wordCache // the pipeline's word vectors; emptied by Reindex

	ents       entityGraph    // the entity graph, loaded on first use (entityGraph)
	entPending []entityChange // graph updates of the open write transaction; guarded by wmu

	htree        atomic.Pointer[timetree.Tree] // H-Mem's temporal-semantic tree, nil until a stage or HTreeNodes needs it (needHTree); safe for concurrent use; set with wmu held
	htreePending []htreeChange                 // tree updates of the open write transaction; guarded by wmu

	tiers   *tierState   // nil in flat mode
	records atomic.Int64 // records in the store

	null nullCache // vectors sampled for the relevance null

	themes      themeCache      // xMemory's partitions, loaded from bucketXMemory
	unitPending map[uint64]bool // level-1 segments the open write transaction changed; touched only inside bbolt write transactions, which bbolt serialises

	closed atomic.Bool
}

// Open opens the store in dir, creating it when Options.Create allows,
// and brings the indexes up to date with bbolt. A damaged store file
// gives an error wrapping ErrDamaged, never a panic.
func Open(dir string, opts *Options) (e *Engine, err error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	pipe, err := o.pipeline()
	if err != nil {
		return nil, err
	}
	if err := checkDBFile(dir); err != nil {
		return nil, err
	}
	if err := o.mayCreate(dir); err != nil {
		return nil, err
	}
	if !o.ReadOnly {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("hmo: create store dir: %w", err)
		}
	}
	if err := CheckDir(dir); err != nil {
		return nil, err
	}
	db, err := openBoltSafe(dir, &bolt.Options{Timeout: o.OpenTimeout, FreelistType: bolt.FreelistMapType, ReadOnly: o.ReadOnly})
	if err != nil {
		return nil, openErr(dir, err)
	}
	bdb := &boltDB{DB: db, dir: dir, readOnly: o.ReadOnly}
	bdb.preadFile() // now, from the path bbolt just opened
	defer func() {
		if err != nil {
			bdb.closePread()
		}
	}()
	e = &Engine{dir: dir, opts: o, pipe: pipe, db: bdb, dims: o.Embedder.Dims(), vecDir: VectorDir, unitPending: map[uint64]bool{}}
	e.corpus, _ = o.Embedder.(CorpusAware)
	if err := e.init(); err != nil {
		db.Close()
		return nil, err
	}
	if err := e.syncSegTree(); err != nil {
		db.Close()
		return nil, fmt.Errorf("hmo: segment tree: %w", err)
	}
	if err := e.syncEvents(); err != nil {
		db.Close()
		return nil, fmt.Errorf("hmo: event units: %w", err)
	}
	if err := e.openThemes(); err != nil {
		db.Close()
		return nil, err
	}
	if err := e.openEntities(); err != nil {
		db.Close()
		return nil, err
	}
	if e.pipe.Stages()&htreeStages != 0 {
		if err := e.buildHTree(); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := e.openIndexes(); err != nil {
		db.Close()
		return nil, err
	}
	e.wmu.Lock()
	err = e.syncIndexes()
	if err != nil && o.ReadOnly {
		// A read-only open answers from the indexes as they are (full
		// disk): records past the text index's watermark are found by
		// the vector side, which syncs in memory.
		e.noteRebuild("text", "read-only open could not bring the text index up to date: %v", err)
		err = nil
	}
	if err == nil {
		err = e.openTiers()
	}
	e.persistRebuilds()
	e.wmu.Unlock()
	if err == nil && !o.ReadOnly {
		err = e.startEnricher()
	}
	if err != nil {
		e.closeIndexes()
		db.Close()
		return nil, err
	}
	e.startFlusher()
	if !o.ReadOnly {
		e.removeStaleVectorDirs()
	}
	return e, nil
}

// mayCreate applies Options.Create: it fails with ErrNoStore when dir
// holds no store and the policy does not allow creating one there.
func (o *Options) mayCreate(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, DBFile)); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("hmo: %w", err)
	}
	policy := o.Create
	if o.ReadOnly {
		policy = CreateNever
	}
	switch policy {
	case CreateAlways:
		return nil
	case CreateIfNew:
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("hmo: %w", err)
		}
		for _, en := range entries {
			// The store's indexes without its file: the file was lost.
			if n := en.Name(); n == TextDir || strings.HasPrefix(n, VectorDir) {
				return fmt.Errorf("%w in %s: the directory holds a store's indexes but no %s (was it deleted or moved?); restore it, or 'hmo init --dir %s' to start a new, empty store there",
					ErrNoStore, dir, DBFile, dir)
			}
		}
		return nil
	}
	return fmt.Errorf("%w in %s (create one with 'hmo init --dir %s')", ErrNoStore, dir, dir)
}

// init creates the buckets of a new store, or checks the identity of an
// existing one, and loads the embedder's corpus state.
func (e *Engine) init() error {
	if e.opts.ReadOnly {
		return e.db.View(func(tx *bolt.Tx) error {
			for _, b := range allBuckets {
				if tx.Bucket(b) == nil {
					return fmt.Errorf("%w: bucket %s missing; open the store once for writing to upgrade it", ErrNeedsWrite, b)
				}
			}
			e.records.Store(int64(getU64(tx.Bucket(bucketMeta), metaCount)))
			return e.loadMeta(tx.Bucket(bucketMeta))
		})
	}
	return e.db.Update(func(tx *bolt.Tx) error {
		defer func() { e.records.Store(int64(getU64(tx.Bucket(bucketMeta), metaCount))) }()
		// A store from before de-duplication gets its identity keys now.
		migrate := tx.Bucket(bucketMeta) != nil && tx.Bucket(bucketDedup) == nil
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("hmo: create bucket %s: %w", b, err)
			}
		}
		m := tx.Bucket(bucketMeta)
		if m.Get(metaSchema) == nil {
			return e.initMeta(m)
		}
		if err := e.checkMeta(m); err != nil {
			return err
		}
		if migrate {
			if err := buildKeys(tx); err != nil {
				return fmt.Errorf("hmo: build de-duplication keys: %w", err)
			}
		}
		return e.loadMeta(m)
	})
}

// loadMeta checks the identity of an existing store and loads the vector
// directory and the embedder's corpus state.
func (e *Engine) loadMeta(m *bolt.Bucket) error {
	{
		if err := e.checkMeta(m); err != nil {
			return err
		}
		if v := m.Get(metaVectorDir); v != nil {
			e.vecDir = string(v)
		}
		if st := m.Get(metaCorpus); st != nil && e.corpus != nil {
			if err := e.corpus.UnmarshalState(st); err != nil {
				return fmt.Errorf("hmo: load embedder corpus state: %w", err)
			}
		}
		return nil
	}
}

func (e *Engine) initMeta(m *bolt.Bucket) error {
	for k, v := range map[string]string{
		string(metaSchema):      strconv.Itoa(SchemaVersion),
		string(metaEmbedder):    e.opts.Embedder.Name(),
		string(metaDims):        strconv.Itoa(e.dims),
		string(metaIndexLayout): e.opts.indexLayout(),
	} {
		if err := m.Put([]byte(k), []byte(v)); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) checkMeta(m *bolt.Bucket) error {
	if v := string(m.Get(metaSchema)); v != strconv.Itoa(SchemaVersion) {
		return fmt.Errorf("%w: store has %q, this hmo reads %d", ErrSchema, v, SchemaVersion)
	}
	name, dims := string(m.Get(metaEmbedder)), string(m.Get(metaDims))
	if name != e.opts.Embedder.Name() || dims != strconv.Itoa(e.dims) {
		return fmt.Errorf("%w: store has %q (%s dims), opened with %q (%d dims); run 'hmo reindex' to switch",
			ErrEmbedderMismatch, name, dims, e.opts.Embedder.Name(), e.dims)
	}
	if v := string(m.Get(metaIndexLayout)); v != e.opts.indexLayout() {
		return fmt.Errorf("%w: store indexes %q, options ask for %q", ErrConfigMismatch, v, e.opts.indexLayout())
	}
	return nil
}

// Dir is the store directory.
func (e *Engine) Dir() string { return e.dir }

// Options returns a copy of the options in force.
func (e *Engine) Options() Options {
	e.swapMu.RLock()
	defer e.swapMu.RUnlock()
	return *e.opts
}

// Close brings the indexes up to date, saves them, trims the change log and
// closes the store. It is safe to call more than once.
func (e *Engine) Close() error {
	if !e.closed.CompareAndSwap(false, true) {
		return nil
	}
	e.stopEnricher()
	e.wmu.Lock()
	defer e.wmu.Unlock()
	e.tiers.stopFlusher() // its last flush committed: the one below writes the rest
	var aerr error        // the last recall's access's, if nothing reported it
	if e.tiers != nil {
		e.tiers.mu.Lock()
		aerr = e.tiers.takeAccessErr()
		e.tiers.mu.Unlock()
	}
	if e.opts.ReadOnly {
		return errors.Join(aerr, e.closeIndexes(), e.db.Close())
	}
	var err error
	if e.vec == nil && e.sinceCheckpoint > closeBacklog {
		err = e.openVector()
	}
	if err == nil {
		err = e.syncIndexes()
	}
	if err == nil {
		err = e.checkpoint()
	}
	if err == nil && e.tiers != nil {
		e.tiers.mu.Lock()
		err = e.flushTiers()
		e.tiers.mu.Unlock()
	}
	err = errors.Join(aerr, err, e.closeIndexes())
	return errors.Join(err, e.db.Close())
}

func (e *Engine) checkOpen() error {
	if e.closed.Load() {
		return ErrClosed
	}
	return nil
}

func putU64(b *bolt.Bucket, key []byte, v uint64) error {
	return b.Put(key, binary.BigEndian.AppendUint64(nil, v))
}

func getU64(b *bolt.Bucket, key []byte) uint64 { return keyU64(b.Get(key)) }
