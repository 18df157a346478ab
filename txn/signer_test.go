package txn_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/txn"
)

// TestExternalSignerSendsThroughClefsAPI: a wallet behind Clef's API (go-ethereum's own
// client of it) signs what the Sender builds, and the chain takes it; a declined signature
// sends nothing; an account the signer does not list is refused at once.
func TestExternalSignerSendsThroughClefsAPI(t *testing.T) {
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(2, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fake := testutil.StartClef(t, chain.DevKey(1))
	from, to := crypto.PubkeyToAddress(chain.DevKey(1).PublicKey), common.Address{0xbe, 0xef}
	if _, err := txn.NewExternalSigner(fake.URL, common.Address{1}); err == nil || !strings.Contains(err.Error(), "does not list") {
		t.Errorf("an account the signer does not list: %v", err)
	}
	signer, err := txn.NewExternalSigner(fake.URL, from)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	snd, err := txn.NewSender(ctx, c, signer, 0)
	if err != nil {
		t.Fatal(err)
	}
	fake.Refuse.Store(true)
	if _, err := snd.Send(ctx, txn.Call{To: to, Value: big.NewInt(7)}); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("a declined signature: %v", err)
	}
	fake.Refuse.Store(false)
	fake.Tamper.Store(true)
	if _, err := snd.Send(ctx, txn.Call{To: to, Value: big.NewInt(7)}); err == nil || !strings.Contains(err.Error(), "signed another transaction") {
		t.Errorf("a signer that signed another transaction: %v", err)
	}
	fake.Tamper.Store(false)
	r, err := snd.Send(ctx, txn.Call{To: to, Value: big.NewInt(7)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.BalanceAt(ctx, to, nil); err != nil || got.Int64() != 7 {
		t.Errorf("the recipient holds %v (%v), want the 7 wei sent", got, err)
	}
	if fake.SignedTxs.Load() != 2 || r.Status != types.ReceiptStatusSuccessful {
		t.Errorf("signed %d times, receipt status %d; want two signatures (the tampered one never sent), one successful transaction", fake.SignedTxs.Load(), r.Status)
	}
}

// TestExternalSignerSignsTypedData: a wallet behind Clef's API signs EIP-712 data
// (account_signTypedData; a wallet binding is such data) as a key in hand does, v 27 or 28;
// a declined request is an error.
func TestExternalSignerSignsTypedData(t *testing.T) {
	key := chain.DevKey(3)
	fake := testutil.StartClef(t, key)
	signer, err := txn.NewExternalSigner(fake.URL, fake.Address())
	if err != nil {
		t.Fatal(err)
	}
	defer signer.Close()
	data := apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {{Name: "name", Type: "string"}, {Name: "chainId", Type: "uint256"}},
			"Note":         {{Name: "text", Type: "string"}, {Name: "at", Type: "uint256"}},
		},
		PrimaryType: "Note",
		Domain:      apitypes.TypedDataDomain{Name: "test", ChainId: math.NewHexOrDecimal256(31337)},
		Message:     apitypes.TypedDataMessage{"text": "hello", "at": math.NewHexOrDecimal256(1700000000)},
	}
	ctx := context.Background()
	sig, err := signer.SignTypedData(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	local, err := txn.NewKeySigner(key).SignTypedData(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sig, local) || len(sig) != 65 || sig[64] < 27 || fake.SignedTyped.Load() != 1 {
		t.Errorf("Clef's signature %x, the key's %x (%d signed): want the same 65 bytes, v 27/28, signed once", sig, local, fake.SignedTyped.Load())
	}
	h, _, err := apitypes.TypedDataAndHash(data)
	if err != nil {
		t.Fatal(err)
	}
	rsv := append([]byte(nil), sig...)
	rsv[64] -= 27
	if pub, err := crypto.SigToPub(h, rsv); err != nil || crypto.PubkeyToAddress(*pub) != fake.Address() {
		t.Errorf("the signature does not recover to the wallet (%v)", err)
	}
	fake.Refuse.Store(true)
	if _, err := signer.SignTypedData(ctx, data); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("a declined request: %v", err)
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

// TestSenderFees: named fees are offered as they are; a suggested tip above the sender's
// limit (a relay's word) is refused before anything is signed, as is a fee cap below the tip.
func TestSenderFees(t *testing.T) {
	ctx := context.Background()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(2, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	snd, err := txn.NewSender(ctx, c, txn.NewKeySigner(chain.DevKey(1)), 0)
	if err != nil {
		t.Fatal(err)
	}
	to := common.Address{0xfe}
	tip, feeCap := big.NewInt(3e9), big.NewInt(50e9)
	snd.SetFees(txn.Fees{Tip: tip, FeeCap: feeCap, MaxSuggestedTip: big.NewInt(1)})
	r, err := snd.Send(ctx, txn.Call{To: to, Value: big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	tx, _, err := c.TransactionByHash(ctx, r.TxHash)
	if err != nil {
		t.Fatal(err)
	}
	if tx.GasTipCap().Cmp(tip) != 0 || tx.GasFeeCap().Cmp(feeCap) != 0 {
		t.Errorf("offered tip %s and fee cap %s, want the named %s and %s", tx.GasTipCap(), tx.GasFeeCap(), tip, feeCap)
	}
	for _, tc := range []struct {
		name string
		fees txn.Fees
	}{
		{"suggested tip above the limit", txn.Fees{MaxSuggestedTip: big.NewInt(0)}},
		{"fee cap below the tip", txn.Fees{Tip: big.NewInt(2e9), FeeCap: big.NewInt(1e9)}},
	} {
		snd.SetFees(tc.fees)
		if _, err := snd.Send(ctx, txn.Call{To: to, Value: big.NewInt(1)}); !errors.Is(err, txn.ErrFeeTooHigh) {
			t.Errorf("%s: %v, want ErrFeeTooHigh", tc.name, err)
		}
	}
	if n, err := c.NonceAt(ctx, snd.Address(), nil); err != nil || n != 1 {
		t.Errorf("nonce %d (%v): the refused sends sent something", n, err)
	}
}
