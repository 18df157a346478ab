package chain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// Client is what Surety needs from a chain connection. Both *ethclient.Client and *Embedded
// implement it.
type Client interface {
	ethereum.BlockNumberReader
	ethereum.ChainReader
	ethereum.ChainStateReader
	ethereum.ContractCaller
	ethereum.GasEstimator
	ethereum.GasPricer
	ethereum.GasPricer1559
	ethereum.FeeHistoryReader
	ethereum.LogFilterer
	ethereum.PendingStateReader
	ethereum.PendingContractCaller
	ethereum.TransactionReader
	ethereum.TransactionSender
	ethereum.ChainIDReader
	Close()
}

var (
	_ Client = (*ethclient.Client)(nil)
	_ Client = (*Embedded)(nil)
)

// ErrUnreachable reports an RPC endpoint that did not answer.
var ErrUnreachable = errors.New("chain: rpc endpoint unreachable")

// UnreachableError says which endpoint did not answer, and why. It matches ErrUnreachable.
type UnreachableError struct {
	URL string
	Err error
}

// Error names the endpoint and the root cause.
func (e *UnreachableError) Error() string {
	// The innermost cause ("connection refused") says it all; the layers around it repeat the URL.
	cause := e.Err
	for {
		next := errors.Unwrap(cause)
		if next == nil {
			break
		}
		cause = next
	}
	return fmt.Sprintf("cannot reach RPC %s: %v", e.URL, cause)
}

// Unwrap returns the cause.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Is reports whether target is ErrUnreachable.
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// MaxRPCConns bounds the connections to an http(s) JSON-RPC endpoint, kept open for reuse:
// calls beyond them wait for one (within their ctx). Without it every concurrent call opened
// a connection and most were closed after one use: under the public node's load test
// (issue 25) a node held ~1,000 connections to its chain, their goroutines and buffers.
const MaxRPCConns = 64

// Dial connects to the JSON-RPC endpoint at rawURL (http, https, ws or wss) and checks that it
// answers eth_chainId within timeout, so a wrong URL fails at start, not at the first bounty.
// Over http(s) it holds at most MaxRPCConns connections.
func Dial(ctx context.Context, rawURL string, timeout time.Duration) (*ethclient.Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("rpc %q is not a URL like http://127.0.0.1:8545", rawURL)
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return nil, fmt.Errorf("rpc %q: scheme must be http, https, ws or wss", rawURL)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var opts []rpc.ClientOption
	if u.Scheme == "http" || u.Scheme == "https" {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxConnsPerHost, t.MaxIdleConnsPerHost = MaxRPCConns, MaxRPCConns
		opts = append(opts, rpc.WithHTTPClient(&http.Client{Transport: t}))
	}
	rc, err := rpc.DialOptions(ctx, rawURL, opts...)
	if err != nil {
		return nil, &UnreachableError{URL: rawURL, Err: err}
	}
	c := ethclient.NewClient(rc)
	if _, err := c.ChainID(ctx); err != nil {
		c.Close()
		return nil, &UnreachableError{URL: rawURL, Err: err}
	}
	return c, nil
}

// Identity names a chain: its id and the hash of its genesis block. Two runs of the embedded
// chain, or two Anvil runs, differ in genesis even though they share a chain id.
type Identity struct {
	ChainID *big.Int
	Genesis common.Hash
}

// Identify reads the chain id and the genesis hash from c.
func Identify(ctx context.Context, c Client) (Identity, error) {
	id, err := c.ChainID(ctx)
	if err != nil {
		return Identity{}, fmt.Errorf("identify chain: chain id: %w", err)
	}
	genesis, err := c.HeaderByNumber(ctx, big.NewInt(0))
	if err != nil {
		return Identity{}, fmt.Errorf("identify chain: genesis: %w", err)
	}
	return Identity{ChainID: id, Genesis: genesis.Hash()}, nil
}

// Key derives the scope key of chain-derived state from the chain identity and the contract
// addresses (in a fixed order chosen by the caller): a short hex digest, stable for the same
// chain and deployment, different for anything else.
func Key(id Identity, contracts []common.Address) string {
	h := sha256.New()
	h.Write(id.ChainID.Bytes())
	h.Write([]byte{0})
	h.Write(id.Genesis.Bytes())
	for _, a := range contracts {
		h.Write(a.Bytes())
	}
	return fmt.Sprintf("%s-%s", id.ChainID, hex.EncodeToString(h.Sum(nil)[:8]))
}
