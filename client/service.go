package client

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hmo-dev/hmo/api"
)

// Search implements api.Service.
func (c *Client) Search(ctx context.Context, req api.SearchRequest) (resp api.SearchResponse, err error) {
	err = c.do(ctx, http.MethodPost, "/v1/search", req, &resp, func(s api.Service) (err error) {
		resp, err = s.Search(ctx, req)
		return err
	})
	return resp, err
}

// Get implements api.Service.
func (c *Client) Get(ctx context.Context, req api.GetRequest) (resp api.GetResponse, err error) {
	err = c.do(ctx, http.MethodPost, "/v1/get", req, &resp, func(s api.Service) (err error) {
		resp, err = s.Get(ctx, req)
		return err
	})
	return resp, err
}

// Add implements api.Service.
func (c *Client) Add(ctx context.Context, req api.AddRequest) (resp api.AddResponse, err error) {
	err = c.do(ctx, http.MethodPost, "/v1/add", req, &resp, func(s api.Service) (err error) {
		resp, err = s.Add(ctx, req)
		return err
	})
	return resp, err
}

// Update implements api.Service.
func (c *Client) Update(ctx context.Context, req api.UpdateRequest) (resp api.UpdateResponse, err error) {
	err = c.do(ctx, http.MethodPost, "/v1/update", req, &resp, func(s api.Service) (err error) {
		resp, err = s.Update(ctx, req)
		return err
	})
	return resp, err
}

// Delete implements api.Service.
func (c *Client) Delete(ctx context.Context, req api.DeleteRequest) (resp api.DeleteResponse, err error) {
	err = c.do(ctx, http.MethodPost, "/v1/delete", req, &resp, func(s api.Service) (err error) {
		resp, err = s.Delete(ctx, req)
		return err
	})
	return resp, err
}

// List implements api.Service.
func (c *Client) List(ctx context.Context, req api.ListRequest) (resp api.ListResponse, err error) {
	err = c.do(ctx, http.MethodPost, "/v1/list", req, &resp, func(s api.Service) (err error) {
		resp, err = s.List(ctx, req)
		return err
	})
	return resp, err
}

// Context implements api.Service.
func (c *Client) Context(ctx context.Context, req api.ContextRequest) (resp api.ContextResponse, err error) {
	err = c.do(ctx, http.MethodPost, "/v1/context", req, &resp, func(s api.Service) (err error) {
		resp, err = s.Context(ctx, req)
		return err
	})
	return resp, err
}

// Stats implements api.Service.
func (c *Client) Stats(ctx context.Context) (resp api.StatsResponse, err error) {
	err = c.do(ctx, http.MethodGet, "/v1/stats", nil, &resp, func(s api.Service) (err error) {
		resp, err = s.Stats(ctx)
		return err
	})
	return resp, err
}

// Persona implements api.PersonaSource.
func (c *Client) Persona(ctx context.Context) (resp api.PersonaResponse, err error) {
	err = c.do(ctx, http.MethodGet, "/v1/persona", nil, &resp, func(s api.Service) (err error) {
		ps, ok := s.(api.PersonaSource)
		if !ok {
			return fmt.Errorf("%w: this store cannot describe its persona", api.ErrUnavailable)
		}
		resp, err = ps.Persona(ctx)
		return err
	})
	return resp, err
}
