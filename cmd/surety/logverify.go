package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/reputation/verify"
)

func runLogCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{"verify": runLogVerify}
	return runSubcommand(ctx, e, "log", "verify", sub, args)
}

// runLogVerify checks that an audit is in a node's log, against the root the chain holds:
// the node supplies the proof, the chain the root, and this command does the hashing.
func runLogVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "log verify", "--rpc-url URL (--envelope FILE | --leaf HEX) [flags]", strings.TrimSpace(`
Check that an audit is in a node's audit log, against the log root anchored on chain: the node
gives the inclusion proof, the chain gives the root, and the hashing happens here, so the
node is not trusted.`))
	node := fs.nodeURL()
	rpcURL := fs.rpcURL("the chain's JSON-RPC URL (where the root is anchored)")
	envelope := fs.String("envelope", "", "the audit as filed: its signed envelope, a file")
	leafHex := fs.String("leaf", "", "or the audit's leaf hash (hex)")
	anchorAddr := fs.String("anchor", "", "the RootAnchor contract (default: as the node's /v1/info says)")
	wallet := fs.String("wallet", "", "the node's anchoring wallet (default: the sender of the head's anchor transaction, read from the chain)")
	asJSON := fs.Bool("json", false, `print {"verified": true, "leaf": ..., "message": ...}`)
	if err := fs.parse(args); err != nil {
		return err
	}
	if *rpcURL == "" || (*envelope == "") == (*leafHex == "") {
		return usagef("give --rpc-url, and one of --envelope FILE or --leaf HEX")
	}
	var leaf verify.Hash
	if *envelope != "" {
		raw, err := os.ReadFile(*envelope)
		if err != nil {
			return err
		}
		leaf = verify.EnvelopeLeaf(raw)
	} else if err := leaf.UnmarshalText([]byte(strings.TrimPrefix(*leafHex, "0x"))); err != nil {
		return usagef("--leaf: %v", err)
	}
	for _, a := range []struct{ name, v string }{{"--anchor", *anchorAddr}, {"--wallet", *wallet}} {
		if a.v != "" && !common.IsHexAddress(a.v) {
			return usagef("%s %q is not an address", a.name, a.v)
		}
	}
	c, info, err := dialNode(ctx, *node)
	if err != nil {
		return err
	}
	contract := common.HexToAddress(*anchorAddr)
	if *anchorAddr == "" {
		contract = common.HexToAddress(info.Contracts["RootAnchor"])
	}
	client, err := chain.Dial(ctx, *rpcURL, 5*time.Second)
	if err != nil {
		return err
	}
	defer client.Close()
	msg, err := verifyLeaf(ctx, c, client, contract, *wallet, leaf)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, map[string]any{"verified": true, "leaf": leaf, "message": msg})
	}
	fmt.Fprintln(e.stdout, msg)
	return nil
}

// verifyLeaf checks that leaf is in the node's log (an inclusion proof from the node at c)
// under the root anchored in contract by wallet (default: the sender of the head's anchor
// transaction), read from the chain on its own. It returns what it verified. The reading is
// here; the checking is reputation/verify's, which an auditor's own program links.
func verifyLeaf(ctx context.Context, c *client.Client, rpc chain.Client, contract common.Address, wallet string, leaf verify.Hash) (string, error) {
	head, err := c.LogHead(ctx)
	if err != nil {
		return "", err
	}
	if head.Size == 0 {
		return "", errors.New("the node's log is empty: no epoch has closed yet")
	}
	proof, err := c.InclusionProof(ctx, leaf, head.Size)
	if err != nil {
		return "", err
	}
	from := common.HexToAddress(wallet)
	if wallet == "" {
		if head.AnchorTx == "" {
			return "", fmt.Errorf("the node's head (size %d) is not anchored yet; try again after its anchor transaction", head.Size)
		}
		tx, _, err := rpc.TransactionByHash(ctx, common.HexToHash(head.AnchorTx))
		if err != nil {
			return "", fmt.Errorf("anchor transaction %s: %w", head.AnchorTx, err)
		}
		if from, err = types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx); err != nil {
			return "", fmt.Errorf("anchor transaction %s: %w", head.AnchorTx, err)
		}
	}
	anchor := contracts.NewRootAnchor()
	root, err := bind.Call(anchor.Instance(rpc, contract), &bind.CallOpts{Context: ctx}, anchor.PackRootAt(from, proof.Size), anchor.UnpackRootAt)
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
