package hnsw

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// File names in the index directory. The meta file holds the vectors and
// is the commit record: it names the graph file of its generation, so a
// crash during Save leaves the previous pair in force.
const (
	metaName    = "hnsw.meta"
	graphPrefix = "hnsw-"
	graphSuffix = ".graph"
	tmpSuffix   = ".tmp"
)

func graphName(gen uint64) string {
	return fmt.Sprintf("%s%016x%s", graphPrefix, gen, graphSuffix)
}

// Save writes the index to its directory if it changed since the last
// save: the graph, if there is one, to a new generation file, then the
// meta file naming it; each through a temporary file (mode 0600), fsync,
// rename and directory fsync. Searches proceed while Save runs; changes
// wait only while the graph is encoded in memory.
func (x *Index) Save() error {
	x.saveMu.Lock()
	defer x.saveMu.Unlock()
	return x.save()
}

// save is Save with x.saveMu held.
func (x *Index) save() error {
	m, graphBytes, version, err := x.snapshot()
	if err != nil || m == nil {
		return err
	}
	m.gen = x.gen + 1
	graphFile := ""
	if graphBytes != nil {
		graphFile = graphName(m.gen)
		m.graphSize = uint64(len(graphBytes))
		m.graphCRC = crc32.Checksum(graphBytes, castagnoli)
		if err := writeFile(x.dir, graphFile, graphBytes); err != nil {
			return fmt.Errorf("hnsw: save: %w", err)
		}
	}
	if err := writeFile(x.dir, metaName, m.encode()); err != nil {
		return fmt.Errorf("hnsw: save: %w", err)
	}
	if x.graphFile != "" {
		// The new meta is durable; the old graph is garbage.
		_ = os.Remove(filepath.Join(x.dir, x.graphFile))
	}
	x.gen, x.graphFile, x.savedVersion = m.gen, graphFile, version
	return nil
}

// snapshot copies the slot table and encodes the graph, if any, under a
// read lock. It returns a nil meta if nothing changed since the last save.
// The vectors are shared, not copied: they never change once stored.
func (x *Index) snapshot() (*meta, []byte, uint64, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	switch {
	case x.closed:
		return nil, nil, 0, ErrClosed
	case x.gen != 0 && x.version == x.savedVersion:
		return nil, nil, 0, nil
	}
	m := &meta{
		dims:      x.opts.Dims,
		watermark: x.watermark,
		ids:       slices.Clone(x.ids),
		dead:      slices.Clone(x.dead),
		vecs:      slices.Clone(x.vecs),
	}
	if x.g == nil {
		return m, nil, x.version, nil
	}
	var buf bytes.Buffer
	var exportErr error
	if err := guard("export", func() { exportErr = x.g.Export(&buf) }); err != nil {
		return nil, nil, 0, fmt.Errorf("hnsw: save: %w", err)
	}
	if exportErr != nil {
		return nil, nil, 0, fmt.Errorf("hnsw: save: export: %w", exportErr)
	}
	return m, buf.Bytes(), x.version, nil
}

// writeFile atomically replaces dir/name with b: temporary file (0600),
// write, fsync, rename, fsync of dir.
func writeFile(dir, name string, b []byte) (err error) {
	f, err := os.CreateTemp(dir, name+".*"+tmpSuffix)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(b); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// load reads the saved index, if any, into x, which is empty. A damaged
// meta file is ErrCorrupt; a missing or damaged graph file is not an
// error: the index starts without a graph and Apply rebuilds one from the
// vectors when it needs it.
func (x *Index) load() error {
	mb, err := os.ReadFile(filepath.Join(x.dir, metaName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	m, err := decodeMeta(mb, x.opts.Dims)
	if err != nil {
		return err
	}
	x.vecs, x.ids, x.dead, x.alloc = m.vecs, m.ids, m.dead, m.alloc
	for s, id := range m.ids {
		if m.dead[s] {
			x.ntomb++
		} else {
			x.slots[id] = uint64(s)
		}
	}
	x.watermark, x.gen = m.watermark, m.gen
	if m.graphSize == 0 {
		return nil
	}
	x.graphFile = graphName(m.gen)
	if len(x.slots) > x.opts.ExactBelow {
		x.g, _ = loadGraph(filepath.Join(x.dir, x.graphFile), m, &x.opts)
	}
	return nil
}

// loadGraph reads the graph file that m names and checks it against m.
func loadGraph(path string, m *meta, o *Options) (*graph, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if uint64(len(b)) != m.graphSize || crc32.Checksum(b, castagnoli) != m.graphCRC {
		return nil, fmt.Errorf("%w: graph file does not match meta", ErrCorrupt)
	}
	return decodeGraph(b, o, len(m.ids))
}

// decodeGraph checks and imports an exported graph of nslots nodes.
func decodeGraph(b []byte, o *Options, nslots int) (*graph, error) {
	if err := checkGraph(b, o.Dims, nslots); err != nil {
		return nil, err
	}
	g := newGraph(o)
	var importErr error
	if err := guard("import", func() { importErr = g.Import(bytes.NewReader(b)) }); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if importErr != nil {
		return nil, fmt.Errorf("%w: import: %w", ErrCorrupt, importErr)
	}
	// Import takes the file's parameters (checkGraph vouched for the
	// distance); use ours.
	g.M, g.Ml, g.EfSearch = o.M, o.Ml, o.EfSearch
	return g, nil
}

// removeStale deletes graph files of other generations and temporary
// files left by an interrupted Save. Errors are ignored: stale files cost
// only disk space.
func (x *Index) removeStale() {
	entries, err := os.ReadDir(x.dir)
	if err != nil {
		return
	}
	keep := x.graphFile
	for _, e := range entries {
		name := e.Name()
		tmp := strings.HasSuffix(name, tmpSuffix) &&
			(strings.HasPrefix(name, graphPrefix) || strings.HasPrefix(name, metaName+"."))
		if tmp || (isGraphName(name) && name != keep) {
			_ = os.Remove(filepath.Join(x.dir, name))
		}
	}
}

// isGraphName reports whether name is graphName of some generation.
func isGraphName(name string) bool {
	hex, ok1 := strings.CutPrefix(name, graphPrefix)
	hex, ok2 := strings.CutSuffix(hex, graphSuffix)
	if !ok1 || !ok2 || len(hex) != 16 {
		return false
	}
	_, err := strconv.ParseUint(hex, 16, 64)
	return err == nil
}
