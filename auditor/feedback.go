package auditor

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/reputation"
)

// Feedback is an ERC-8004 index as reputation's FeedbackSource: every unrevoked feedback of an
// agent id that claims a DID, in chain order, with the claim and the agent's owner and wallet.
// Reputation's import rule checks the claim against the DID's wallets and the settlements
// behind each client (Rules.External). A node reads its live index through it; Facts read
// their replay at a block.
type Feedback struct{ Index *erc8004.Indexer }

var _ reputation.FeedbackSource = Feedback{}

// Feedback lists the feedback clients gave; none without an index.
func (f Feedback) Feedback(ctx context.Context, clients []common.Address) ([]reputation.Feedback, error) {
	if f.Index == nil || len(clients) == 0 {
		return nil, nil
	}
	all, err := f.Index.FeedbackFrom(ctx, clients)
	if err != nil {
		return nil, err
	}
	out := make([]reputation.Feedback, len(all))
	for i, fo := range all {
		out[i] = reputation.Feedback{DID: fo.DID, Owner: fo.Owner, Wallet: fo.Wallet, Client: fo.Client, Value: fo.Value,
			Decimals: fo.ValueDecimals, Tag1: fo.Tag1, Tag2: fo.Tag2, Time: fo.Time, Block: fo.Block, LogIndex: fo.LogIndex}
	}
	return out, nil
}
