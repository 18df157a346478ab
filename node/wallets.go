package node

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
)

// The wallets a node holds, which `surety wallet` manages while the node is down.

// WalletDir is where a node keeps the wallets it holds: go-ethereum keystore files (scrypt),
// encrypted with the node's passphrase.
func WalletDir(dataDir string) string { return filepath.Join(dataDir, "wallets") }

// LoadWallets opens every keystore file in dir with passphrase.
func LoadWallets(dir string, passphrase []byte) ([]*ecdsa.PrivateKey, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var keys []*ecdsa.PrivateKey
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		k, err := keystore.DecryptKey(b, string(passphrase))
		if err != nil {
			return nil, fmt.Errorf("wallet %s: %w (is it encrypted with this node's passphrase?)", e.Name(), err)
		}
		keys = append(keys, k.PrivateKey)
	}
	return keys, nil
}

// SaveWallet writes key into dir as a keystore file (mode 0600) encrypted with passphrase, and returns its
// address; light picks scrypt's cheap parameters, for throwaway test wallets.
func SaveWallet(dir string, key *ecdsa.PrivateKey, passphrase []byte, light bool) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	n, p := keystore.StandardScryptN, keystore.StandardScryptP
	if light {
		n, p = keystore.LightScryptN, keystore.LightScryptP
	}
	addr := crypto.PubkeyToAddress(key.PublicKey)
	b, err := keystore.EncryptKey(&keystore.Key{Id: uuid.New(), Address: addr, PrivateKey: key}, string(passphrase), n, p)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, strings.ToLower(addr.Hex()[2:])+".json")
	if err := writeSecretFile(path, b); err != nil {
		return "", err
	}
	return addr.Hex(), nil
}

// writeSecretFile creates path with mode 0600 and refuses to replace an existing file.
func writeSecretFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists: not overwriting a key (choose another --out)", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
