package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/server"
)

// Defaults for Options.
const (
	DefaultStartTimeout = 8 * time.Second // wait for a daemon we started
	DefaultPoll         = 25 * time.Millisecond
	maxResponseBytes    = 16 << 20 // far above any response the API sends
)

// Options configure a Client. Dir is required.
type Options struct {
	// Dir is the store directory.
	Dir string
	// Start starts a daemon for Dir in the background and returns once it
	// is launched (not ready). Nil: never start one.
	Start func(ctx context.Context) error
	// StartTimeout bounds the wait for a started daemon to answer.
	// Default DefaultStartTimeout.
	StartTimeout time.Duration
	// OpenLocal opens the store directly; the client closes it after each
	// call. Nil: no fallback, calls fail with ErrNoDaemon.
	OpenLocal func() (*engine.Engine, error)
	// Poll is how often a starting daemon is probed. Default DefaultPoll.
	Poll time.Duration
}

// Client is an api.Service over the daemon, with the fallbacks of its
// Options. It is safe for concurrent use.
type Client struct {
	opts Options

	startMu sync.Mutex // serialises daemon starts in this process

	mu   sync.Mutex // guards conn
	conn *conn      // nil until a daemon was found
}

var _ api.Service = (*Client)(nil)

// conn is how to reach one daemon.
type conn struct {
	hc    *http.Client
	base  string
	token string
	pid   int
}

// New returns a Client. It does not connect until the first call.
func New(opts *Options) (*Client, error) {
	if opts == nil || opts.Dir == "" {
		return nil, errors.New("client: Options.Dir is required")
	}
	o := *opts
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	o.Dir = abs
	if o.StartTimeout == 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.Poll == 0 {
		o.Poll = DefaultPoll
	}
	return &Client{opts: o}, nil
}

// Close drops idle connections. The daemon keeps running.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		c.conn.hc.CloseIdleConnections()
		c.conn = nil
	}
	return nil
}

// Connect finds a running daemon, or starts one when Options.Start is
// set, waiting at most until ctx ends or StartTimeout passes. It returns
// the daemon's pid.
func (c *Client) Connect(ctx context.Context) (int, error) {
	cn, err := c.connect(ctx)
	if err != nil {
		return 0, err
	}
	return cn.pid, nil
}

func (c *Client) connect(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	if cn != nil {
		return cn, nil
	}
	cn, err := c.find(ctx)
	if err == nil {
		return c.keep(cn), nil
	}
	if c.opts.Start == nil {
		if errors.Is(err, ErrImpostor) || errors.Is(err, server.ErrUntrusted) {
			return nil, fmt.Errorf("%w: %w", ErrNoDaemon, err)
		}
		return nil, ErrNoDaemon
	}
	return c.start(ctx)
}

func (c *Client) keep(cn *conn) *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conn = cn
	return cn
}

// forget drops cn after it failed, so the next call looks again.
func (c *Client) forget(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == cn {
		c.conn.hc.CloseIdleConnections()
		c.conn = nil
	}
}

// find reads serve.json and the token, and checks that the daemon
// answers and proves it holds the token (an HMAC of a fresh nonce, bound
// to the address dialled) before anything else is sent to it; on the
// socket, the server must also run as this user.
func (c *Client) find(ctx context.Context) (*conn, error) {
	info, err := server.ReadInfo(c.opts.Dir)
	if err != nil {
		return nil, err
	}
	tok, err := server.ReadToken(c.opts.Dir)
	if err != nil {
		return nil, err
	}
	cn := &conn{token: tok, base: "http://" + info.Addr, hc: &http.Client{}}
	addr := info.Addr
	if info.Socket != "" {
		sock := info.Socket
		cn.base, addr = "http://hmo", "unix"
		cn.hc.Transport = &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, "unix", sock)
				if err != nil {
					return nil, err
				}
				if err := checkPeer(c); err != nil {
					c.Close()
					return nil, err
				}
				return c, nil
			},
			MaxIdleConnsPerHost: 4,
		}
	} else if info.Addr == "" {
		return nil, fmt.Errorf("%w: %s names no address", ErrNoDaemon, server.InfoFile)
	}
	pid, err := cn.prove(ctx, addr)
	if err != nil {
		cn.hc.CloseIdleConnections()
		return nil, err
	}
	cn.pid = pid
	return cn, nil
}

// prove asks the daemon at addr for its health with a fresh nonce,
// without the token, and checks its proof of the token.
func (cn *conn) prove(ctx context.Context, addr string) (int, error) {
	nb := make([]byte, 32)
	if _, err := rand.Read(nb); err != nil {
		return 0, err
	}
	nonce := hex.EncodeToString(nb)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cn.base+"/v1/health", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set(server.ChallengeHeader, nonce)
	resp, err := cn.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var health struct {
		OK  bool `json:"ok"`
		PID int  `json:"pid"`
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&health)
	if resp.StatusCode != http.StatusOK || err != nil || !health.OK {
		return 0, fmt.Errorf("%w: health check: HTTP %d", ErrNoDaemon, resp.StatusCode)
	}
	if !server.VerifyProof(cn.token, nonce, addr, resp.Header.Get(server.ProofHeader)) {
		return 0, fmt.Errorf("%w (%s): it could not prove it holds the token; remove %s if the daemon is gone", ErrImpostor, addr, server.InfoFile)
	}
	return health.PID, nil
}

// start launches a daemon and waits for one (it or another) to answer.
func (c *Client) start(ctx context.Context) (*conn, error) {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	if cn, err := c.find(ctx); err == nil { // another call started it
		return c.keep(cn), nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	if err := c.opts.Start(ctx); err != nil {
		return nil, fmt.Errorf("%w: start daemon: %v", ErrNoDaemon, err)
	}
	t := time.NewTicker(c.opts.Poll)
	defer t.Stop()
	for {
		if cn, err := c.find(ctx); err == nil {
			return c.keep(cn), nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: started daemon did not answer: %v", ErrNoDaemon, ctx.Err())
		case <-t.C:
		}
	}
}

// call sends one request and decodes the response or the API error.
func (cn *conn) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, cn.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+cn.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cn.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode != http.StatusOK {
		ae := &api.Error{}
		if err := dec.Decode(ae); err != nil || ae.Code == "" {
			return fmt.Errorf("hmo daemon: HTTP %d", resp.StatusCode)
		}
		return ae
	}
	return dec.Decode(out)
}

// notSent reports whether err means the request never reached a daemon,
// so it is safe to retry even a write.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// do runs one operation on the daemon, starting it if allowed, and else
// on the store opened directly for this call.
func (c *Client) do(ctx context.Context, method, path string, in, out any, local func(api.Service) error) error {
	for attempt := 0; attempt < 2; attempt++ {
		cn, err := c.connect(ctx)
		if err != nil {
			break
		}
		err = cn.call(ctx, method, path, in, out)
		if err == nil || !notSent(err) {
			return err
		}
		c.forget(cn) // the daemon went away: look (or start) again
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.opts.OpenLocal == nil {
		return ErrNoDaemon
	}
	e, err := c.opts.OpenLocal()
	if err != nil {
		if errors.Is(err, engine.ErrLocked) {
			return fmt.Errorf("%w: %v", api.ErrUnavailable, err)
		}
		return err
	}
	err = local(api.NewLocal(e))
	return errors.Join(err, e.Close())
}
