package txn_test

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/txn"
)

// clef answers Clef's external API (account_version, account_list,
// account_signTransaction) for one key, as Clef does once its user approves; refuse makes
// it answer as when the user declines.
type clef struct {
	key    *ecdsa.PrivateKey
	refuse atomic.Bool
	signed atomic.Int32
}

func (c *clef) Version() string { return "6.1.0" }

func (c *clef) List() []common.Address {
	return []common.Address{crypto.PubkeyToAddress(c.key.PublicKey)}
}

func (c *clef) SignTransaction(args apitypes.SendTxArgs, _ *string) (map[string]any, error) {
	if c.refuse.Load() {
		return nil, errors.New("Request denied")
	}
	tx, err := args.ToTransaction()
	if err != nil {
		return nil, err
	}
	signed, err := types.SignTx(tx, types.LatestSignerForChainID((*big.Int)(args.ChainID)), c.key)
	if err != nil {
		return nil, err
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return nil, err
	}
	c.signed.Add(1)
	return map[string]any{"raw": hexutil.Bytes(raw), "tx": signed}, nil
}

// TestExternalSignerSendsThroughClefsAPI: a wallet behind Clef's API (go-ethereum's own
// client of it) signs what the Sender builds, and the chain takes it; a declined signature
// sends nothing; an account the signer does not list is refused at once.
func TestExternalSignerSendsThroughClefsAPI(t *testing.T) {
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(2, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fake := &clef{key: chain.DevKey(1)}
	srv := rpc.NewServer()
	if err := srv.RegisterName("account", fake); err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	from, to := crypto.PubkeyToAddress(chain.DevKey(1).PublicKey), common.Address{0xbe, 0xef}
	if _, err := txn.NewExternalSigner(hs.URL, common.Address{1}); err == nil || !strings.Contains(err.Error(), "does not list") {
		t.Errorf("an account the signer does not list: %v", err)
	}
	signer, err := txn.NewExternalSigner(hs.URL, from)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	snd, err := txn.NewSender(ctx, c, signer, 0)
	if err != nil {
		t.Fatal(err)
	}
	fake.refuse.Store(true)
	if _, err := snd.Send(ctx, txn.Call{To: to, Value: big.NewInt(7)}); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("a declined signature: %v", err)
	}
	fake.refuse.Store(false)
	r, err := snd.Send(ctx, txn.Call{To: to, Value: big.NewInt(7)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.BalanceAt(ctx, to, nil); err != nil || got.Int64() != 7 {
		t.Errorf("the recipient holds %v (%v), want the 7 wei sent", got, err)
	}
	if fake.signed.Load() != 1 || r.Status != types.ReceiptStatusSuccessful {
		t.Errorf("signed %d times, receipt status %d; want one signature, one successful transaction", fake.signed.Load(), r.Status)
	}
}

// TestRaiseApprovesOnlyWhatIsShort: an allowance that suffices sends nothing; a zero one is
// approved in one transaction; a short one that is not zero is reset to zero first (tokens
// such as USDT refuse to change it otherwise), then approved: two transactions.
func TestRaiseApprovesOnlyWhatIsShort(t *testing.T) {
	ctx := context.Background()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(2, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	token, err := contracts.DeployDevToken(ctx, c, chain.DevKey(0), "Dev", "DEV")
	if err != nil {
		t.Fatal(err)
	}
	key, spender := chain.DevKey(1), common.Address{0x5e}
	snd, err := txn.NewSender(ctx, c, txn.NewKeySigner(key), 0)
	if err != nil {
		t.Fatal(err)
	}
	erc20 := contracts.NewIERC20()
	allowance := func() *big.Int {
		t.Helper()
		v, err := bind.Call(erc20.Instance(c, token), nil, erc20.PackAllowance(snd.Address(), spender), erc20.UnpackAllowance)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	approve := func(x *big.Int) []byte { return erc20.PackApprove(spender, x) }
	for _, step := range []struct {
		amount int64
		sends  uint64
	}{{5, 1}, {3, 0}, {5, 0}, {9, 2}} {
		before, err := c.PendingNonceAt(ctx, snd.Address())
		if err != nil {
			t.Fatal(err)
		}
		if err := snd.Raise(ctx, token, allowance(), big.NewInt(step.amount), approve); err != nil {
			t.Fatal(err)
		}
		after, err := c.PendingNonceAt(ctx, snd.Address())
		if err != nil {
			t.Fatal(err)
		}
		if after-before != step.sends || allowance().Int64() < step.amount {
			t.Errorf("raise to %d: %d transactions, allowance %v; want %d transactions and at least %d", step.amount, after-before, allowance(), step.sends, step.amount)
		}
	}
}
