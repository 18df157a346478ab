package api

import (
	"sync"

	"github.com/labstack/echo/v4"
)

// inFlight counts the writes in flight per key (a client address, a wallet). A key is
// dropped once nothing of it is in flight, so it holds only what is running.
type inFlight struct {
	mu sync.Mutex
	n  map[string]int
}

// enter counts one more write under key unless max already are; leave ends it, once.
func (f *inFlight) enter(key string, max int) (leave func(), ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key] >= max {
		return nil, false
	}
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.n[key]--; f.n[key] <= 0 {
				delete(f.n, key)
			}
		})
	}, true
}

// enterAddress counts a write against its client address's writes in flight. (There is no
// count across addresses: a slot is taken before the body is read, so a node-wide count was
// an off switch that 16 addresses sending no body held for free. What the writes ask of the
// chain is bounded where it is asked: chain.MaxRPCConns.)
func (s *Server) enterAddress(c echo.Context) (leave func(), err error) {
	leave, ok := s.inFlight.enter("addr "+c.RealIP(), maxInFlightPerAddress)
	if !ok {
		return nil, withDetail(ErrTooManyInFlight, "at most %d operations and relays in flight from one address; retry once one has ended",
			maxInFlightPerAddress)
	}
	return leave, nil
}

// bounded counts a write against its client address's writes in flight while it runs, for a
// route the node never carries on as an operation (POST /v1/tx/raw).
func (s *Server) bounded(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		leave, err := s.enterAddress(c)
		if err != nil {
			return err
		}
		defer leave()
		return next(c)
	}
}
