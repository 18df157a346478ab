package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"time"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/txn"
)

// ownPostJournal marks a journal entry that holds an own-wallet post's salt.
const ownPostJournal = "own:post"

// runOwnPost posts a bounty from the user's own wallet (approving the escrow first for a
// token it may not spend yet), hands the node the task text once it has indexed the bounty,
// and prints the node's view.
func runOwnPost(ctx context.Context, e *env, fs *flags, nodeURL string, r escrow.PostRequest, spec []byte, quiet, asJSON bool) error {
	o, err := openOwn(ctx, e, fs.own, nodeURL, *fs.rpc, "post", *fs.timeout)
	if err != nil {
		return err
	}
	defer o.Close()
	escrowAddr := o.contract("BountyEscrow")
	// Without --salt, the salt is journalled with the command until it succeeds: run again
	// after a crash or a timeout, the same command posts with the same salt, so the escrow
	// refuses a second post (already posted) instead of locking the amount twice.
	j, name := openJournal(e), journalName(*fs.idemKey, nodeURL, e.args)
	if r.Salt == (common.Hash{}) {
		var prev *journalEntry
		if j != nil {
			if prev, err = j.load(name); err != nil {
				return err
			}
		}
		if prev != nil && prev.Path == ownPostJournal {
			r.Salt = common.HexToHash(prev.Key)
			fmt.Fprintf(e.stderr, "post: resuming the post of %s with its salt %s\n", prev.Created.Format(time.RFC3339), prev.Key)
		} else {
			if _, err := rand.Read(r.Salt[:]); err != nil {
				return err
			}
			if j != nil {
				if err := j.save(name, &journalEntry{Key: r.Salt.Hex(), Path: ownPostJournal, Command: e.args, Created: time.Now().UTC()}); err != nil {
					return err
				}
			}
		}
	}
	value := r.Amount
	if r.Token != (common.Address{}) {
		value = nil
		if err := o.approve(ctx, r.Token, escrowAddr, r.Amount); err != nil {
			return err
		}
	}
	abi := contracts.NewBountyEscrow()
	rc, err := o.send(ctx, txn.Call{To: escrowAddr, Value: value, Decode: escrow.DecodeRevert,
		Data: abi.PackPost(r.Token, r.Amount, r.Arbiter, r.Deadline, r.ReviewWindow, r.MinStake, r.SpecHash, r.Salt)})
	if err != nil {
		return err
	}
	if j != nil {
		j.done(name)
	}
	id, ok := escrow.PostedID(rc, escrowAddr)
	if !ok {
		return fmt.Errorf("post: transaction %s records no bounty", rc.TxHash.Hex())
	}
	if len(spec) > 0 && len(spec) <= escrow.MaxSpecBytes && utf8.Valid(spec) {
		if err := o.node.PutBountySpec(ctx, id, string(spec)); err != nil {
			fmt.Fprintf(e.stderr, "post: the node did not take the task text (%v); send it to workers yourself\n", err)
		}
	}
	if quiet && !asJSON {
		fmt.Fprintln(e.stdout, id)
		return nil
	}
	return o.printBounty(ctx, id, rc.TxHash.Hex(), rc.BlockNumber.Uint64(), rc.GasUsed, asJSON)
}

// runOwnAction acts on a bounty from the user's own wallet, with the terms and worker the
// node's index holds (a stale view only makes the escrow refuse, decoded, before anything is
// sent).
func runOwnAction(ctx context.Context, e *env, fs *flags, nodeURL string, id uint64, action escrow.Action, args escrow.ActionArgs, asJSON bool) error {
	o, err := openOwn(ctx, e, fs.own, nodeURL, *fs.rpc, fmt.Sprintf("%s bounty %d", action, id), *fs.timeout)
	if err != nil {
		return err
	}
	defer o.Close()
	b, err := o.node.Bounty(ctx, fmt.Sprint(id))
	if err != nil {
		return err
	}
	eb, err := escrowBounty(b)
	if err != nil {
		return err
	}
	data, err := escrow.ActionData(eb, action, args)
	if err != nil {
		return err
	}
	rc, err := o.send(ctx, txn.Call{To: o.contract("BountyEscrow"), Data: data, Decode: escrow.DecodeRevert})
	if err != nil {
		return err
	}
	return o.printBounty(ctx, id, rc.TxHash.Hex(), rc.BlockNumber.Uint64(), rc.GasUsed, asJSON)
}

// runOwnWithdraw withdraws what the escrow credited the user's own wallet.
func runOwnWithdraw(ctx context.Context, e *env, fs *flags, nodeURL string, token common.Address, asJSON bool) error {
	o, err := openOwn(ctx, e, fs.own, nodeURL, *fs.rpc, "withdraw", *fs.timeout)
	if err != nil {
		return err
	}
	defer o.Close()
	rc, err := o.send(ctx, txn.Call{To: o.contract("BountyEscrow"), Data: contracts.NewBountyEscrow().PackWithdraw(token), Decode: escrow.DecodeRevert})
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e, escrow.Result{TxHash: rc.TxHash.Hex(), Block: rc.BlockNumber.Uint64(), GasUsed: rc.GasUsed})
	}
	fmt.Fprintf(e.stdout, "withdrawn in tx %s\n", rc.TxHash.Hex())
	return nil
}

// approve lets spender take amount of token from the wallet, when it may not yet.
func (o *ownSession) approve(ctx context.Context, token, spender common.Address, amount *big.Int) error {
	erc20 := contracts.NewIERC20()
	have, err := bind.Call(erc20.Instance(o.chain, token), &bind.CallOpts{Context: ctx}, erc20.PackAllowance(o.snd.Address(), spender), erc20.UnpackAllowance)
	if err != nil {
		return fmt.Errorf("token %s does not answer allowance(): %w", token.Hex(), err)
	}
	return o.snd.Raise(ctx, token, have, amount, func(x *big.Int) []byte { return erc20.PackApprove(spender, x) })
}

// printBounty prints the node's view of bounty id after the transaction.
func (o *ownSession) printBounty(ctx context.Context, id uint64, tx string, block, gas uint64, asJSON bool) error {
	b, err := o.node.Bounty(ctx, fmt.Sprint(id))
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(o.e, wire.BountyResult{Bounty: b, TxHash: tx, Block: block, GasUsed: gas})
	}
	printBounty(o.e, b)
	return nil
}

// escrowBounty reads the node's view of a bounty as escrow's own type, whose terms the
// escrow's calls carry.
func escrowBounty(b *wire.Bounty) (*escrow.Bounty, error) {
	var out escrow.Bounty
	if err := recode(b, &out); err != nil {
		return nil, fmt.Errorf("read bounty %d: %w", b.ID, err)
	}
	return &out, nil
}
