package testutil

import (
	"crypto/ecdsa"
	"errors"
	"math/big"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// Clef stands in for Clef's external API (account_version, account_list,
// account_signTransaction, account_signTypedData) for one key, answering as Clef does once
// its user approves each request; Refuse makes it answer as when the user declines. No Clef
// binary is packaged here, so the tests speak its API to this.
type Clef struct {
	// URL is its HTTP JSON-RPC endpoint on loopback.
	URL string
	// Refuse makes every signing request fail as a declined one does.
	Refuse atomic.Bool
	// Tamper makes it sign a transaction paying one wei more than asked (a signer not to be
	// trusted blindly).
	Tamper atomic.Bool
	// SignedTxs and SignedTyped count the signatures given.
	SignedTxs, SignedTyped atomic.Int32

	key *ecdsa.PrivateKey
}

// StartClef serves a Clef stand-in for key until the test ends.
func StartClef(t testing.TB, key *ecdsa.PrivateKey) *Clef {
	t.Helper()
	c := &Clef{key: key}
	srv := rpc.NewServer()
	if err := srv.RegisterName("account", &clefAPI{c}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Stop()
	})
	c.URL = hs.URL
	return c
}

// Address is the account it signs for.
func (c *Clef) Address() common.Address { return crypto.PubkeyToAddress(c.key.PublicKey) }

// clefAPI holds the methods served under the "account" namespace.
type clefAPI struct{ c *Clef }

func (a *clefAPI) Version() string { return "6.1.0" }

func (a *clefAPI) List() []common.Address { return []common.Address{a.c.Address()} }

func (a *clefAPI) SignTransaction(args apitypes.SendTxArgs, _ *string) (map[string]any, error) {
	if a.c.Refuse.Load() {
		return nil, errors.New("request denied")
	}
	if a.c.Tamper.Load() {
		args.Value = hexutil.Big(*new(big.Int).Add(args.Value.ToInt(), big.NewInt(1)))
	}
	tx, err := args.ToTransaction()
	if err != nil {
		return nil, err
	}
	signed, err := types.SignTx(tx, types.LatestSignerForChainID((*big.Int)(args.ChainID)), a.c.key)
	if err != nil {
		return nil, err
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return nil, err
	}
	a.c.SignedTxs.Add(1)
	return map[string]any{"raw": hexutil.Bytes(raw), "tx": signed}, nil
}

// SignTypedData signs EIP-712 data as Clef does: the digest of the typed data, v as 27/28.
func (a *clefAPI) SignTypedData(addr common.MixedcaseAddress, data apitypes.TypedData) (hexutil.Bytes, error) {
	if a.c.Refuse.Load() {
		return nil, errors.New("request denied")
	}
	if addr.Address() != a.c.Address() {
		return nil, errors.New("unknown account")
	}
	h, _, err := apitypes.TypedDataAndHash(data)
	if err != nil {
		return nil, err
	}
	sig, err := crypto.Sign(h, a.c.key)
	if err != nil {
		return nil, err
	}
	sig[64] += 27
	a.c.SignedTyped.Add(1)
	return sig, nil
}
