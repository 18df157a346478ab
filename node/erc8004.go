package node

import (
	"context"

	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/reputation"
)

// erc8004Feedback is the node's ERC-8004 index as reputation's FeedbackSource: every unrevoked
// feedback of an agent id that claims a DID, in chain order, with the claim and the agent's
// owner and wallet. Reputation's import rule checks the claim against the DID's wallets.
type erc8004Feedback struct{ ix *erc8004.Indexer }

var _ reputation.FeedbackSource = erc8004Feedback{}

func (f erc8004Feedback) Feedback(ctx context.Context) ([]reputation.Feedback, error) {
	all, err := f.ix.AllFeedback(ctx)
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
