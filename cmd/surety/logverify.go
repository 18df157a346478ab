package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/auditor"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/reputation/verify"
)

func runLogCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{"verify": runLogVerify, "leaves": runLogLeaves}
	return runSubcommand(ctx, e, "log", "verify|leaves", sub, args)
}

// runLogVerify checks that an audit is in a node's log, against the root the chain holds:
// the node supplies the proof, the chain the root, and this command does the hashing. What
// the node signs (its head and its checkpoint) is checked against its DID on the way.
func runLogVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "log verify", "--rpc-url URL (--envelope FILE | --leaf HEX | --recompute DID) [flags]", strings.TrimSpace(`
Check that an audit is in a node's audit log, against the log root anchored on chain: the node
gives the inclusion proof, the chain gives the root, and the hashing happens here, so the
node is not trusted. On the way it checks what the node signs against the node's DID: its log
head (the JWS of /v1/log/head), and its checkpoint (/v1/log/checkpoint, a C2SP signed note
whose origin names this chain, the RootAnchor and the node), which must hold the head's size
and root or extend it (a consistency proof); and that the root anchored on chain is the
head's. One line per check; the first that fails is the error, with exit status 1.

A node on the embedded chain (make run) holds its chain in its own process: no one else has a
copy, and the only JSON-RPC for it is the node's relay, --rpc-url NODE/v1/rpc. Against it the
same checks run, but the anchored root is the node's word: they show that the node's head,
checkpoint, proof and anchor agree, not that anyone else holds the root. The command says so
(the "trusted:" line); on a shared chain, give a JSON-RPC you trust.

With --recompute DID it checks a score instead of one audit: it reads every leaf of the log up
to the head the node last scored (or --size), checks them against the head the node signed and
the root anchored on chain, replays the chain's facts at the anchor's block (wallet bindings,
stake, settled bounties) from --rpc-url, recomputes every agent's scores with the documented
formula (docs/REPUTATION.md, "Recomputing a score") and compares them with the scores the node
publishes (/v1/log/scores), bit for bit. Any difference is named, with exit status 1.`))
	node := fs.nodeURL()
	rpcURL := fs.rpcURL("the chain's JSON-RPC URL (where the root is anchored)")
	envelope := fs.String("envelope", "", "the audit as filed: its signed envelope, a file")
	leafHex := fs.String("leaf", "", "or the audit's leaf hash (hex)")
	anchorAddr := fs.String("anchor", "", "the RootAnchor contract (default: as the node's /v1/info says)")
	wallet := fs.String("wallet", "", "the node's anchoring wallet (default: the sender of the head's anchor transaction, read from the chain)")
	nodeDID := fs.String("node-did", "", "the node's DID, which must sign its head and checkpoint (default: as the node's /v1/info says; give it to not take the node's word for who it is)")
	recompute := fs.String("recompute", "", "recompute the scores of the node's anchored head from its log and the chain, and check this DID's and everyone's published scores")
	size := fs.Uint64("size", 0, "with --recompute: the anchored head to check (default: the latest the node scored)")
	deployment := fs.String("deployment", "", "with --recompute: the deployment file naming the contracts (default: as the node's /v1/info names them, which takes the node's word)")
	asJSON := fs.Bool("json", false, `print {"verified": true, "leaf": ..., "node": DID, "checks": [the lines], "message": the last}`)
	if err := fs.parse(args); err != nil {
		return err
	}
	if *recompute != "" {
		if *rpcURL == "" || *envelope != "" || *leafHex != "" || *anchorAddr != "" || *wallet != "" {
			return usagef("--recompute DID takes --rpc-url (a JSON-RPC of the chain you trust) and --deployment FILE to pin the contracts, not --envelope, --leaf, --anchor or --wallet")
		}
		if _, err := identity.ParseDID(*recompute); err != nil {
			return usagef("--recompute: %v", err)
		}
		var dep *contracts.Deployment
		if *deployment != "" {
			data, err := os.ReadFile(*deployment)
			if err != nil {
				return usagef("--deployment: %v", err)
			}
			if dep, err = contracts.ParseDeployment(data); err != nil {
				return usagef("--deployment %s: %v", *deployment, err)
			}
		}
		return runRecompute(ctx, e, *node, *rpcURL, *nodeDID, *recompute, *size, dep, *asJSON)
	}
	if *rpcURL == "" || (*envelope == "") == (*leafHex == "") {
		return usagef("give --rpc-url (on a node with the embedded chain, its relay: --rpc-url NODE/v1/rpc, which trusts the node), and one of --envelope FILE or --leaf HEX")
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
	if *nodeDID != "" && !strings.HasPrefix(*nodeDID, "did:key:") {
		return usagef("--node-did %q is not a did:key", *nodeDID)
	}
	c, info, err := dialNode(ctx, *node)
	if err != nil {
		return err
	}
	did := *nodeDID
	if did == "" {
		if did = info.NodeDID; did == "" {
			return errors.New("the node's /v1/info names no node DID: give --node-did")
		}
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
	var checks []string
	report := func(line string) {
		if checks = append(checks, line); !*asJSON {
			fmt.Fprintln(e.stdout, line)
		}
	}
	msg, err := verifyLeaf(ctx, c, client, contract, *wallet, did, leaf, report)
	if err != nil {
		return err
	}
	trusts := "the chain at --rpc-url"
	if why := chainOfTheNode(info.Chain.Kind, *node, *rpcURL); why != "" {
		trusts = "the node"
		report("trusted: the node itself: " + why + ", so the root anchored there is the node's word; these checks show that its head, checkpoint, proof and anchor agree, not that anyone else holds the root (on a shared chain, give --rpc-url of a JSON-RPC you trust)")
	}
	report(msg)
	if *asJSON {
		return printJSON(e, map[string]any{"verified": true, "leaf": leaf, "node": did, "trusts": trusts, "checks": checks, "message": msg})
	}
	return nil
}

// runRecompute checks the node's published scores of an anchored head against what its log
// and the chain at rpcURL give (package auditor), and did's in particular.
func runRecompute(ctx context.Context, e *env, nodeURL, rpcURL, nodeDID, did string, size uint64, dep *contracts.Deployment, asJSON bool) error {
	c, info, err := dialNode(ctx, nodeURL)
	if err != nil {
		return err
	}
	rpc, err := chain.Dial(ctx, rpcURL, 5*time.Second)
	if err != nil {
		return err
	}
	defer rpc.Close()
	var checks []string
	report := func(line string) {
		if checks = append(checks, line); !asJSON {
			fmt.Fprintln(e.stdout, line)
		}
	}
	if size == 0 {
		if err := waitScored(ctx, e, c); err != nil {
			return err
		}
	}
	rep, err := auditor.Check(ctx, auditor.CheckConfig{Node: c, Chain: rpc, NodeDID: nodeDID, Deployment: dep, Size: size, DID: did, Progress: report})
	if err != nil {
		return fmt.Errorf("NOT verified: %w", err)
	}
	for _, t := range rep.Trusted {
		report("trusted: " + t)
	}
	if why := chainOfTheNode(info.Chain.Kind, nodeURL, rpcURL); why != "" {
		report("trusted: the node itself: " + why + ", so the chain's facts and anchor are the node's word; the recomputation shows that its scores follow from its log and what it says the chain holds (on a shared chain, give --rpc-url of a JSON-RPC you trust)")
	}
	if len(rep.Mismatches) > 0 {
		for _, m := range rep.Mismatches {
			report("differs: " + m.String())
		}
		return fmt.Errorf("NOT verified: %d of the node's published figures at head %d are not what its log and the chain give (the first: %s)", len(rep.Mismatches), rep.Size, rep.Mismatches[0])
	}
	s := rep.Subject
	msg := fmt.Sprintf("verified: %s's score %v (confidence %v, weight %v) at head %d follows from the log and the chain, bit for bit, as do all %d agents' published scores",
		did, s.Score, s.Confidence, s.Weight, rep.Size, rep.Agents)
	report(msg)
	if asJSON {
		return printJSON(e, map[string]any{"verified": true, "did": did, "size": rep.Size, "score": s.Score, "confidence": s.Confidence,
			"weight": s.Weight, "agents": rep.Agents, "audits": rep.Audits, "block": rep.Anchor.Block, "trusts": rep.Trusted, "checks": checks, "message": msg})
	}
	return nil
}

// scoredWait bounds how long log verify --recompute waits for a node whose latest head is
// anchored to publish its scores (it scores each head once the anchor is confirmed).
const scoredWait = time.Minute

// waitScored waits, saying so once, while the node has scored no head yet but its latest head
// is anchored: the scores follow within seconds. Any other answer is left to the check.
func waitScored(ctx context.Context, e *env, c *client.Client) error {
	deadline := time.Now().Add(scoredWait)
	said := false
	for {
		_, err := c.LogScores(ctx, 0, "", "", 1, false)
		var ce *client.Error
		if err == nil || !errors.As(err, &ce) || ce.Slug() != "not-scored" {
			if said {
				e.progressDone("the node scored its anchored head")
			}
			return nil
		}
		head, herr := c.LogHead(ctx)
		if herr != nil || head.AnchorTx == "" || time.Now().After(deadline) {
			if said {
				e.endLine()
			}
			return nil // the check names what is missing
		}
		if !said {
			e.progressf("waiting for the node to score its anchored head of size %d…", head.Size)
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// chainOfTheNode says why the chain at rpcURL answers only as the node does ("" when it need
// not): the node's chain is embedded in its process, or rpcURL is the node's own relay.
func chainOfTheNode(kind, nodeURL, rpcURL string) string {
	if kind == "embedded" {
		return "its chain is embedded in its process (no one else holds a copy)"
	}
	n, err1 := url.Parse(nodeURL)
	r, err2 := url.Parse(rpcURL)
	if err1 == nil && err2 == nil && n.Host != "" && strings.EqualFold(n.Host, r.Host) {
		return "--rpc-url is the node's own relay of its chain"
	}
	return ""
}

// verifyLeaf checks that leaf is in the log of node (a DID), served by the node at c (an
// inclusion proof), under the root anchored in contract by wallet (default: the sender of
// the head's anchor transaction), read from the chain on its own. On the way it checks the
// node's signed head and checkpoint (checkNodeLog) and that the anchored root is the head's.
// It reports each check that passed and returns the last, the leaf's. The reading is here;
// the checking is reputation/verify's, which an auditor's own program links.
func verifyLeaf(ctx context.Context, c *client.Client, rpc chain.Client, contract common.Address, wallet, node string, leaf verify.Hash, report func(string)) (string, error) {
	served, err := c.LogHead(ctx)
	if err != nil {
		return "", err
	}
	if served.Size == 0 {
		return "", errors.New("the node's log is empty: no epoch has closed yet")
	}
	chainID, err := rpc.ChainID(ctx)
	if err != nil {
		return "", fmt.Errorf("read the chain id: %w", err)
	}
	note, err := c.LogCheckpoint(ctx)
	if err != nil {
		return "", fmt.Errorf("the node's checkpoint: %w", err)
	}
	head, err := checkNodeLog(ctx, served, note, verify.Origin(chainID.Uint64(), contract.Hex(), node), node, c.ConsistencyProof, report)
	if err != nil {
		return "", err
	}
	proof, err := c.InclusionProof(ctx, leaf, head.Size)
	if err != nil {
		return "", err
	}
	from := common.HexToAddress(wallet)
	if wallet == "" {
		if served.AnchorTx == "" {
			return "", fmt.Errorf("the node's head (size %d) is not anchored yet; try again after its anchor transaction", head.Size)
		}
		tx, _, err := rpc.TransactionByHash(ctx, common.HexToHash(served.AnchorTx))
		if err != nil {
			return "", fmt.Errorf("anchor transaction %s: %w", served.AnchorTx, err)
		}
		if from, err = types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx); err != nil {
			return "", fmt.Errorf("anchor transaction %s: %w", served.AnchorTx, err)
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
	if verify.Hash(root) != head.Root {
		return "", fmt.Errorf("NOT verified: the root anchored by %s at size %d is %s, not the node's signed head's %s", from.Hex(), head.Size, verify.Hash(root), head.Root)
	}
	p := verify.InclusionProof{Leaf: proof.Leaf, Index: proof.Index, Size: proof.Size, Path: proof.Path}
	if err := verify.Inclusion(leaf, p, proof.Size, verify.Hash(root)); err != nil {
		return "", fmt.Errorf("NOT verified: leaf %s against the root anchored at size %d: %w", leaf, proof.Size, err)
	}
	return fmt.Sprintf("verified: leaf %s is entry %d of the log of size %d, whose root %s is anchored on chain by %s in %s",
		leaf, proof.Index, proof.Size, verify.Hash(root), from.Hex(), contract.Hex()), nil
}

// checkNodeLog checks what the node served against its identity node: served's JWS must be
// node's signature over served's size and root (verify.OpenHead), and note, the node's
// checkpoint, a signed note by node under origin (verify.OpenCheckpoint) whose size and root
// are the head's or, when the log grew (or the node answered an older head) between the two
// requests, consistent with it by the proof consistency gets. It reports each check that
// passed and returns the signed head.
func checkNodeLog(ctx context.Context, served wire.Head, note []byte, origin, node string,
	consistency func(ctx context.Context, from, to uint64) (wire.ConsistencyProof, error), report func(string)) (verify.Head, error) {
	head, err := verify.OpenHead(served.Signed, node)
	if err != nil {
		return verify.Head{}, fmt.Errorf("NOT verified: the node's head: %w", err)
	}
	if head.Size != served.Size || head.Root != served.Root {
		return verify.Head{}, fmt.Errorf("NOT verified: the node's head says size %d, root %s but signs size %d, root %s", served.Size, served.Root, head.Size, head.Root)
	}
	report(fmt.Sprintf("verified: head of size %d, root %s, epoch %d, signed by %s", head.Size, head.Root, head.Epoch, node))
	cp, err := verify.OpenCheckpoint(note, origin, node)
	if err != nil {
		return verify.Head{}, fmt.Errorf("NOT verified: the node's checkpoint: %w", err)
	}
	switch {
	case cp.Size == head.Size && cp.Root != head.Root:
		return verify.Head{}, fmt.Errorf("NOT verified: the node's checkpoint of size %d has root %s, its head %s", cp.Size, cp.Root, head.Root)
	case cp.Size == head.Size:
		report(fmt.Sprintf("verified: checkpoint %s of size %d signed by the node, the head's size and root", origin, cp.Size))
	default:
		older, newer := head, verify.Head{Size: cp.Size, Root: cp.Root}
		if cp.Size < head.Size {
			older, newer = newer, head
		}
		p, err := consistency(ctx, older.Size, newer.Size)
		if err != nil {
			return verify.Head{}, fmt.Errorf("the node's consistency proof from %d to %d: %w", older.Size, newer.Size, err)
		}
		if err := verify.Consistency(older, newer, verify.ConsistencyProof{From: p.From, To: p.To, Path: p.Path}); err != nil {
			return verify.Head{}, fmt.Errorf("NOT verified: the node's checkpoint of size %d and its head of size %d: %w", cp.Size, head.Size, err)
		}
		report(fmt.Sprintf("verified: checkpoint %s of size %d signed by the node, consistent with the head (size %d to %d)", origin, cp.Size, older.Size, newer.Size))
	}
	return head, nil
}
