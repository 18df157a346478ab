package auditor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/internal/chainlog"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/units"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/stake"
)

// Chain is what an auditor reads from the chain it names: logs and heads (to replay the
// contracts' events), and calls (the deployment's minimum stake and stake token).
type Chain interface {
	chainlog.Source
	bind.ContractBackend
}

// Facts are the chain's facts at one block, replayed from its events into a scratch database
// by the node's own indexers (package stake and escrow): what reputation's rules and
// pre-trust read. Close removes the database.
type Facts struct {
	Block  uint64
	Stakes *stake.Index
	Escrow *escrow.Indexer
	// ERC8004 is the ERC-8004 registries' replay; nil when the deployment has none.
	ERC8004 *erc8004.Indexer

	Params reputation.Params // the deployment's minimum stake set; the rest the defaults

	priced []common.Address // the stake token, when it is an ERC-20: its fees back imported feedback
	dir    string
	db     *sql.DB
	chain  int64
}

// scratchPrefix names the scratch databases' directories (a Scorer removes any a crash left).
const scratchPrefix = "scratch-facts-"

// atBlock is a chain whose head reads as block: the indexers replay up to it and no further.
type atBlock struct {
	chainlog.Source
	block uint64
}

func (a atBlock) BlockNumber(context.Context) (uint64, error) { return a.block, nil }

// ReadFacts replays the deployment's StakeRegistry and BountyEscrow events, and its ERC-8004
// registries' when it has them, up to block into a scratch database under dir (a temporary
// directory of its own; "" for the system's).
func ReadFacts(ctx context.Context, c Chain, dep *contracts.Deployment, block uint64, dir string) (f *Facts, err error) {
	if block < dep.Block {
		return nil, fmt.Errorf("auditor: block %d is before the deployment (block %d)", block, dep.Block)
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp(dir, scratchPrefix)
	if err != nil {
		return nil, err
	}
	f = &Facts{Block: block, dir: tmp}
	scratch := f // every error return below sets f to nil first
	defer func() {
		if err != nil {
			scratch.Close()
		}
	}()
	if f.db, err = sqlite.Open(filepath.Join(tmp, "facts.db")); err != nil {
		return nil, err
	}
	f.chain, err = sqlite.EnterChain(ctx, f.db, sqlite.Chain{Key: "audit", ChainID: dep.ChainID, Genesis: "", Contracts: dep.Contracts.RootAnchor.Hex()})
	if err != nil {
		return nil, err
	}
	min, err := dep.MinStake(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("auditor: read the minimum stake: %w", err)
	}
	stakeToken, token, err := dep.StakeToken(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("auditor: read the stake token: %w", err)
	}
	f.Params = reputation.Params{MinStake: MinStakeWhole(min, token)}
	f.priced = PricedTokens(stakeToken)
	src := atBlock{Source: c, block: block}
	if f.Stakes, err = stake.NewIndex(ctx, stake.Config{DB: f.db, Chain: f.chain, Client: src, ChainID: dep.ChainID,
		Registry: dep.Contracts.StakeRegistry, StartBlock: dep.Block, Token: token}); err != nil {
		return nil, err
	}
	if f.Escrow, err = escrow.NewIndexer(ctx, escrow.IndexerConfig{DB: f.db, Chain: f.chain, Client: src,
		Escrow: dep.Contracts.BountyEscrow, StartBlock: dep.Block}); err != nil {
		return nil, err
	}
	if _, err := f.Stakes.Sync(ctx); err != nil {
		return nil, fmt.Errorf("auditor: replay StakeRegistry to block %d: %w", block, err)
	}
	if _, err := f.Escrow.Sync(ctx); err != nil {
		return nil, fmt.Errorf("auditor: replay BountyEscrow to block %d: %w", block, err)
	}
	if c := dep.Contracts; c.IdentityRegistry != (common.Address{}) {
		if f.ERC8004, err = erc8004.NewIndexer(ctx, erc8004.IndexerConfig{DB: f.db, Chain: f.chain, Client: src,
			IdentityRegistry: c.IdentityRegistry, ReputationRegistry: c.ReputationRegistry, ValidationRegistry: c.ValidationRegistry,
			StartBlock: dep.Block, Bindings: f.Stakes}); err != nil {
			return nil, err
		}
		if _, err := f.ERC8004.Sync(ctx); err != nil {
			return nil, fmt.Errorf("auditor: replay the ERC-8004 registries to block %d: %w", block, err)
		}
	}
	return f, nil
}

// Close removes the scratch database.
func (f *Facts) Close() error {
	var err error
	if f.db != nil {
		err = f.db.Close()
	}
	return errors.Join(err, os.RemoveAll(f.dir))
}

// Rules are reputation's acceptance rules over these facts, for the deployment's escrow.
func (f *Facts) Rules(dep *contracts.Deployment) *reputation.Rules {
	b := Bounties{Index: f.Escrow}
	return &reputation.Rules{ChainID: dep.ChainID, Escrow: dep.Contracts.BountyEscrow, Bounties: b, Wallets: f.Stakes, Settlements: b,
		PricedTokens: f.priced}
}

// Bounties reads the facts reputation's rules need of a bounty from an escrow index
// (reputation.Bounties): whether it finished with the work judged, its parties and what it
// settled.
type Bounties struct{ Index *escrow.Indexer }

// Bounty answers ok=false for a bounty the index does not have.
func (b Bounties) Bounty(ctx context.Context, id uint64) (reputation.BountyFacts, bool, error) {
	bt, err := b.Index.Get(ctx, id)
	if errors.Is(err, escrow.ErrUnknownBounty) {
		return reputation.BountyFacts{}, false, nil
	}
	if err != nil {
		return reputation.BountyFacts{}, false, err
	}
	return facts(bt), true, nil
}

// Paid lists the bounties between a and bs that paid their worker (reputation.Settlements).
func (b Bounties) Paid(ctx context.Context, a common.Address, bs []common.Address) ([]reputation.BountyFacts, error) {
	paid, err := b.Index.Paid(ctx, a, bs)
	if err != nil {
		return nil, err
	}
	out := make([]reputation.BountyFacts, len(paid))
	for i, bt := range paid {
		out[i] = facts(bt)
		out[i].Amount, _ = new(big.Int).SetString(bt.Payout, 10) // what moved to the worker
	}
	return out, nil
}

func facts(bt *escrow.Bounty) reputation.BountyFacts {
	finished := false
	switch bt.Status {
	case escrow.StatusAccepted, escrow.StatusReleased, escrow.StatusResolved, escrow.StatusRefunded:
		finished = true
	}
	amount, _ := new(big.Int).SetString(bt.Amount, 10)
	fee, _ := new(big.Int).SetString(bt.Fee, 10)
	return reputation.BountyFacts{Finished: finished, Poster: bt.Poster, Arbiter: bt.Arbiter, Worker: bt.Worker, Token: bt.Token, Amount: amount, Fee: fee}
}

// PaidWallets lists the wallets of bounties in tokens that paid a worker and a fee
// (reputation.Settlements).
func (b Bounties) PaidWallets(ctx context.Context, tokens []common.Address) ([]common.Address, error) {
	return b.Index.PaidWallets(ctx, tokens)
}

// PricedTokens are the tokens besides ETH whose fees back imported ERC-8004 feedback
// (reputation.Rules.PricedTokens): the deployment's stake token when it is an ERC-20.
func PricedTokens(stakeToken common.Address) []common.Address {
	if stakeToken == (common.Address{}) {
		return nil
	}
	return []common.Address{stakeToken}
}

// MinStakeWhole is a minimum stake in whole tokens, as reputation.Params takes it (negative:
// no minimum).
func MinStakeWhole(base *big.Int, token units.Token) float64 {
	if base.Sign() == 0 {
		return -1
	}
	return token.Whole(base)
}

var (
	_ reputation.Bounties    = Bounties{}
	_ reputation.Settlements = Bounties{}
	_ reputation.Wallets     = (*stake.Index)(nil)
)
