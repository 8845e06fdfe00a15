package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// boltDB is the store's bbolt database seen through the engine's
// boundary: bbolt panics on damaged pages (assertion failures, faults
// on a truncated mapping); View and Update turn such a panic into
// ErrDamaged naming the store and what to do. bbolt rolls the
// transaction back before the panic leaves it, so the DB stays usable
// for the pages that can still be read.
type boltDB struct {
	*bolt.DB
	dir      string
	readOnly bool // Update fails with ErrReadOnly

	// The query path's pread reads (pageReader): the store file opened
	// read-only (by Open, beside bbolt; else at the first read), and
	// the pages kept.
	preadOnce sync.Once
	pread     *os.File // nil when it could not be opened: bbolt reads
	preadFd   int      // pread's descriptor, -1 when it has none
	pages     pageCache
}

// preadFile returns the store file opened read-only for pageReader, nil
// when it cannot be opened.
func (d *boltDB) preadFile() *os.File {
	d.preadOnce.Do(func() {
		d.preadFd = -1
		if f, err := os.Open(d.DB.Path()); err == nil {
			d.pread = f
			if rc, err := f.SyscallConn(); err == nil {
				_ = rc.Control(func(fd uintptr) { d.preadFd = int(fd) })
			}
		}
	})
	return d.pread
}

// Close closes bbolt and the file pageReader reads.
func (d *boltDB) Close() error {
	err := d.DB.Close()
	d.closePread()
	return err
}

// closePread closes the file pageReader reads, if it was opened, and
// releases the pages kept; no reader may be in use.
func (d *boltDB) closePread() {
	d.preadOnce.Do(func() {}) // none opens it after this
	if d.pread != nil {
		d.pread.Close()
	}
	d.pages.release()
}

// View is bolt.DB.View with damage recovered as ErrDamaged.
func (d *boltDB) View(fn func(*bolt.Tx) error) (err error) {
	defer recoverDamage(d.dir, &err)()
	return d.DB.View(fn)
}

// Update is bolt.DB.Update with damage recovered as ErrDamaged.
func (d *boltDB) Update(fn func(*bolt.Tx) error) (err error) {
	if d.readOnly {
		return ErrReadOnly
	}
	defer recoverDamage(d.dir, &err)()
	return d.DB.Update(func(tx *bolt.Tx) error {
		fillAppended(tx)
		return fn(tx)
	})
}

// recoverDamage makes faults on the mapped file panics (instead of a
// crash) for the calling goroutine, and returns the deferred function
// that turns a panic into ErrDamaged and restores the setting. Use as
// defer recoverDamage(dir, &err)().
func recoverDamage(dir string, err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			*err = damaged(dir, r)
		}
	}
}

// damaged is the error of a damaged store file.
func damaged(dir string, cause any) error {
	return fmt.Errorf("%w: %s: %v — run 'hmo doctor --dir %s' to check it, and 'hmo salvage --dir %s NEWDIR' to copy every readable record into a new store",
		ErrDamaged, filepath.Join(dir, DBFile), cause, dir, dir)
}

// checkDBFile refuses a store file that cannot be a store: empty (a
// store file is never shorter than its four header pages) or not a
// regular file.
func checkDBFile(dir string) error {
	path := filepath.Join(dir, DBFile)
	fi, err := os.Stat(path)
	if err != nil {
		return nil // missing: the caller decides
	}
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file", ErrDamaged, path)
	case fi.Size() == 0:
		return fmt.Errorf("%w: %s is empty (0 bytes): the store was truncated or its creation interrupted — restore it from a backup, or move it away and run 'hmo init --dir %s'",
			ErrDamaged, path, dir)
	}
	return nil
}

// CheckReport is what Check found.
type CheckReport struct {
	// Problems are bbolt's consistency errors (tx.Check) and records that
	// cannot be decoded, one line each.
	Problems []string
	// Records is how many records could be read.
	Records int
	// Rebuilds are the index rebuilds the store has noted (see
	// Rebuilds).
	Rebuilds []Rebuild
}

// Check verifies the store file in dir without opening the store for
// writing: bbolt's page consistency check (tx.Check) and a decode of
// every record. It does not need the embedder. A store too damaged to
// open gives an error wrapping ErrDamaged.
func Check(dir string, opts *CheckOptions) (rep CheckReport, err error) {
	d, err := openReadOnly(dir, opts)
	if err != nil {
		return rep, err
	}
	defer d.Close()
	err = d.View(func(tx *bolt.Tx) error {
		// bbolt checks the pages in a goroutine of its own, where a read
		// past the end of a truncated file is a fault that no recover
		// reaches: a file shorter than its pages is reported instead.
		fi, err := os.Stat(filepath.Join(dir, DBFile))
		if err != nil {
			return err
		}
		if fi.Size() < tx.Size() {
			rep.Problems = append(rep.Problems, fmt.Sprintf("truncated: the file is %d bytes, its pages reach %d", fi.Size(), tx.Size()))
			return nil
		}
		for cerr := range tx.Check() {
			rep.Problems = append(rep.Problems, cerr.Error())
			if len(rep.Problems) >= 100 {
				rep.Problems = append(rep.Problems, "(more problems not listed)")
				break
			}
		}
		return nil
	})
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	n, bad := 0, 0
	_ = scanRecords(d, func(id uint64, r *Record, rerr error) {
		if rerr != nil {
			bad++
			if bad <= 20 {
				rep.Problems = append(rep.Problems, fmt.Sprintf("record %d: %v", id, rerr))
			}
			return
		}
		n++
	}, &rep.Problems)
	rep.Records = n
	rep.Rebuilds, _ = readRebuilds(d)
	return rep, nil
}

// CheckOptions configure Check and Salvage. Nil means the defaults.
type CheckOptions struct {
	// Timeout bounds the wait for the store's lock. Default 1s.
	Timeout time.Duration
}

func (o *CheckOptions) timeout() time.Duration {
	if o == nil || o.Timeout <= 0 {
		return time.Second
	}
	return o.Timeout
}

// scanRecords calls fn for every record id the store ever assigned (1
// to the records bucket's sequence), looking each up from the root so
// that a damaged page costs only the records on it: ids are read 256
// per transaction, and a chunk that fails is read again one id per
// transaction. Missing ids (deleted records) are skipped. A failure to
// reach the bucket at all is appended to problems and returned.
func scanRecords(d *boltDB, fn func(id uint64, r *Record, err error), problems *[]string) error {
	var last uint64
	err := d.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		if b == nil {
			return fmt.Errorf("%w: no records bucket", ErrDamaged)
		}
		last = b.Sequence()
		return nil
	})
	if err != nil {
		*problems = append(*problems, "records: "+err.Error())
		return err
	}
	type got struct {
		id  uint64
		r   Record
		err error
	}
	read := func(from, to uint64) ([]got, error) {
		var out []got
		err := d.View(func(tx *bolt.Tx) error {
			for id := from; id <= to; id++ {
				r, err := getRecord(tx, id)
				if errors.Is(err, ErrNotFound) {
					continue
				}
				out = append(out, got{id, r, err})
			}
			return nil
		})
		return out, err
	}
	const chunk = 256
	for from := uint64(1); from <= last; from += chunk {
		to := min(from+chunk-1, last)
		rs, err := read(from, to)
		if err != nil { // a damaged page: one id at a time
			rs = rs[:0]
			for id := from; id <= to; id++ {
				one, err := read(id, id)
				if err != nil {
					one = []got{{id: id, err: err}}
				}
				rs = append(rs, one...)
			}
		}
		for i := range rs {
			fn(rs[i].id, &rs[i].r, rs[i].err)
		}
	}
	return nil
}

// openErr wraps an error of bolt.Open.
func openErr(dir string, err error) error {
	if errors.Is(err, ErrDamaged) {
		return err
	}
	if errors.Is(err, bolterrors.ErrTimeout) {
		return fmt.Errorf("%w: %s", ErrLocked, dir)
	}
	return fmt.Errorf("hmo: open %s: %w — if the file is damaged, 'hmo salvage --dir %s NEWDIR' copies what can be read", dir, err, dir)
}

// openReadOnly opens the store file in dir read-only (shared lock).
func openReadOnly(dir string, opts *CheckOptions) (d *boltDB, err error) {
	if err := checkDBFile(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, DBFile)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: no store in %s", ErrNotFound, dir)
	}
	db, err := openBoltSafe(dir, &bolt.Options{ReadOnly: true, Timeout: opts.timeout()})
	if err != nil {
		return nil, openErr(dir, err)
	}
	return &boltDB{DB: db, dir: dir}, nil
}

// SalvageReport is what Salvage copied.
type SalvageReport struct {
	Copied     int // current records copied into the new store
	History    int // older versions (replaced by Update) left out
	Unreadable int // records that could not be read
	// Recovered counts the copied records that the store's index pages
	// could not lead to (a damaged bucket list or branch page) and that
	// were read from their own pages instead.
	Recovered int
	// Problems name what could not be read, a few lines.
	Problems []string
}

// Salvage copies every readable current record of the store in src,
// which may be damaged, into dst (a newly opened store), in id order so
// sessions keep their order. Older versions replaced by Update are not
// copied. A record whose lookup fails, or every record when the records
// bucket cannot be reached, is read from the file's live leaf pages
// directly (rawRecords) when its own page is intact. The indexes of dst
// are built from the copies; src is only read.
func Salvage(ctx context.Context, src string, dst *Engine, opts *CheckOptions) (rep SalvageReport, err error) {
	d, err := openReadOnly(src, opts)
	if err != nil {
		return rep, err
	}
	defer d.Close()
	// The file's pages are read directly only once a lookup fails: a
	// store whose index pages are intact is read once.
	var raw *rawSource
	rawRead := false
	pages := func() *rawSource {
		if !rawRead {
			rawRead = true
			var err error
			if raw, err = openRawRecords(filepath.Join(src, DBFile)); err != nil {
				rep.Problems = append(rep.Problems, "reading the records' pages directly: "+err.Error())
			}
		}
		return raw
	}
	defer func() { raw.close() }()
	var batch []Input
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if _, err := dst.Remember(ctx, batch...); err != nil {
			return fmt.Errorf("hmo: salvage: after %d records: %w", rep.Copied, err)
		}
		rep.Copied += len(batch)
		batch = batch[:0]
		return nil
	}
	var werr error
	add := func(id uint64, r *Record, rerr error) {
		if werr != nil {
			return
		}
		if rerr != nil {
			if got, ok := pages().get(id); ok {
				r, rerr = got, nil
				rep.Recovered++
			}
		}
		if rerr == nil {
			rerr = dst.Validate(&Input{Scope: r.Scope, Session: r.Session, Role: r.Role, Time: r.Time, Text: r.Text, Sources: r.Sources})
		}
		switch {
		case rerr != nil:
			rep.Unreadable++
			if len(rep.Problems) < 20 {
				rep.Problems = append(rep.Problems, fmt.Sprintf("record %d: %v", id, rerr))
			}
		case r.SupersededBy != 0:
			rep.History++
		default:
			batch = append(batch, Input{Scope: r.Scope, Session: r.Session, Role: r.Role, Time: r.Time, Text: r.Text, Sources: r.Sources})
			if len(batch) == 1000 {
				werr = flush()
			}
		}
	}
	serr := scanRecords(d, add, &rep.Problems)
	if serr != nil {
		// The records bucket cannot be reached: every record on a live
		// leaf page, in id order.
		if pages() == nil {
			rep.Unreadable++
		}
		for _, rr := range raw.all() {
			add(rr.id, nil, ErrDamaged)
		}
	}
	if werr != nil {
		return rep, werr
	}
	if err := flush(); err != nil {
		return rep, err
	}
	return rep, nil
}

// rawSource reads records found by rawRecords. A nil *rawSource has none.
type rawSource struct {
	f    *os.File
	recs []rawRecord
}

// openRawRecords finds the records on the live leaf pages of the bbolt
// file at path.
func openRawRecords(path string) (*rawSource, error) {
	recs, err := rawRecords(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &rawSource{f: f, recs: recs}, nil
}

func (s *rawSource) all() []rawRecord {
	if s == nil {
		return nil
	}
	return s.recs
}

// get reads and decodes the record with the id, if one was found.
func (s *rawSource) get(id uint64) (*Record, bool) {
	if s == nil {
		return nil, false
	}
	i, ok := slices.BinarySearchFunc(s.recs, id, func(r rawRecord, id uint64) int { return cmp.Compare(r.id, id) })
	if !ok {
		return nil, false
	}
	b := make([]byte, s.recs[i].n)
	if _, err := s.f.ReadAt(b, s.recs[i].off); err != nil {
		return nil, false
	}
	r, err := decodeRecord(b)
	if err != nil || r.ID != id {
		return nil, false
	}
	return &r, true
}

func (s *rawSource) close() {
	if s != nil {
		s.f.Close()
	}
}

// openBoltSafe opens the store file of dir like openBolt; a panic of
// bbolt on damaged pages becomes ErrDamaged, and the file (with its
// lock) is closed.
func openBoltSafe(dir string, o *bolt.Options) (db *bolt.DB, err error) {
	var files []*os.File
	oc := *o
	oc.OpenFile = func(name string, flag int, mode os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, mode)
		if err == nil {
			files = append(files, f)
		}
		return f, err
	}
	defer func() {
		if err != nil {
			for _, f := range files {
				// bbolt leaves its file open, locked and mapped when it
				// panics: the mapping keeps the lock alive past Close, so
				// unlock first.
				unlockFile(f)
				f.Close()
			}
		}
	}()
	defer recoverDamage(dir, &err)()
	return openBolt(filepath.Join(dir, DBFile), &oc)
}
