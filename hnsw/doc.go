// Package hnsw is hmo's vector index: cosine-similarity nearest-neighbour
// search over record ids, implementing engine.VectorIndex on top of the
// HNSW graph of github.com/coder/hnsw, with an exact scan for small sets.
//
// # Model
//
// Each record id maps to a slot, which is the graph key of its vector.
// Slots are append-only: replacing an id tombstones its old slot and adds a
// new one, deleting an id tombstones its slot, and no key is ever added to
// a graph twice. Search asks the graph for more nodes than it needs, in
// proportion to the tombstones, drops the dead ones and rescores the rest
// exactly. When tombstones pass Options.CompactRatio of the slots, Apply
// rebuilds the graph from the live vectors.
//
// Vectors are normalised to unit length on the way in, so scores are
// cosine similarities whatever the input's length. A vector of the wrong
// length, with NaN or ±Inf components or all zeros is refused with a
// sentinel error (ErrDimension, ErrNotFinite, ErrZeroVector) and the batch
// holding it changes nothing.
//
// While it holds at most Options.ExactBelow live vectors the index keeps
// no graph and Search scores every vector: exact, and on the measurements
// below faster than coder/hnsw's graph at that size. The Apply that takes
// the live count past ExactBelow builds the graph (tens of seconds at the
// default), and from then on each added vector is inserted into it.
//
// # Persistence
//
// Save writes up to two files in the index directory, each through a
// temporary file, fsync, rename and directory fsync, mode 0600: the graph,
// if there is one, as exported by coder/hnsw ("hnsw-<generation>.graph"),
// then the sidecar ("hnsw.meta"): format version, Dims, watermark, the
// slot table (id, tombstone flag and, for live slots, the unit vector) and
// the size and CRC-32C of the graph file, sealed by its own CRC-32C. The
// sidecar is the commit record: it names the graph of its generation, so a
// crash mid-Save leaves the previous pair in force.
//
// Open refuses a damaged sidecar, or one saved with other Dims or another
// format version, with ErrCorrupt; the index is derived data, so the
// engine discards the directory and rebuilds it from the store. The graph
// is only an accelerator: a missing or damaged graph file (checked by size,
// checksum and a full structural walk before coder/hnsw sees it) leaves the
// index without a graph, searching exactly until the next Apply rebuilds
// it from the saved vectors. An index that was never saved opens empty
// with watermark 0.
//
// # Concurrency
//
// An Index is safe for concurrent use. coder/hnsw has no locks, but its
// Search only reads the graph and allocates its own state, so searches
// share a read lock with Save; each insertion takes the write lock
// briefly; a graph build or compaction runs beside the searches, which use
// the previous state until the new one is swapped in. Apply calls run one
// at a time.
//
// # Working around coder/hnsw
//
//   - Delete, and Add of a key already present (which calls Delete), can
//     panic after deletes followed by adds: this package never calls
//     either; tombstones and rebuilds take their place.
//   - Add and Search panic on a dimension mismatch, and NaN or zero
//     vectors poison its cosine distance: vectors are validated first.
//     Every call into coder/hnsw is wrapped in recover and a panic becomes
//     ErrInternal (a failed insertion drops the graph, which Apply
//     rebuilds; a failed search falls back to the exact scan).
//   - Import trusts its input: counts in a damaged file can make it
//     allocate without bound or build a graph whose Search dereferences
//     nil. The graph file is checksummed and its structure checked in full
//     before Import; Import needs an io.ByteReader and gets a bytes.Reader.
//   - M bounds the neighbours on every layer, the base layer included
//     (HNSW usually allows 2M there), so DefaultM is 24 rather than 16.
//   - EfSearch serves both insertion and search: the index sets it to
//     Options.EfConstruction around each insertion, under the write lock.
//   - Export and Import carry the distance function by registered name:
//     the package registers its unit-vector cosine distance (1 - a·b) at
//     init.
//   - Each layer's entry point is whichever node a map iteration yields
//     first, so two searches of the same graph may start from different
//     nodes when the top layer holds several.
//
// # Measurements
//
// BenchmarkSearch, k=10, default options, clustered 100-d unit vectors, on
// a 2-core VM shared with other work (timings from the quietest of three
// runs, which differed by up to 50%; recall from a later run):
//
//	live   graph    exact    recall@10  build   graph   meta    heap with
//	       search   scan     of graph   (cum.)  file    file    graph
//	5K     1.6 ms   0.14 ms  0.996      3.5 s   4.0 MB  2.0 MB   11 MB
//	10K    1.6 ms   0.27 ms  0.998      7.6 s   8.0 MB  4.1 MB   20 MB
//	20K    2.0 ms   0.60 ms  0.998       16 s    16 MB  8.2 MB   41 MB
//	40K    2.3 ms   2.3 ms   0.992       40 s    32 MB   16 MB   82 MB
//	50K    2.7 ms   3.6 ms   0.990       54 s    40 MB   20 MB  101 MB
//	100K   3.2 ms   6.8 ms   0.967      135 s    80 MB   41 MB  204 MB
//
// At 100K, Save took 1.6 s and Open 2.6 s with the graph, 0.4 s without
// it. Hence DefaultExactBelow: below about 40K vectors the exact scan is
// no slower than coder/hnsw's graph, whose search cost is dominated by
// per-node map iteration, sorting and allocation.
package hnsw
