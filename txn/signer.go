package txn

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/external"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Signer signs a wallet's transactions. A key the node holds is one (KeySigner); a user's
// keystore, an external signer or a hardware wallet can be another. SignTx returns an error,
// and signs nothing, when it will not sign tx.
type Signer interface {
	Address() common.Address
	SignTx(ctx context.Context, tx *types.Transaction, chainID *big.Int) (*types.Transaction, error)
}

// KeySigner signs with a private key held in memory.
type KeySigner struct{ key *ecdsa.PrivateKey }

var _ Signer = KeySigner{}

// NewKeySigner signs with key.
func NewKeySigner(key *ecdsa.PrivateKey) KeySigner { return KeySigner{key: key} }

// Address is the key's account.
func (k KeySigner) Address() common.Address { return crypto.PubkeyToAddress(k.key.PublicKey) }

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

// NewExternalSigner signs as from through the external signer at url (Clef's API: an
// http(s) URL or an IPC path). It fails when the signer does not answer, or does not list
// from among its accounts (Clef asks its user whether to list them).
func NewExternalSigner(url string, from common.Address) (WalletSigner, error) {
	ext, err := external.NewExternalSigner(url)
	if err != nil {
		return WalletSigner{}, fmt.Errorf("external signer %s: %w", url, err)
	}
	acct := accounts.Account{Address: from}
	if !ext.Contains(acct) {
		return WalletSigner{}, fmt.Errorf("external signer %s: it does not list account %s", url, from.Hex())
	}
	return NewWalletSigner(ext, acct), nil
}

// Address is the account signed for.
func (w WalletSigner) Address() common.Address { return w.account.Address }

// SignTx asks the wallet to sign tx (an external signer may ask its user first).
func (w WalletSigner) SignTx(_ context.Context, tx *types.Transaction, chainID *big.Int) (*types.Transaction, error) {
	return w.wallet.SignTx(w.account, tx, chainID)
}
