package vecfile

import "fmt"

// Format is the element type of the stored rows. It is fixed when the
// index is created; opening it with another fails with ErrIncompatible.
type Format uint8

// Formats.
const (
	// Float32 stores each component as a float32: exact scores.
	Float32 Format = 1
	// Int8 stores each component as an int8 scaled by the row's largest
	// magnitude: a quarter of the page cache, scores within about 1% (the
	// recall@10 against Float32 is measured in the tests and BENCHMARKS.md).
	Int8 Format = 2
	// Int8Rescore keeps each row only as the int8 companion of its
	// float32 unit vector (the bytes ScanInt8 scans, see companion.go),
	// for a caller that keeps the float32 vectors itself: Search ranks
	// by the int8 scores and returns them, and the caller rescores the
	// best RescoreCandidates(k) from its own copy (the engine does, from
	// bbolt). Candidates and order are then those of a Float32 index
	// scanned with ScanInt8, without the float32 matrix on disk: a
	// quarter of its bytes. Vector and NextVector report no vectors.
	Int8Rescore Format = 3
)

func (f Format) String() string {
	switch f {
	case Float32:
		return "float32"
	case Int8:
		return "int8"
	case Int8Rescore:
		return "int8-rescore"
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// rowBytes is the bytes per row of dims components.
func (f Format) rowBytes(dims int) int {
	switch f {
	case Int8:
		return dims
	case Int8Rescore:
		return compStride(dims)
	}
	return 4 * dims
}

// valid reports whether f is a known format.
func (f Format) valid() bool { return f == Float32 || f == Int8 || f == Int8Rescore }

// Scan is how a Float32 index finds a search's best rows.
type Scan uint8

// Scans.
const (
	// ScanInt8 ranks every row with an int8 companion of the matrix (see
	// the package doc) and rescores the best max(Rescore*k, RescoreMin)
	// exactly in float32: the scores returned are the float32 ones; a
	// true top-k row is missed only if the int8 ranking puts it below
	// that many others (recall@10 against ScanFloat32 is measured in the
	// tests and BENCHMARKS.md).
	ScanInt8 Scan = 1
	// ScanFloat32 scores every row of the matrix in float32: exact.
	ScanFloat32 Scan = 2
)

func (s Scan) String() string {
	switch s {
	case ScanInt8:
		return "int8"
	case ScanFloat32:
		return "float32"
	}
	return fmt.Sprintf("scan(%d)", uint8(s))
}

// RescoreMin is the fewest candidates ScanInt8 rescores in float32.
const RescoreMin = 64

// Defaults for Options.
const (
	// DefaultFormat is the row format of a new index.
	DefaultFormat = Float32
	// DefaultCompactRatio is the share of dead rows above which Apply
	// rewrites the files with the live rows only.
	DefaultCompactRatio = 0.25
	// DefaultScan is the scan of a Float32 index.
	DefaultScan = ScanInt8
	// DefaultRescore is the candidates per result ScanInt8 rescores: the
	// start of the plateau measured on 100K static-embedder vectors
	// (recall@100 against the float32 scan 0.993 at 1, 1.000 at 2, 3
	// and 4; recall@10 1.000 from 12 candidates; BENCHMARKS.md). Each
	// candidate costs one pread of its float32 row, about a microsecond.
	DefaultRescore = 2
	// DefaultQuickAbove is the rows a search of an Int8Rescore index
	// must scan to take the 4-bit pass first (quick.go). The pass saves
	// about 40% of the scan's memory traffic but adds a fixed cost (the
	// int8 rows of its best read by pread, a larger selection): it cost
	// CPU at 83K rows and was about even at 784K, where the querying
	// process kept 70 MB less resident (BENCHMARKS.md, "The 1M vector
	// scan: a 4-bit first pass"). Set near that break-even.
	DefaultQuickAbove = 500_000
	// DefaultQuick is the rows per int8 candidate the 4-bit pass hands
	// to the int8 ranking: on the static embedder's vectors of 1M
	// records the int8 scan's best 200 (the engine's candidates for k
	// 100) were 0.9988 among the 4-bit pass's best 600, 0.9998 among
	// its best 1000; their best 100 all among its best 600
	// (BENCHMARKS.md). Each row ranked costs a pread of its 112-byte
	// int8 row, about a microsecond; QuickMargin stops before the last.
	DefaultQuick = 4
	// DefaultPartitionAbove is the live rows at Open from which an index
	// with a q4 file partitions it (ivf.go): an unfiltered search then
	// scans the q4 rows of the lists nearest to the query only.
	DefaultPartitionAbove = 500_000
	// DefaultListRows is the rows per list a partition is built with:
	// on the 1M peers store (783,968 rows) lists of 250 rows found the
	// exact top 10 far more often than lists of 1000 for the same rows
	// scanned (0.9955 against 0.977 at a third of the rows;
	// BENCHMARKS.md).
	DefaultListRows = 250
	// DefaultProbes is the lists an unfiltered search of a partitioned
	// index scans: 12% of the 1M peers store's 3,138 lists, where
	// recall@10 against the exact scan was 0.991 (0.9805 at 256, 0.996
	// at 512; BENCHMARKS.md).
	DefaultProbes = 384
	// DefaultInt8PartitionAbove is the live rows at Open from which an
	// Int8Rescore index without a q4 file partitions its int8 rows
	// (ivf.go, the "ivf8" file): an unfiltered search then scans the
	// int8 rows of the lists nearest to the query only. Set where the
	// partition, at Int8ListRows and Int8Probes, costs clearly less CPU
	// than the scan of every row: on the peers store's vectors, CPU a
	// search against the int8 scan 1.05 at 60,000 rows, 0.94 at
	// 70,000, 0.73 at 82,734 (BENCHMARKS.md, branch vec9).
	DefaultInt8PartitionAbove = 75_000
	// DefaultInt8ListRows is the rows per list of a partition of the
	// int8 rows.
	DefaultInt8ListRows = 125
	// DefaultInt8Probes is the lists an unfiltered search of an index
	// whose int8 rows are partitioned scans: on the 100K peers store's
	// vectors (82,734 rows, 664 lists of about 125) recall@10 against
	// the exact scan, after the rescoring, was 0.9985 for the peers
	// workload's queries (200 candidates) and 0.997 for the scale
	// benchmark's recall queries (64 candidates), scanning 48% of the
	// rows; 240 probes gave 0.996 and 0.992, 280 0.9965 and 0.995
	// (BENCHMARKS.md, branch vec9). A larger partition probes a fifth of
	// its lists when that is more.
	DefaultInt8Probes = 320
)

// Options configure an Index. Dims is required, so a nil *Options is
// refused; zero fields take their defaults.
type Options struct {
	// Dims is the length of every vector. Required, > 0.
	Dims int
	// Format is the row format of a new index. Default DefaultFormat.
	Format Format
	// KeepFormat opens an existing index in the format it was created
	// with, whatever Format says (Format then applies to a new index
	// only); without it another format fails with ErrIncompatible.
	// Default false.
	KeepFormat bool
	// Scan is how a Float32 index is scanned; an Int8 index ignores it.
	// ScanInt8 keeps a third file (about a quarter of the matrix); with
	// ScanFloat32 a writable Open removes it. Default DefaultScan.
	Scan Scan
	// Rescore is the candidates per result, in [1, 1024], that ScanInt8
	// rescores in float32: a search for k rescores max(Rescore*k,
	// RescoreMin) rows; an Int8Rescore index's RescoreCandidates asks
	// its caller to rescore as many. Default DefaultRescore.
	Rescore int
	// QuickAbove is the rows, at least, a search of an Int8Rescore index
	// scans for it to rank them with the 4-bit pass first (a file "q4"
	// of 4-bit rows, 64 bytes a row at 100 dims; see quick.go) and the
	// int8 rows of that pass's best only; an index with fewer live rows
	// at Open keeps no q4 file. Negative: never. Other formats, and
	// dims above 1015, ignore it. Default DefaultQuickAbove.
	QuickAbove int
	// Quick is the rows, per int8 candidate asked for, in [1, 1024],
	// that the 4-bit pass keeps for the int8 ranking: a search for c
	// candidates ranks max(Quick*c, QuickMin) int8 rows. Default
	// DefaultQuick.
	Quick int
	// PartitionAbove is the live rows, at least, that an index with a q4
	// file (QuickAbove) holds at Open for it to keep the partition of
	// the q4 rows (a file "ivf"; see ivf.go): an unfiltered search of
	// every row then scans only the rows of the Probes lists whose
	// centroids are nearest to the query, and the rows appended or
	// rewritten since the partition was built. A writable Open that
	// must (re)build it does so in the background and returns; until
	// the build is installed (Index.Partitioned) every row is scanned.
	// Filtered searches probe the same lists, then more, nearest first,
	// until more change none of their best; those whose filter passes
	// few rows scan every row. Negative: never. Default
	// DefaultPartitionAbove.
	PartitionAbove int
	// ListRows is the rows per list, in [16, 1<<20], a partition is
	// built with (live rows / ListRows lists, at most 65536). Default
	// DefaultListRows.
	ListRows int
	// Probes is the lists, in [1, 65536], a search of a partitioned
	// index scans (more when their rows are fewer than 4 times the rows
	// the 4-bit pass keeps; a filtered one widens). Default
	// DefaultProbes.
	Probes int
	// Int8PartitionAbove is the live rows, at least, that an
	// Int8Rescore index without a q4 file (fewer live rows than
	// QuickAbove) holds at Open for it to keep the partition of its int8
	// rows (a file "ivf8": the int8 rows again, in list order): an
	// unfiltered search of every row then scans only the int8 rows of
	// the Int8Probes lists whose centroids are nearest to the query, and
	// the rows appended or rewritten since the partition was built, and
	// hands them to the caller's rescoring as the scan of every row
	// would. Built in the background as the partition of the q4 rows
	// (PartitionAbove), with the same recovery. Filtered searches, and
	// SearchAfter, scan every row. Negative: never. Default
	// DefaultInt8PartitionAbove.
	Int8PartitionAbove int
	// Int8ListRows is the rows per list, in [16, 1<<20], a partition of
	// the int8 rows is built with. Default DefaultInt8ListRows.
	Int8ListRows int
	// Int8Probes is the lists, in [1, 65536], an unfiltered search
	// scans through the partition of the int8 rows (more when they are
	// fewer than a fifth of the lists, or their rows fewer than 4 times
	// the candidates asked for). Default
	// DefaultInt8Probes.
	Int8Probes int
	// CompactRatio is the share of dead (deleted) rows, in (0, 1], above
	// which Apply rewrites the files without them. Default
	// DefaultCompactRatio; 1 never compacts.
	CompactRatio float64
	// ReadOnly opens the files for reading only: Apply and Compact fail
	// with ErrReadOnly, Save and Close write nothing, and a missing index
	// is an error instead of being created. Default false.
	ReadOnly bool
	// NoBackgroundBuild keeps a writable Open (and a compaction) from
	// starting the build of a partition it finds missing or stale
	// (PartitionAbove, Int8PartitionAbove): searches scan every row
	// until FinishBuilds builds it, or an Open without this option does.
	// For a process that holds the index for one command: Close would
	// stop the build before it ends, after it took CPU and memory from
	// the command's searches. Default false.
	NoBackgroundBuild bool
	// SkipVerify skips the checksum of the rows at Open (it reads both
	// files once: about 4 ms per 100K 100-d rows from the page cache).
	// The int8 companion's rows are checked against their slots either
	// way (a few ms per 100K rows), since the companion is never synced.
	// Default false.
	SkipVerify bool
}

func (o *Options) withDefaults() (Options, error) {
	if o == nil {
		return Options{}, fmt.Errorf("%w: Dims is required", ErrOptions)
	}
	c := *o
	if c.Format == 0 {
		c.Format = DefaultFormat
	}
	if c.Scan == 0 {
		c.Scan = DefaultScan
	}
	if c.Rescore == 0 {
		c.Rescore = DefaultRescore
	}
	if c.CompactRatio == 0 {
		c.CompactRatio = DefaultCompactRatio
	}
	if c.QuickAbove == 0 {
		c.QuickAbove = DefaultQuickAbove
	}
	if c.Quick == 0 {
		c.Quick = DefaultQuick
	}
	if c.PartitionAbove == 0 {
		c.PartitionAbove = DefaultPartitionAbove
	}
	if c.ListRows == 0 {
		c.ListRows = DefaultListRows
	}
	if c.Probes == 0 {
		c.Probes = DefaultProbes
	}
	if c.Int8PartitionAbove == 0 {
		c.Int8PartitionAbove = DefaultInt8PartitionAbove
	}
	if c.Int8ListRows == 0 {
		c.Int8ListRows = DefaultInt8ListRows
	}
	if c.Int8Probes == 0 {
		c.Int8Probes = DefaultInt8Probes
	}
	switch {
	case c.Dims <= 0 || c.Dims > 1<<16:
		return c, fmt.Errorf("%w: Dims %d outside [1, 65536]", ErrOptions, c.Dims)
	case !c.Format.valid():
		return c, fmt.Errorf("%w: unknown format %d", ErrOptions, c.Format)
	case c.Scan != ScanInt8 && c.Scan != ScanFloat32:
		return c, fmt.Errorf("%w: unknown scan %d", ErrOptions, c.Scan)
	case c.Rescore < 1 || c.Rescore > 1024:
		return c, fmt.Errorf("%w: Rescore %d outside [1, 1024]", ErrOptions, c.Rescore)
	case c.Quick < 1 || c.Quick > 1024:
		return c, fmt.Errorf("%w: Quick %d outside [1, 1024]", ErrOptions, c.Quick)
	case c.ListRows < 16 || c.ListRows > 1<<20:
		return c, fmt.Errorf("%w: ListRows %d outside [16, 1048576]", ErrOptions, c.ListRows)
	case c.Probes < 1 || c.Probes > 1<<16:
		return c, fmt.Errorf("%w: Probes %d outside [1, 65536]", ErrOptions, c.Probes)
	case c.Int8ListRows < 16 || c.Int8ListRows > 1<<20:
		return c, fmt.Errorf("%w: Int8ListRows %d outside [16, 1048576]", ErrOptions, c.Int8ListRows)
	case c.Int8Probes < 1 || c.Int8Probes > 1<<16:
		return c, fmt.Errorf("%w: Int8Probes %d outside [1, 65536]", ErrOptions, c.Int8Probes)
	case !(c.CompactRatio > 0 && c.CompactRatio <= 1):
		return c, fmt.Errorf("%w: CompactRatio %v must be in (0, 1]", ErrOptions, c.CompactRatio)
	}
	return c, nil
}
