package txn

import (
	"context"
	"crypto/ecdsa"
	"math/big"

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
