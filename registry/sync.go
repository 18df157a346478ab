package registry

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/internal/p2p"
)

// CardSet is the name of the cards' set in anti-entropy.
const CardSet = "cards"

// SyncSet is the registry's part in anti-entropy (p2p.Syncer): the cards this node holds, each
// identified by the SHA-256 of its JWS, staked cards first and then the newest received, so
// junk cards from free DIDs cannot push staked ones out of the window. A card a peer sends is registered as one arriving by
// gossip would be (signature, stake, key status, sequence); a forged or malformed one costs
// the peer.
func (r *Registry) SyncSet() p2p.Set { return r.syncSet(maxSyncCards) }

func (r *Registry) syncSet(window int) p2p.Set { return &cardSet{r: r, window: window} }

type cardSet struct {
	r      *Registry
	window int // the most cards listed

	mu   sync.Mutex
	dids map[p2p.ID]string // of the last IDs call, for Get
}

func (s *cardSet) IDs(ctx context.Context) ([]p2p.ID, error) {
	rows, err := s.r.cfg.DB.QueryContext(ctx, `SELECT did, jws FROM registry_cards WHERE chain = ? ORDER BY staked DESC, received DESC, did LIMIT ?`, s.r.cfg.Chain, s.window)
	if err != nil {
		return nil, fmt.Errorf("registry: list cards: %w", err)
	}
	defer rows.Close()
	var ids []p2p.ID
	dids := map[p2p.ID]string{}
	for rows.Next() {
		var did, jws string
		if err := rows.Scan(&did, &jws); err != nil {
			return nil, err
		}
		id := p2p.ID(sha256.Sum256([]byte(jws)))
		ids = append(ids, id)
		dids[id] = did
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.dids = dids
	s.mu.Unlock()
	return ids, nil
}

func (s *cardSet) Get(ctx context.Context, ids []p2p.ID) ([][]byte, error) {
	s.mu.Lock()
	dids := s.dids
	s.mu.Unlock()
	var out [][]byte
	for _, id := range ids {
		did, ok := dids[id]
		if !ok {
			continue
		}
		var jws string
		err := s.r.cfg.DB.QueryRowContext(ctx, `SELECT jws FROM registry_cards WHERE chain = ? AND did = ?`, s.r.cfg.Chain, did).Scan(&jws)
		if err != nil || sha256.Sum256([]byte(jws)) != id {
			continue // replaced or gone since
		}
		out = append(out, []byte(jws))
	}
	return out, nil
}

func (s *cardSet) Put(ctx context.Context, from peer.ID, item []byte) error {
	_, err := s.r.register(ctx, item, "peer:"+from.String(), false)
	if errors.Is(err, ErrForged) || errors.Is(err, ErrMalformed) || errors.Is(err, ErrWrongDID) || errors.Is(err, ErrOversize) {
		return fmt.Errorf("%w: %w", p2p.ErrBadItem, err)
	}
	return err
}
