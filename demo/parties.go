package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// What the parties do: at the node through its API client, signed with their own keys, and
// at the chain where the node has no route.

// newActor makes a DID for the party, registers it with the node, and binds it to dev wallet
// i on chain (both keys sign; the node, which holds the dev wallets, sends StakeRegistry.bind).
func (d *demo) newActor(ctx context.Context, name string, i int) (*actor, error) {
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		return nil, err
	}
	if err := d.registerDID(ctx, k); err != nil {
		return nil, err
	}
	a := &actor{name: name, key: k, wallet: chain.DevKey(i), addr: crypto.PubkeyToAddress(chain.DevKey(i).PublicKey)}
	if a.start, err = d.chain.BalanceAt(ctx, a.addr, nil); err != nil {
		return nil, err
	}
	b, err := identity.SignBinding(identity.BindingStatement{
		DID: k.DID.String(), Wallet: a.addr, ChainID: d.info.Chain.ID,
		Registry: common.HexToAddress(d.info.Contracts["StakeRegistry"]), IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce(),
	}, k, a.wallet)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	ans, err := d.node.AddBinding(ctx, raw)
	if err != nil {
		return nil, err
	}
	if !ans.OnChain {
		return nil, fmt.Errorf("the node did not record %s's binding on chain (it does not hold wallet %s)", name, a.addr.Hex())
	}
	return a, nil
}

// registerDID registers k's DID with the node: it signs a fresh challenge from the node with
// k (proof of possession).
func (d *demo) registerDID(ctx context.Context, k *identity.Key) error {
	ch, err := d.node.Challenge(ctx)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(map[string]any{"to": []string{ch.Audience}, "body": map[string]string{"challenge": ch.Challenge}})
	if err != nil {
		return err
	}
	filled, err := identity.FillEnvelope(payload, k, time.Now(), proofLife)
	if err != nil {
		return err
	}
	proof, err := k.SignCompact(filled)
	if err != nil {
		return err
	}
	_, err = d.node.RegisterDID(ctx, proof)
	return err
}

// stake bonds eth ETH for a's agent in StakeRegistry, through the node (POST /v1/stake, as
// `surety stake add` does), and checks that the node answers with it staked.
func (d *demo) stake(ctx context.Context, a *actor, eth string) error {
	r, ok := new(big.Rat).SetString(eth)
	if !ok {
		return fmt.Errorf("stake %q is not a number of ETH", eth)
	}
	wei := r.Mul(r, new(big.Rat).SetInt(big.NewInt(1e18))).Num()
	env, err := d.envelope(a, 0, wire.StakeBody{Op: string(wire.OpStake), Wallet: a.addr, Amount: wei.String()})
	if err != nil {
		return err
	}
	res, err := d.node.Stake(ctx, wire.OpStake, env, identity.NewNonce())
	if err != nil {
		return err
	}
	if res.Stake == nil || res.Stake.Staked != wei.String() {
		return fmt.Errorf("the node staked %+v, want %s wei", res.Stake, wei)
	}
	return nil
}

// envelope signs body as a, for the node: its aud is the node's DID and its chain_id the
// node's chain, so it acts at that node alone; it names bounty id when id is not zero.
func (d *demo) envelope(a *actor, id uint64, body any) ([]byte, error) {
	aud := identity.Audience{Node: d.info.NodeDID, ChainID: d.info.Chain.ID, Escrow: d.info.Contracts["BountyEscrow"]}
	jws, err := identity.SignRequest(a.key, aud, id, body, time.Now(), envelopeLife)
	return []byte(jws), err
}

// act has a take action on bounty id from its wallet.
func (d *demo) act(ctx context.Context, a *actor, id uint64, action wire.Action, body wire.ActionBody) error {
	body.Wallet = a.addr
	env, err := d.envelope(a, id, body)
	if err != nil {
		return err
	}
	_, err = d.node.ActOnBounty(ctx, id, action, env, identity.NewNonce())
	return err
}

// groupEnvelope signs an envelope for group by a from the payload fields.
func groupEnvelope(a *actor, group string, fields map[string]any) ([]byte, error) {
	return identity.SignGroupEnvelope(a.key, group, fields, time.Now(), envelopeLife)
}

// members makes group with creator and members.
func (d *demo) members(ctx context.Context, creator *actor, group string, members ...*actor) error {
	var dids []string
	for _, m := range members {
		dids = append(dids, m.key.DID.String())
	}
	env, err := groupEnvelope(creator, group, map[string]any{"body": map[string]any{"kind": groups.MembersKind, "members": dids}})
	if err != nil {
		return err
	}
	_, err = d.node.SetGroupMembers(ctx, group, env)
	return err
}

// post signs a text message by a into group and returns its seq.
func (d *demo) post(ctx context.Context, a *actor, group, state, text string) (int64, error) {
	env, err := groupEnvelope(a, group, map[string]any{"state": state, "body": map[string]any{"text": text}})
	if err != nil {
		return 0, err
	}
	p, err := d.node.PostToGroup(ctx, group, env)
	if err != nil {
		return 0, fmt.Errorf("%s posts in %s: %w", a.name, group, err)
	}
	if p.Envelope == nil {
		return 0, fmt.Errorf("%s's post in %s was not stored", a.name, group)
	}
	return p.Envelope.Seq, nil
}

// verifyLeaf checks, as an auditor does, that leaf is in the node's log (an inclusion proof
// from the node) under the root anchored in contract by the sender of the head's anchor
// transaction, read from the chain on its own. It returns what it verified.
func (d *demo) verifyLeaf(ctx context.Context, contract common.Address, leaf merkle.Hash) (string, error) {
	head, err := d.node.LogHead(ctx)
	if err != nil {
		return "", err
	}
	if head.Size == 0 || head.AnchorTx == "" {
		return "", fmt.Errorf("the node's head (size %d) is not anchored yet", head.Size)
	}
	proof, err := d.node.InclusionProof(ctx, leaf, head.Size)
	if err != nil {
		return "", err
	}
	tx, _, err := d.chain.TransactionByHash(ctx, common.HexToHash(head.AnchorTx))
	if err != nil {
		return "", fmt.Errorf("anchor transaction %s: %w", head.AnchorTx, err)
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	if err != nil {
		return "", fmt.Errorf("anchor transaction %s: %w", head.AnchorTx, err)
	}
	anchor := contracts.NewRootAnchor()
	root, err := bind.Call(anchor.Instance(d.chain, contract), &bind.CallOpts{Context: ctx}, anchor.PackRootAt(from, proof.Size), anchor.UnpackRootAt)
	if err != nil {
		return "", fmt.Errorf("read the anchored root: %w", err)
	}
	if root == ([32]byte{}) {
		return "", fmt.Errorf("no root is anchored by %s at size %d in %s", from.Hex(), proof.Size, contract.Hex())
	}
	p := verify.InclusionProof{Leaf: proof.Leaf, Index: proof.Index, Size: proof.Size, Path: proof.Path}
	if err := verify.Inclusion(leaf, p, proof.Size, verify.Hash(root)); err != nil {
		return "", fmt.Errorf("NOT verified: leaf %s against the root anchored at size %d: %w", leaf, proof.Size, err)
	}
	return fmt.Sprintf("verified: leaf %s is entry %d of the log of size %d, whose root %s is anchored on chain by %s in %s",
		leaf, proof.Index, proof.Size, verify.Hash(root), from.Hex(), contract.Hex()), nil
}

// treasury is the escrow's treasury as an actor, when it is one of the dev wallets: it
// withdraws the fees straight from the chain (the node has no route for that).
func (d *demo) treasury(ctx context.Context) (*actor, error) {
	escrowABI := contracts.NewBountyEscrow()
	addr, err := bind.Call(d.escrow(), &bind.CallOpts{Context: ctx}, escrowABI.PackTreasury(), escrowABI.UnpackTreasury)
	if err != nil {
		return nil, fmt.Errorf("read the escrow's treasury: %w", err)
	}
	for i := range 10 {
		if crypto.PubkeyToAddress(chain.DevKey(i).PublicKey) != addr {
			continue
		}
		a := &actor{name: "treasury", wallet: chain.DevKey(i), addr: addr}
		if a.start, err = d.chain.BalanceAt(ctx, addr, nil); err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, nil
}

func (d *demo) escrow() *bind.BoundContract {
	return contracts.NewBountyEscrow().Instance(d.chain, common.HexToAddress(d.info.Contracts["BountyEscrow"]))
}

// transact sends a transaction from a's wallet to contract, straight to the chain, and waits
// for it.
func (d *demo) transact(ctx context.Context, a *actor, contract *bind.BoundContract, data []byte, value *big.Int) error {
	opts := bind.NewKeyedTransactor(a.wallet, new(big.Int).SetUint64(d.info.Chain.ID))
	opts.Context, opts.Value = ctx, value
	tx, err := bind.Transact(contract, opts, data)
	if err != nil {
		return err
	}
	r, err := chain.WaitMined(ctx, d.chain, tx.Hash())
	if err != nil {
		return err
	}
	if r.Status != 1 {
		return fmt.Errorf("transaction %s reverted", tx.Hash().Hex())
	}
	return nil
}

// passTime moves the chain's clock forward: the embedded chain directly, a dev chain with
// evm_increaseTime.
func (d *demo) passTime(ctx context.Context, by time.Duration) error {
	if em, ok := d.chain.(*chain.Embedded); ok {
		return em.AdvanceTime(by)
	}
	if d.rpc == "" {
		return errors.New("move the chain's clock: neither an embedded chain nor a dev chain's URL")
	}
	c, err := rpc.DialContext(ctx, d.rpc)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.CallContext(ctx, nil, "evm_increaseTime", hexutil.Uint64(by/time.Second)); err != nil {
		return fmt.Errorf("move the chain's clock (a dev chain is needed): %w", err)
	}
	return c.CallContext(ctx, nil, "evm_mine")
}
