package escrow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
)

// Bounty is a bounty as the index shows it.
type Bounty struct {
	ID           uint64         `json:"id"`
	Status       Status         `json:"status"`
	Poster       common.Address `json:"poster"`
	Worker       common.Address `json:"worker,omitzero"`
	Token        common.Address `json:"token"`
	Amount       string         `json:"amount"`
	Arbiter      common.Address `json:"arbiter"`
	Deadline     uint64         `json:"deadline"`
	ReviewWindow uint32         `json:"reviewWindow"`
	FeeBps       uint16         `json:"feeBps"`
	MinStake     string         `json:"minStake"`
	SpecHash     common.Hash    `json:"specHash"`
	// Spec is the task text, when this node holds it; it always hashes to SpecHash.
	Spec         string `json:"spec,omitempty"`
	ResultHash   string `json:"resultHash,omitempty"`
	Payout       string `json:"payout"`
	Fee          string `json:"fee"`
	PosterRefund string `json:"posterRefund"`
	PostedBlock  uint64 `json:"postedBlock"`
	UpdatedBlock uint64 `json:"updatedBlock"`
	// History is the bounty's events in chain order (Get only).
	History []Event `json:"history,omitempty"`
}

// Terms are the bounty's terms as the contract committed to them.
func (b *Bounty) Terms() contracts.IBountyEscrowTerms {
	amount, _ := new(big.Int).SetString(b.Amount, 10)
	minStake, _ := new(big.Int).SetString(b.MinStake, 10)
	return contracts.IBountyEscrowTerms{
		Poster: b.Poster, Token: b.Token, Amount: amount, Arbiter: b.Arbiter, Deadline: b.Deadline,
		ReviewWindow: b.ReviewWindow, FeeBps: b.FeeBps, MinStake: minStake, SpecHash: b.SpecHash,
	}
}

// Filter selects bounties; zero fields match everything.
type Filter struct {
	Status Status
	Poster common.Address
	Worker common.Address
	// Text keeps bounties whose spec contains it (case-insensitive); specs the node does not
	// hold never match.
	Text string
	// Limit bounds the answer (0 means 100, at most 1000); After pages by id.
	Limit int
	After uint64
}

const bountyColumns = `b.id, b.status, b.poster, b.worker, b.token, b.amount, b.arbiter, b.deadline, b.review_window, b.fee_bps, b.min_stake, b.spec_hash,
	b.result_hash, b.payout, b.fee, b.poster_refund, b.posted_block, b.updated_block, COALESCE(s.text, '')`

// bountyFrom joins each bounty with its spec text, when the node holds it.
const bountyFrom = ` FROM escrow_bounties b LEFT JOIN escrow_specs s ON s.chain = b.chain AND s.spec_hash = b.spec_hash`

func scanBounty(scan func(...any) error) (*Bounty, error) {
	var b Bounty
	var status, poster, worker, token, arbiter, spec string
	var deadline, window, fee int64
	if err := scan(&b.ID, &status, &poster, &worker, &token, &b.Amount, &arbiter, &deadline, &window, &fee,
		&b.MinStake, &spec, &b.ResultHash, &b.Payout, &b.Fee, &b.PosterRefund, &b.PostedBlock, &b.UpdatedBlock, &b.Spec); err != nil {
		return nil, err
	}
	b.Status, b.Poster, b.Token, b.Arbiter = Status(status), common.HexToAddress(poster), common.HexToAddress(token), common.HexToAddress(arbiter)
	if worker != "" {
		b.Worker = common.HexToAddress(worker)
	}
	b.Deadline, b.ReviewWindow, b.FeeBps, b.SpecHash = uint64(deadline), uint32(window), uint16(fee), common.HexToHash(spec)
	return &b, nil
}

// List returns the bounties matching f, by id.
func (ix *Indexer) List(ctx context.Context, f Filter) ([]*Bounty, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	f.Limit = min(f.Limit, 1000)
	where := []string{"b.chain = ?", "b.id > ?"}
	args := []any{ix.cfg.Chain, int64(f.After)}
	if f.Status != "" {
		where, args = append(where, "b.status = ?"), append(args, string(f.Status))
	}
	if f.Poster != (common.Address{}) {
		where, args = append(where, "b.poster = ?"), append(args, f.Poster.Hex())
	}
	if f.Worker != (common.Address{}) {
		where, args = append(where, "b.worker = ?"), append(args, f.Worker.Hex())
	}
	if f.Text != "" {
		where, args = append(where, "instr(lower(s.text), lower(?)) > 0"), append(args, f.Text)
	}
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT `+bountyColumns+bountyFrom+` WHERE `+strings.Join(where, " AND ")+` ORDER BY b.id LIMIT ?`,
		append(args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list bounties: %w", err)
	}
	defer rows.Close()
	out := []*Bounty{}
	for rows.Next() {
		b, err := scanBounty(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("list bounties: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Paid returns the bounties between a and any of bs (a the poster and one of bs the worker,
// or the other way round) that paid their worker something (accepted, released, or resolved
// with a worker share), by id.
func (ix *Indexer) Paid(ctx context.Context, a common.Address, bs []common.Address) ([]*Bounty, error) {
	if len(bs) == 0 {
		return nil, nil
	}
	in := strings.Repeat("?,", len(bs))
	in = in[:len(in)-1]
	args := []any{ix.cfg.Chain, a.Hex()}
	for _, b := range bs {
		args = append(args, b.Hex())
	}
	args = append(args, a.Hex())
	for _, b := range bs {
		args = append(args, b.Hex())
	}
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT `+bountyColumns+bountyFrom+` WHERE b.chain = ?
		AND b.status IN ('`+string(StatusAccepted)+`', '`+string(StatusReleased)+`', '`+string(StatusResolved)+`') AND b.payout != '0'
		AND ((b.poster = ? AND b.worker IN (`+in+`)) OR (b.worker = ? AND b.poster IN (`+in+`))) ORDER BY b.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("paid bounties: %w", err)
	}
	defer rows.Close()
	var out []*Bounty
	for rows.Next() {
		b, err := scanBounty(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("paid bounties: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// PaidWallets lists, in address order, the wallets on either side of a bounty in one of
// tokens that paid its worker something and paid a fee.
func (ix *Indexer) PaidWallets(ctx context.Context, tokens []common.Address) ([]common.Address, error) {
	if len(tokens) == 0 {
		return nil, nil
	}
	in := strings.Repeat("?,", len(tokens))
	in = in[:len(in)-1]
	args := []any{ix.cfg.Chain}
	for _, t := range tokens {
		args = append(args, t.Hex())
	}
	where := `chain = ? AND token IN (` + in + `) AND status IN ('` + string(StatusAccepted) + `', '` + string(StatusReleased) + `', '` +
		string(StatusResolved) + `') AND payout != '0' AND fee != '0'`
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT poster FROM escrow_bounties WHERE `+where+` UNION SELECT worker FROM escrow_bounties WHERE `+where,
		append(args, args...)...)
	if err != nil {
		return nil, fmt.Errorf("paid wallets: %w", err)
	}
	defer rows.Close()
	var out []common.Address
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			return nil, fmt.Errorf("paid wallets: %w", err)
		}
		out = append(out, common.HexToAddress(w))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b common.Address) int { return a.Cmp(b) })
	return out, nil
}

// Get returns bounty id with its history, or ErrUnknownBounty.
func (ix *Indexer) Get(ctx context.Context, id uint64) (*Bounty, error) {
	row := ix.cfg.DB.QueryRowContext(ctx, `SELECT `+bountyColumns+bountyFrom+` WHERE b.chain = ? AND b.id = ?`, ix.cfg.Chain, int64(id))
	b, err := scanBounty(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &BountyError{ID: id, Err: ErrUnknownBounty, Msg: fmt.Sprintf("bounty %d does not exist", id)}
	}
	if err != nil {
		return nil, fmt.Errorf("get bounty %d: %w", id, err)
	}
	b.History, err = ix.History(ctx, id)
	return b, err
}

// History returns the events of bounty id in chain order.
func (ix *Indexer) History(ctx context.Context, id uint64) ([]Event, error) {
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT name, block, tx_hash, log_index, data FROM escrow_events WHERE chain = ? AND bounty_id = ? ORDER BY block, log_index`,
		ix.cfg.Chain, int64(id))
	if err != nil {
		return nil, fmt.Errorf("bounty %d history: %w", id, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e := Event{BountyID: id, HasBounty: true}
		var data string
		if err := rows.Scan(&e.Name, &e.Block, &e.TxHash, &e.LogIndex, &data); err != nil {
			return nil, err
		}
		e.Data = []byte(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Count returns how many bounties and events the index holds.
func (ix *Indexer) Count(ctx context.Context) (bounties, events int, err error) {
	if err = ix.cfg.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM escrow_bounties WHERE chain = ?`, ix.cfg.Chain).Scan(&bounties); err != nil {
		return
	}
	err = ix.cfg.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM escrow_events WHERE chain = ?`, ix.cfg.Chain).Scan(&events)
	return
}
