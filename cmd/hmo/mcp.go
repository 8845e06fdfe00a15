package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/mcp"
	"github.com/hmo-dev/hmo/server"
)

func newMCPCmd(env *env) *cobra.Command {
	var sf storeFlags
	var httpAddr string
	var noDaemon bool
	cmd := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "MCP server on stdio (or streamable HTTP)",
		Long: `Serve the memory tools over MCP: on stdio (what agent hosts run), or over streamable
HTTP on a loopback address behind the store's bearer token. The hmo daemon is started
on demand unless --no-daemon.`,
		Example: `  hmo mcp
  hmo mcp --http 127.0.0.1:8765
  claude mcp add --scope user hmo -- hmo mcp`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCP(cmd.Context(), env, &sf, httpAddr, noDaemon)
		},
	}
	fs := cmd.Flags()
	sf.register(fs, withMode)
	fs.StringVar(&httpAddr, "http", "", "serve streamable HTTP on this loopback address (e.g. 127.0.0.1:8765) instead of stdio; needs the bearer token")
	fs.BoolVar(&noDaemon, "no-daemon", false, "do not start the hmo daemon; open the store directly for each call")
	return cmd
}

func runMCP(ctx context.Context, env *env, sf *storeFlags, httpAddr string, noDaemon bool) error {
	c, dir, err := sf.connect(env, connectOptions{autostart: !noDaemon, direct: true})
	if err != nil {
		return err
	}
	defer c.Close()
	srv := mcp.NewServer(c, &mcp.Options{Version: buildVersion()})
	exitGrace.Store(mcpShutdownWait + 3*time.Second) // calls in flight finish
	if httpAddr == "" {
		// Malformed lines get JSON-RPC errors; the session goes on.
		err := srv.Run(ctx, &mcp.StdioTransport{In: env.stdin, Out: env.stdout})
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	return serveMCPHTTP(ctx, env, srv, dir, httpAddr)
}

// serveMCPHTTP serves MCP over streamable HTTP on a loopback address,
// behind the store's bearer token, until ctx ends.
func serveMCPHTTP(ctx context.Context, env *env, srv *sdk.Server, dir, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return usageError{fmt.Sprintf("--http %q: want a loopback address such as 127.0.0.1:8765", addr)}
	}
	tok, err := server.LoadOrCreateToken(dir)
	if err != nil {
		return err
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: bearer(tok, mcp.CheckBodies(h, 0)), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: server.DefaultReadTimeout}
	fmt.Fprintf(env.stderr, "hmo mcp: streamable HTTP on http://%s (Authorization: Bearer <token in %s/%s>)\n", l.Addr(), dir, server.TokenFile)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	// Clients may hold event streams open (GET): give requests in flight
	// a moment, then close what is left. Stopping is not a failure.
	sctx, cancel := context.WithTimeout(context.Background(), mcpShutdownWait)
	defer cancel()
	if err = hs.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		err = hs.Close()
	}
	<-done
	return err
}

// mcpShutdownWait bounds the graceful part of stopping the HTTP server.
const mcpShutdownWait = 2 * time.Second

// bearer requires the token on every request.
func bearer(tok string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+tok)) != 1 {
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
