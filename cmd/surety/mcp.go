package main

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surety-ioa/surety/mcp"
)

func runMCPCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "mcp", "[--node URL] [--key KEYFILE [--wallet ADDR]]", strings.TrimSpace(`
Serve a node to an LLM agent over the Model Context Protocol on standard input and output
(stdio transport): tools to resolve DIDs, search agents, show reputations with their proofs
and bounties with their task text, post, claim, submit, accept and dispute bounties, post to
groups and file audits; resources surety://agents/{did} and surety://bounties/{id}.

With --key the server signs each write with your DID's key (it never returns the key); with
--wallet, a wallet the node holds and your DID is bound to, bounty writes act from it.
Without --key every write takes your own signed envelope as its envelope argument. The node
also serves the same tools at /mcp (streamable HTTP), where writes always take your envelope.

Example (an MCP client's server entry): surety mcp --node http://127.0.0.1:7746 --key agent.key --wallet 0x...`))
	node := fs.nodeURL()
	keyFile := fs.String("key", "", "your DID's private key file (from 'surety did new'): writes are signed with it")
	wallet := fs.String("wallet", "", "the wallet (bound to your DID, held by the node) bounty writes act from")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *wallet != "" && !common.IsHexAddress(*wallet) {
		return usagef("--wallet %q is not an address", *wallet)
	}
	if *wallet != "" && *keyFile == "" {
		return usagef("--wallet acts for the DID of --key: give --key KEYFILE too")
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	cfg := mcp.Config{Node: c.WithTimeout(mcp.WriteTimeout), Version: version}
	if *keyFile != "" {
		k, err := readKeyFile(*keyFile)
		if err != nil {
			return err
		}
		cfg.Signer = &mcp.Signer{Key: k, Wallet: common.HexToAddress(*wallet)}
	}
	in := e.stdin
	if in == nil {
		in = strings.NewReader("")
	}
	err = mcp.New(cfg).Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{e.stdout}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) || err != nil && strings.Contains(err.Error(), "EOF") {
		return nil // the client went away (stdin closed) or the command was interrupted
	}
	return err
}

// nopWriteCloser is standard output as the transport's writer: closing the session leaves
// it open.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
