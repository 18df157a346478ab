package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
