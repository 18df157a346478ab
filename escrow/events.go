package escrow

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Event is one escrow event as the index keeps it.
type Event struct {
	BountyID  uint64          `json:"bountyId,omitempty"`
	HasBounty bool            `json:"-"`
	Name      string          `json:"name"`
	Block     uint64          `json:"block"`
	TxHash    string          `json:"txHash"`
	LogIndex  uint            `json:"logIndex"`
	Data      json.RawMessage `json:"data"`
}

// eventData are the JSON shapes of the events' fields.
type (
	postedData struct {
		Poster       common.Address `json:"poster"`
		Token        common.Address `json:"token"`
		Amount       string         `json:"amount"`
		Arbiter      common.Address `json:"arbiter"`
		Deadline     uint64         `json:"deadline"`
		ReviewWindow uint32         `json:"reviewWindow"`
		FeeBps       uint16         `json:"feeBps"`
		MinStake     string         `json:"minStake"`
		SpecHash     common.Hash    `json:"specHash"`
	}
	workerData struct {
		Worker  common.Address `json:"worker"`
		AgentID common.Hash    `json:"agentId,omitempty"`
	}
	unclaimedData struct {
		Worker common.Address `json:"worker"` // the worker the poster sent away
	}
	submittedData struct {
		Worker     common.Address `json:"worker"`
		ResultHash common.Hash    `json:"resultHash"`
	}
	payoutData struct {
		Worker common.Address `json:"worker"`
		Payout string         `json:"payout"`
		Fee    string         `json:"fee"`
	}
	disputedData struct {
		By         common.Address `json:"by"`
		ReasonHash common.Hash    `json:"reasonHash"`
	}
	resolvedData struct {
		WorkerBps    uint16 `json:"workerBps"`
		WorkerPayout string `json:"workerPayout"`
		PosterRefund string `json:"posterRefund"`
		Fee          string `json:"fee"`
	}
	refundData struct {
		Refund string `json:"refund"`
	}
	ledgerData struct {
		Account common.Address `json:"account"`
		Token   common.Address `json:"token"`
		Amount  string         `json:"amount"`
	}
)

func str(b *big.Int) string {
	if b == nil {
		return "0"
	}
	return b.String()
}

// decode turns a log of the escrow into an Event; ok is false for events the index does
// not keep (administration).
func (ix *Indexer) decode(l *types.Log) (ev Event, ok bool, err error) {
	if len(l.Topics) == 0 {
		return ev, false, nil
	}
	abiEv, err := ix.abi.EventByID(l.Topics[0])
	if err != nil {
		return ev, false, nil // not ours
	}
	e := ix.escrow
	ev = Event{Name: abiEv.Name, Block: l.BlockNumber, TxHash: l.TxHash.Hex(), LogIndex: l.Index, HasBounty: true}
	var id *big.Int
	var data any
	switch abiEv.Name {
	case "Posted":
		p, err := e.UnpackPostedEvent(l)
		if err != nil {
			return ev, false, err
		}
		t := p.Terms
		id, data = p.Id, postedData{t.Poster, t.Token, str(t.Amount), t.Arbiter, t.Deadline, t.ReviewWindow, t.FeeBps, str(t.MinStake), t.SpecHash}
	case "Claimed":
		p, err := e.UnpackClaimedEvent(l)
		if err != nil {
			return ev, false, err
		}
		id, data = p.Id, workerData{Worker: p.Worker, AgentID: p.AgentId}
	case "Assigned":
		p, err := e.UnpackAssignedEvent(l)
		if err != nil {
			return ev, false, err
		}
		id, data = p.Id, workerData{Worker: p.Worker}
	case "Unclaimed":
		p, err := e.UnpackUnclaimedEvent(l)
		if err != nil {
			return ev, false, err
		}
		id, data = p.Id, unclaimedData{Worker: p.Worker}
	case "Submitted":
		p, err := e.UnpackSubmittedEvent(l)
		if err != nil {
			return ev, false, err
		}
		id, data = p.Id, submittedData{p.Worker, p.ResultHash}
	case "Accepted":
		p, err := e.UnpackAcceptedEvent(l)
		if err != nil {
			return ev, false, err
		}
		id, data = p.Id, payoutData{p.Worker, str(p.Payout), str(p.Fee)}
	case "Released":
		p, err := e.UnpackReleasedEvent(l)
		if err != nil {
			return ev, false, err
		}
		id, data = p.Id, payoutData{p.Worker, str(p.Payout), str(p.Fee)}
	case "Disputed":
		p, err := e.UnpackDisputedEvent(l)
		if err != nil {
			return ev, false, err
		}
		id, data = p.Id, disputedData{p.By, p.ReasonHash}
	case "Resolved":
		p, err := e.UnpackResolvedEvent(l)
		if err != nil {
			return ev, false, err
		}
		id, data = p.Id, resolvedData{p.WorkerBps, str(p.WorkerPayout), str(p.PosterRefund), str(p.Fee)}
	case "Refunded":
		p, err := e.UnpackRefundedEvent(l)
		if err != nil {
			return ev, false, err
		}
		id, data = p.Id, refundData{str(p.Refund)}
	case "Cancelled":
		p, err := e.UnpackCancelledEvent(l)
		if err != nil {
			return ev, false, err
		}
		id, data = p.Id, refundData{str(p.Refund)}
	case "Credited":
		p, err := e.UnpackCreditedEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.HasBounty, data = false, ledgerData{p.Account, p.Token, str(p.Amount)}
	case "Withdrawn":
		p, err := e.UnpackWithdrawnEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.HasBounty, data = false, ledgerData{p.Account, p.Token, str(p.Amount)}
	case "FeesWithdrawn":
		p, err := e.UnpackFeesWithdrawnEvent(l)
		if err != nil {
			return ev, false, err
		}
		ev.HasBounty, data = false, ledgerData{p.Treasury, p.Token, str(p.Amount)}
	default:
		return ev, false, nil
	}
	if id != nil {
		if !id.IsUint64() {
			return ev, false, fmt.Errorf("escrow index: bounty id %s out of range", id)
		}
		ev.BountyID = id.Uint64()
	}
	if ev.Data, err = json.Marshal(data); err != nil {
		return ev, false, err
	}
	return ev, true, nil
}

// project applies a bounty event to its row. Events arrive in chain order.
func (ix *Indexer) project(ctx context.Context, tx *sql.Tx, ev Event) error {
	chain, id, blk := ix.cfg.Chain, int64(ev.BountyID), int64(ev.Block)
	exec := func(q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("escrow index: apply %s to bounty %d: %w", ev.Name, ev.BountyID, err)
		}
		return nil
	}
	set := func(status Status, extra string, args ...any) error {
		q := `UPDATE escrow_bounties SET status = ?, updated_block = ?` + extra + ` WHERE chain = ? AND id = ?`
		all := append([]any{string(status), blk}, args...)
		return exec(q, append(all, chain, id)...)
	}
	switch ev.Name {
	case "Posted":
		var d postedData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return exec(`INSERT INTO escrow_bounties (chain, id, poster, token, amount, arbiter, deadline, review_window, fee_bps, min_stake, spec_hash, status, posted_block, updated_block)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			chain, id, d.Poster.Hex(), d.Token.Hex(), d.Amount, d.Arbiter.Hex(), int64(d.Deadline), int64(d.ReviewWindow), int64(d.FeeBps), d.MinStake, d.SpecHash.Hex(), string(StatusOpen), blk, blk)
	case "Claimed", "Assigned":
		var d workerData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return set(StatusAssigned, `, worker = ?`, d.Worker.Hex())
	case "Unclaimed":
		// The poster sent the worker away: open again, with nobody assigned (the event names
		// the worker it had, for the history).
		return set(StatusOpen, `, worker = ''`)
	case "Submitted":
		var d submittedData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return set(StatusSubmitted, `, result_hash = ?`, d.ResultHash.Hex())
	case "Accepted", "Released":
		var d payoutData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		status := StatusAccepted
		if ev.Name == "Released" {
			status = StatusReleased
		}
		return set(status, `, payout = ?, fee = ?`, d.Payout, d.Fee)
	case "Disputed":
		return set(StatusDisputed, ``)
	case "Resolved":
		var d resolvedData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		return set(StatusResolved, `, payout = ?, fee = ?, poster_refund = ?`, d.WorkerPayout, d.Fee, d.PosterRefund)
	case "Refunded", "Cancelled":
		var d refundData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		status := StatusRefunded
		if ev.Name == "Cancelled" {
			status = StatusCancelled
		}
		return set(status, `, poster_refund = ?`, d.Refund)
	}
	return nil
}

// Subscribe returns a channel of the bounty's events as they are indexed, and a function
// that ends the subscription.
func (ix *Indexer) Subscribe(id uint64) (<-chan Event, func()) {
	ch := make(chan Event, 64)
	ix.mu.Lock()
	ix.subs[id] = append(ix.subs[id], ch)
	ix.mu.Unlock()
	return ch, func() {
		ix.mu.Lock()
		defer ix.mu.Unlock()
		list := ix.subs[id]
		for i, c := range list {
			if c == ch {
				ix.subs[id] = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(ix.subs[id]) == 0 {
			delete(ix.subs, id)
		}
	}
}
