package client

import (
	"context"
	"net/http"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/server"
)

// UILogin asks the daemon for a one-time login link into its memory
// browser, starting the daemon when Options.Start allows. The page needs
// the daemon: there is no fallback to a store opened here.
func (c *Client) UILogin(ctx context.Context) (resp server.UILogin, err error) {
	err = c.do(ctx, http.MethodPost, "/v1/ui/login", nil, &resp, func(api.Service) error { return ErrNoDaemon })
	return resp, err
}
