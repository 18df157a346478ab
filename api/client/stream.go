package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/surety-ioa/surety/api/wire"
)

// streamRetry is how long StreamGroup waits before it reconnects to a node that went away.
const streamRetry = time.Second

// StreamGroup follows GET /v1/groups/{id}/stream (server-sent events) from seq after, calling
// show with each envelope in order, and reconnects from the last one seen when the connection
// drops, until ctx ends (then it returns nil) or show fails.
func (c *Client) StreamGroup(ctx context.Context, group string, after int64, show func(*wire.GroupEnvelope) error) error {
	hc := &http.Client{Transport: c.http.Transport} // no timeout: the stream stays open
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/groups/"+esc(group)+"/stream?after="+strconv.FormatInt(after, 10), nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return fmt.Errorf("cannot reach node %s: %w", c.base, err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), wire.MaxEnvelopeSize*2)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ge wire.GroupEnvelope
			if err := json.Unmarshal([]byte(data), &ge); err != nil {
				resp.Body.Close()
				return fmt.Errorf("node %s sent an event that is not an envelope: %w", c.base, err)
			}
			after = ge.Seq
			if err := show(&ge); err != nil {
				resp.Body.Close()
				return err
			}
		}
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(streamRetry): // the node went away: try again
		}
	}
}

// SearchAgentsStream is GET /v1/agents?q=&capability=&limit= followed as server-sent events:
// show is called with the node's answer from its index at once (Discovering set when the node
// is looking the capability up in the network), then with the whole answer again, merged and
// ranked, each time that lookup changed it. It returns nil when the node says done (within
// seconds: the lookup is bounded), ctx's error when ctx ends first, and show's when it fails;
// an error when the node does not say done within SearchStreamTimeout
// (WithSearchStreamTimeout) or sends an event larger than an answer may be.
// A node that answers with plain JSON gives one call.
func (c *Client) SearchAgentsStream(ctx context.Context, q url.Values, show func(*wire.AgentList) error) error {
	hc := &http.Client{Transport: c.http.Transport} // the stream's own bound: ctx and the one below
	bound := c.searchStream
	if bound <= 0 {
		bound = SearchStreamTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/agents?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream, application/json;q=0.5")
	resp, err := hc.Do(req)
	if err != nil {
		if err := parent.Err(); err != nil {
			return err
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("cannot reach node %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		if err != nil {
			return fmt.Errorf("read answer from %s: %w", c.base, err)
		}
		if resp.StatusCode >= 300 {
			return errorOf(resp.StatusCode, data)
		}
		var out wire.AgentList
		if err := c.decode(resp.StatusCode, data, &out); err != nil {
			return err
		}
		return show(&out)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxAnswer)
	var event string
	var data strings.Builder // an event's data, at most maxAnswer
	for sc.Scan() {
		line := sc.Text()
		if line != "" {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				event = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				if data.Len()+len(v) > maxAnswer {
					return fmt.Errorf("node %s sent a search event larger than %d bytes", c.base, maxAnswer)
				}
				data.WriteString(v)
			}
			continue
		}
		switch event {
		case "done":
			return nil
		case "agents":
			var out wire.AgentList
			if err := json.Unmarshal([]byte(data.String()), &out); err != nil {
				return fmt.Errorf("node %s sent an agents event that is not an answer: %w", c.base, err)
			}
			if err := show(&out); err != nil {
				return err
			}
		}
		event = ""
		data.Reset()
	}
	if err := parent.Err(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("node %s did not end the search stream within %s", c.base, bound)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the search stream from %s: %w", c.base, err)
	}
	return fmt.Errorf("node %s ended the search stream before done", c.base)
}
