package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/surety-ioa/surety/api"
)

// nodeClient talks to a node's HTTP API and turns problem+json answers into errors.
type nodeClient struct {
	base string
	http *http.Client
}

func newNodeClient(raw string) (*nodeClient, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("--node %q is not a URL like http://127.0.0.1:7746", raw)
	}
	return &nodeClient{base: strings.TrimRight(raw, "/"), http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// problem is the part of an RFC 9457 body the CLI shows.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// do sends a request and decodes a 2xx JSON answer into out (when not nil). A problem
// answer becomes an error carrying its title.
func (c *nodeClient) do(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	return c.doWithHeader(ctx, method, path, contentType, body, nil, out)
}

// doWithHeader is do with extra request headers.
func (c *nodeClient) doWithHeader(ctx context.Context, method, path, contentType string, body []byte, header map[string]string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach node %s: %w", c.base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("read answer from %s: %w", c.base, err)
	}
	if resp.StatusCode >= 300 {
		var p problem
		if json.Unmarshal(data, &p) == nil && p.Title != "" {
			msg := p.Title
			if p.Detail != "" {
				msg += ": " + p.Detail
			}
			return &nodeError{Status: resp.StatusCode, Type: p.Type, Reason: p.Reason, Msg: msg}
		}
		return &nodeError{Status: resp.StatusCode, Msg: strings.TrimSpace(string(data))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("node %s answered something unexpected: %w", c.base, err)
	}
	return nil
}

// nodeError is a refusal from the node.
type nodeError struct {
	Status int
	Type   string // the problem type URI, when the node sent one
	Reason string
	Msg    string
}

// settled reports whether the node answered a write for good: not a 5xx (the chain or the
// node failed, and a retry under the same Idempotency-Key may still succeed or wait for the
// transaction) and not request-in-progress (the first request is still being worked on).
func (e *nodeError) settled() bool {
	return e.Status < 500 && !strings.HasSuffix(e.Type, "/request-in-progress")
}

// Error reads like "node refused (409): Envelope refused: replayed".
func (e *nodeError) Error() string { return fmt.Sprintf("node refused (%d): %s", e.Status, e.Msg) }

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// dialNode connects to the node at nodeURL and reads its /v1/info (chain, contracts, DID).
func dialNode(ctx context.Context, nodeURL string) (*nodeClient, api.Info, error) {
	var info api.Info
	c, err := newNodeClient(nodeURL)
	if err != nil {
		return nil, info, err
	}
	if err := c.do(ctx, "GET", "/v1/info", "", nil, &info); err != nil {
		return nil, info, err
	}
	return c, info, nil
}
