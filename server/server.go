package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hmo-dev/hmo/api"
)

// Defaults for Options.
const (
	DefaultAddr         = "127.0.0.1:0" // loopback, any free port
	DefaultMaxBodyBytes = 8 << 20       // 8 MiB: MaxAddMemories texts of 64 KiB, with room
	DefaultIdleCheck    = time.Second   // how often idleness is checked
	// DefaultRelease is how long the server waits without a request
	// before it gives back the memory the service holds only as a cache.
	DefaultRelease = 30 * time.Second
	// DefaultReadTimeout bounds reading a whole request, body included:
	// a client that stops sending mid-request loses its connection.
	DefaultReadTimeout       = 30 * time.Second
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultIdleTimeout       = 60 * time.Second // keep-alive between requests
	shutdownGrace            = 10 * time.Second
	maxSocketPath            = 100 // sun_path holds 104-108 bytes depending on the system
)

// Options configure a Server. A nil *Options means the defaults.
type Options struct {
	// Dir is the store directory, where the token, the socket and the
	// daemon description live. Required.
	Dir string
	// Addr is the TCP address to listen on; it must be a loopback IP.
	// Default DefaultAddr. "-" means no TCP listener.
	Addr string
	// NoSocket leaves out the Unix socket. Default false.
	NoSocket bool
	// Idle shuts the server down after this long without a request (see
	// Done). Default 0: never.
	Idle time.Duration
	// MaxBodyBytes caps a request body in bytes. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Clock gives the current time, for idleness. Default time.Now.
	Clock func() time.Time
	// Release is how long without a request after which the server asks
	// the service to give back the memory it can read again later (the
	// store pages it mapped, api.MemoryReleaser) and returns the Go
	// heap's free pages to the system, once per idle spell. Default
	// DefaultRelease; negative: never.
	Release time.Duration
	// IdleCheck is how often idleness is checked. Default DefaultIdleCheck.
	IdleCheck time.Duration
	// Logger receives the server's log: each request at Debug (Warn when
	// refused for its token, Error for a server error), start, idleness
	// and stop at Info, errors of the HTTP server itself at Warn.
	// Default: nothing is logged.
	Logger *slog.Logger
	// ReadTimeout bounds reading a request, headers and body. Default
	// DefaultReadTimeout.
	ReadTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers. Default
	// DefaultReadHeaderTimeout (at most ReadTimeout).
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection without a request for
	// this long. Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// UI is the memory browser, mounted under /ui/ and reached with a
	// one-time code from POST /v1/ui/login. Default nil: no browser.
	UI UI
}

// UI is a browser front end (package ui) that the server mounts under
// /ui/. It does its own authentication: the bearer token stays with the
// CLI, which asks POST /v1/ui/login for a one-time code the page trades
// for a session.
type UI interface {
	http.Handler
	// LoginCode issues a single-use login code and says when it expires.
	LoginCode() (code string, expires time.Time, err error)
}

func (o *Options) withDefaults() (*Options, error) {
	c := Options{}
	if o != nil {
		c = *o
	}
	if c.Dir == "" {
		return nil, errors.New("server: Options.Dir is required")
	}
	// serve.json names the socket and the store with absolute paths, so
	// that clients from any working directory find this daemon.
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	c.Dir = abs
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.ReadHeaderTimeout == 0 {
		c.ReadHeaderTimeout = min(DefaultReadHeaderTimeout, c.ReadTimeout)
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.IdleCheck == 0 {
		c.IdleCheck = DefaultIdleCheck
	}
	if c.Release == 0 {
		c.Release = DefaultRelease
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Idle < 0 || c.MaxBodyBytes < 0 || c.IdleCheck < 0 || c.ReadTimeout < 0 || c.ReadHeaderTimeout < 0 || c.IdleTimeout < 0 {
		return nil, errors.New("server: negative option")
	}
	if c.Addr != "-" {
		if err := checkLoopback(c.Addr); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// checkLoopback accepts host:port with a loopback IP host.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("server: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: %q (use 127.0.0.1 or ::1)", ErrNotLoopback, addr)
	}
	return nil
}

// Server serves an api.Service over HTTP. Its methods are safe for
// concurrent use; Start is called once.
type Server struct {
	svc   api.Service
	opts  *Options
	token string
	pid   int
	http  *http.Server

	last     atomic.Int64 // unix nanoseconds of the last request's end
	inflight atomic.Int64

	mu        sync.Mutex // guards the fields below
	started   bool
	listeners []net.Listener
	info      Info

	done      chan struct{} // closed when the idle limit is reached
	doneOnce  sync.Once
	stop      chan struct{} // closed by Close: ends the idle watcher
	closeOnce sync.Once
	wg        sync.WaitGroup // serve loops and the idle watcher
}

// New returns a Server over svc. It loads or creates the token.
func New(svc api.Service, opts *Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := CheckDir(o.Dir); err != nil {
		return nil, err
	}
	tok, err := LoadOrCreateToken(o.Dir)
	if err != nil {
		return nil, err
	}
	s := &Server{svc: svc, opts: o, token: tok, pid: os.Getpid(), done: make(chan struct{}), stop: make(chan struct{})}
	s.http = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		IdleTimeout:       o.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
	}
	s.last.Store(o.Clock().UnixNano())
	return s, nil
}

// Handler is the API's HTTP handler, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.http.Handler }

// Addr is the TCP address listened on, empty before Start or without a
// TCP listener.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info.Addr
}

// Token is the bearer token.
func (s *Server) Token() string { return s.token }

// Start listens on the socket and the TCP address, serves in the
// background and writes the daemon description.
func (s *Server) Start() (Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return s.info, ErrStarted
	}
	s.started = true
	s.info = Info{PID: s.pid, Dir: s.opts.Dir, Started: s.opts.Clock().UTC()}
	if err := s.listen(); err != nil {
		s.closeListeners()
		return Info{}, err
	}
	for _, l := range s.listeners {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.http.Serve(l)
		}()
	}
	if s.opts.Idle > 0 || s.opts.Release > 0 {
		s.wg.Add(1)
		go s.watchIdle()
	}
	if err := writeInfo(s.opts.Dir, &s.info); err != nil {
		return s.info, err
	}
	s.opts.Logger.Info("serving", "pid", s.pid, "dir", s.opts.Dir, "socket", s.info.Socket, "addr", s.info.Addr)
	return s.info, nil
}

func (s *Server) listen() error {
	if !s.opts.NoSocket {
		path, err := socketPath(s.opts.Dir)
		if err != nil {
			return err
		}
		if path != "" {
			// The caller owns the store (its lock): a socket file left
			// there is a dead daemon's.
			if fi, err := os.Lstat(path); err == nil && fi.Mode().Type() == os.ModeSocket {
				os.Remove(path)
			}
			l, err := net.Listen("unix", path)
			if err != nil {
				return fmt.Errorf("server: listen %s: %w", path, err)
			}
			if err := os.Chmod(path, 0o600); err != nil {
				l.Close()
				return fmt.Errorf("server: socket mode: %w", err)
			}
			s.listeners = append(s.listeners, l)
			s.info.Socket = path
		}
	}
	if s.opts.Addr != "-" {
		l, err := net.Listen("tcp", s.opts.Addr)
		if err != nil {
			return fmt.Errorf("server: listen %s: %w", s.opts.Addr, err)
		}
		s.listeners = append(s.listeners, l)
		s.info.Addr = l.Addr().String()
		s.info.Port = l.Addr().(*net.TCPAddr).Port
	}
	if len(s.listeners) == 0 {
		return errors.New("server: no listener (socket path too long and TCP off)")
	}
	return nil
}

func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		l.Close()
	}
}

// track counts requests in flight, notes when the last one ended and logs
// each.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.last.Store(s.opts.Clock().UnixNano())
			s.inflight.Add(-1)
			level := slog.LevelDebug
			switch {
			case sw.status >= 500:
				level = slog.LevelError
			case sw.status == http.StatusUnauthorized:
				level = slog.LevelWarn
			}
			s.opts.Logger.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path,
				"status", sw.status, "duration", time.Since(start).Round(time.Microsecond))
		}()
		h.ServeHTTP(sw, r)
	})
}

// statusWriter remembers the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// watchIdle closes Done once no request has been served for Idle, and
// releases memory once per idle spell of Release.
func (s *Server) watchIdle() {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.IdleCheck)
	defer t.Stop()
	var released int64 // s.last at the last release
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if s.inflight.Load() != 0 {
				continue
			}
			last := s.last.Load()
			idle := s.opts.Clock().Sub(time.Unix(0, last))
			if s.opts.Idle > 0 && idle >= s.opts.Idle {
				s.opts.Logger.Info("idle", "for", s.opts.Idle)
				s.doneOnce.Do(func() { close(s.done) })
				return
			}
			if s.opts.Release > 0 && idle >= s.opts.Release && last != released {
				released = last
				s.release()
			}
		}
	}
}

// release gives back the service's cached memory and the Go heap's free
// pages.
func (s *Server) release() {
	if r, ok := s.svc.(api.MemoryReleaser); ok {
		if err := r.ReleaseMemory(); err != nil {
			s.opts.Logger.Warn("release memory", "err", err)
			return
		}
	}
	debug.FreeOSMemory()
	s.opts.Logger.Debug("released memory", "idle", s.opts.Release)
}

// Done is closed when the server has been idle for Options.Idle. The
// owner then calls Close.
func (s *Server) Done() <-chan struct{} { return s.done }

// Close stops listening, waits for requests in flight (up to a grace
// period), removes the socket and the daemon description, and waits for
// the server's goroutines. It is safe to call more than once.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.stop)
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		err = s.http.Shutdown(ctx)
		s.wg.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.info.Socket != "" {
			os.Remove(s.info.Socket)
		}
		removeInfo(s.opts.Dir, s.pid)
		s.opts.Logger.Info("stopped", "pid", s.pid)
	})
	return err
}
