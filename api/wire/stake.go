package wire

import "github.com/ethereum/go-ethereum/common"

// StakeOp names a write on an agent's stake or key, each under its own route (StakePaths
// and KeyChangePaths in api/client).
type StakeOp string

// The stake and key writes (stake.OpKind).
const (
	OpStake         StakeOp = "stake"
	OpUnbond        StakeOp = "unbond"
	OpWithdrawStake StakeOp = "withdraw-stake"
	OpRevoke        StakeOp = "revoke"
	OpRotate        StakeOp = "rotate"
)

// StakeResult is what a stake write answers: its transaction, and the agent's stake after
// it (stake.Result).
type StakeResult struct {
	TxHash string `json:"txHash"`
	Block  uint64 `json:"block"`
	// GasUsed is what the transaction cost in gas.
	GasUsed uint64   `json:"gasUsed"`
	Stake   *Holding `json:"stake,omitempty"`
}

// StakeStatus is where an (agent, controller) record is, as the StakeRegistry names it:
// bound, rotated, revoked, or none.
type StakeStatus string

// The record statuses (stake.Status).
const (
	StakeBound   StakeStatus = "bound"
	StakeRotated StakeStatus = "rotated"
	StakeRevoked StakeStatus = "revoked"
	StakeNone    StakeStatus = "none"
)

// Holding is one agent's stake under one controller wallet, as the chain holds it now
// (stake.Holding): GET /v1/stake/{did}. Amounts are decimal strings in the stake token's base
// unit (wei for ETH).
type Holding struct {
	Agent      common.Hash    `json:"agentId"`
	Controller common.Address `json:"controller"`
	Status     StakeStatus    `json:"status"`
	// Staked counts as stake, Locked of it by claimed bounties (not unbondable until they
	// end); Unbonding is leaving and withdrawable from UnlockAt (unix seconds; 0 when nothing
	// is unbonding).
	Staked    string         `json:"staked"`
	Locked    string         `json:"locked"`
	Unbonding string         `json:"unbonding"`
	UnlockAt  uint64         `json:"unlockAt,omitempty"`
	Token     common.Address `json:"token"`
}

// StakeBody is the envelope body of POST /v1/stake and POST /v1/stake/unbond: what to do
// (Op: "stake" or "unbond", so a signature for one cannot be spent on the other), the wallet
// that controls the signer's agent, and the amount in the stake token's base unit (wei for
// ETH), as a decimal string.
type StakeBody struct {
	Op     string         `json:"op"`
	Wallet common.Address `json:"wallet"`
	Amount string         `json:"amount"`
}

// StakeWithdrawBody is the envelope body of POST /v1/stake/withdraw; Op is "withdraw-stake".
type StakeWithdrawBody struct {
	Op     string         `json:"op"`
	Wallet common.Address `json:"wallet"`
}
