package txn

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/external"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// Signer signs a wallet's transactions. A key the node holds is one (KeySigner); a user's
// keystore, an external signer or a hardware wallet can be another. SignTx returns an error,
// and signs nothing, when it will not sign tx.
type Signer interface {
	Address() common.Address
	SignTx(ctx context.Context, tx *types.Transaction, chainID *big.Int) (*types.Transaction, error)
}

// TypedDataSigner is a Signer that also signs EIP-712 typed data as its wallet (wallet
// bindings): 65 bytes, v 27 or 28. KeySigner and ExternalSigner are ones.
type TypedDataSigner interface {
	Signer
	SignTypedData(ctx context.Context, data apitypes.TypedData) ([]byte, error)
}

var (
	_ TypedDataSigner = KeySigner{}
	_ TypedDataSigner = (*ExternalSigner)(nil)
)

// KeySigner signs with a private key held in memory.
type KeySigner struct{ key *ecdsa.PrivateKey }

var _ Signer = KeySigner{}

// NewKeySigner signs with key.
func NewKeySigner(key *ecdsa.PrivateKey) KeySigner { return KeySigner{key: key} }

// Address is the key's account.
func (k KeySigner) Address() common.Address { return crypto.PubkeyToAddress(k.key.PublicKey) }

// SignTypedData signs EIP-712 data with the key: 65 bytes, v 27 or 28, as wallets sign it.
func (k KeySigner) SignTypedData(_ context.Context, data apitypes.TypedData) ([]byte, error) {
	h, _, err := apitypes.TypedDataAndHash(data)
	if err != nil {
		return nil, fmt.Errorf("sign typed data: %w", err)
	}
	sig, err := crypto.Sign(h, k.key)
	if err != nil {
		return nil, err
	}
	sig[64] += 27
	return sig, nil
}

// SignTx signs tx for chainID.
func (k KeySigner) SignTx(_ context.Context, tx *types.Transaction, chainID *big.Int) (*types.Transaction, error) {
	return types.SignTx(tx, types.LatestSignerForChainID(chainID), k.key)
}

// WalletSigner signs through a go-ethereum accounts.Wallet: an external signer such as Clef
// (which also fronts hardware wallets), or an unlocked keystore.
type WalletSigner struct {
	wallet  accounts.Wallet
	account accounts.Account
}

var _ Signer = WalletSigner{}

// NewWalletSigner signs as account through wallet.
func NewWalletSigner(wallet accounts.Wallet, account accounts.Account) WalletSigner {
	return WalletSigner{wallet: wallet, account: account}
}

// ExternalSigner signs through Clef's external API (which also fronts hardware wallets):
// transactions, naming the method each calls, and EIP-712 typed data, neither of which
// go-ethereum's client of that API (used here to list the accounts) asks for.
type ExternalSigner struct {
	WalletSigner
	rpc *rpc.Client
	// methods names the calls this client makes (selector → "name(types)"), so Clef can show
	// its user what a transaction calls, and sign it without --advanced (Clef refuses data
	// it cannot decode otherwise).
	methods map[[4]byte]string
}

// Describe teaches the signer the methods of abis, to name in each signing request.
func (e *ExternalSigner) Describe(abis ...*abi.ABI) {
	if e.methods == nil {
		e.methods = map[[4]byte]string{}
	}
	for _, a := range abis {
		for _, m := range a.Methods {
			e.methods[[4]byte(m.ID)] = m.Sig
		}
	}
}

// SignTx asks the signer to sign tx (Clef's account_signTransaction, naming the method it
// calls when Describe taught it; Clef may ask its user first). Legacy, access-list and
// EIP-1559 transactions are signed; the signed one must be tx, signed by the account.
func (e *ExternalSigner) SignTx(ctx context.Context, tx *types.Transaction, chainID *big.Int) (*types.Transaction, error) {
	input := hexutil.Bytes(tx.Data())
	args := apitypes.SendTxArgs{
		From: common.NewMixedcaseAddress(e.account.Address), Gas: hexutil.Uint64(tx.Gas()),
		Value: hexutil.Big(*tx.Value()), Nonce: hexutil.Uint64(tx.Nonce()), Input: &input,
		ChainID: (*hexutil.Big)(chainID),
	}
	if to := tx.To(); to != nil {
		m := common.NewMixedcaseAddress(*to)
		args.To = &m
	}
	switch tx.Type() {
	case types.LegacyTxType:
		args.GasPrice = (*hexutil.Big)(tx.GasPrice())
	case types.AccessListTxType:
		args.GasPrice = (*hexutil.Big)(tx.GasPrice())
		al := tx.AccessList()
		args.AccessList = &al
	case types.DynamicFeeTxType:
		args.MaxFeePerGas, args.MaxPriorityFeePerGas = (*hexutil.Big)(tx.GasFeeCap()), (*hexutil.Big)(tx.GasTipCap())
		al := tx.AccessList()
		args.AccessList = &al
	default:
		return nil, fmt.Errorf("external signer: transactions of type %d are not signed here", tx.Type())
	}
	var method *string
	if len(input) >= 4 && tx.To() != nil {
		if sig, ok := e.methods[[4]byte(input[:4])]; ok {
			method = &sig
		}
	}
	var res struct {
		Raw hexutil.Bytes `json:"raw"`
	}
	if err := e.rpc.CallContext(ctx, &res, "account_signTransaction", args, method); err != nil {
		return nil, fmt.Errorf("external signer: %w", err)
	}
	signed := new(types.Transaction)
	if err := signed.UnmarshalBinary(res.Raw); err != nil {
		return nil, fmt.Errorf("external signer: the signed transaction: %w", err)
	}
	from, err := types.Sender(types.LatestSignerForChainID(chainID), signed)
	if err != nil || from != e.account.Address || signed.Type() != tx.Type() || !signed.Protected() || signed.ChainId().Cmp(chainID) != 0 ||
		signed.Nonce() != tx.Nonce() || signed.Gas() != tx.Gas() ||
		signed.Value().Cmp(tx.Value()) != 0 || signed.GasFeeCap().Cmp(tx.GasFeeCap()) != 0 || signed.GasTipCap().Cmp(tx.GasTipCap()) != 0 ||
		!bytes.Equal(signed.Data(), tx.Data()) || (signed.To() == nil) != (tx.To() == nil) ||
		signed.To() != nil && *signed.To() != *tx.To() {
		return nil, fmt.Errorf("external signer: it signed another transaction than asked (from %s)", from.Hex())
	}
	return signed, nil
}

// NewExternalSigner signs as from through the external signer at url (Clef's API: an
// http(s) URL or an IPC path). It fails when the signer does not answer, or does not list
// from among its accounts (Clef asks its user whether to list them).
func NewExternalSigner(url string, from common.Address) (*ExternalSigner, error) {
	ext, err := external.NewExternalSigner(url)
	if err != nil {
		return nil, fmt.Errorf("external signer %s: %w", url, err)
	}
	acct := accounts.Account{Address: from}
	if !ext.Contains(acct) {
		return nil, fmt.Errorf("external signer %s: it does not list account %s", url, from.Hex())
	}
	c, err := rpc.Dial(url)
	if err != nil {
		return nil, fmt.Errorf("external signer %s: %w", url, err)
	}
	return &ExternalSigner{WalletSigner: NewWalletSigner(ext, acct), rpc: c}, nil
}

// SignTypedData asks the signer to sign EIP-712 data as the account (Clef's
// account_signTypedData; Clef may ask its user first). The signature is 65 bytes, v 27 or 28.
func (e *ExternalSigner) SignTypedData(ctx context.Context, data apitypes.TypedData) ([]byte, error) {
	var sig hexutil.Bytes
	addr := common.NewMixedcaseAddress(e.account.Address)
	if err := e.rpc.CallContext(ctx, &sig, "account_signTypedData", &addr, data); err != nil {
		return nil, fmt.Errorf("external signer: sign typed data as %s: %w", e.account.Address.Hex(), err)
	}
	if len(sig) != 65 {
		return nil, fmt.Errorf("external signer: a typed-data signature of %d bytes, want 65", len(sig))
	}
	if sig[64] < 27 {
		sig[64] += 27
	}
	return sig, nil
}

// Close ends the connection to the signer.
func (e *ExternalSigner) Close() { e.rpc.Close() }

// Address is the account signed for.
func (w WalletSigner) Address() common.Address { return w.account.Address }

// SignTx asks the wallet to sign tx (an external signer may ask its user first).
func (w WalletSigner) SignTx(_ context.Context, tx *types.Transaction, chainID *big.Int) (*types.Transaction, error) {
	return w.wallet.SignTx(w.account, tx, chainID)
}
