package main

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/node"
)

func runWalletCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{
		"new":    runWalletNew,
		"import": runWalletImport,
		"list":   runWalletList,
	}
	return runSubcommand(ctx, e, "wallet", "new | import --key-file FILE | list", sub, args)
}

// walletFlags are the flags every wallet command shares: where the node's data is and its
// passphrase.
func walletFlags(e *env, name, synopsis, about string) (*flags, *string, *string, *bool) {
	fs := newFlags(e, "wallet "+name, synopsis, about)
	dataDir := fs.String("data-dir", defaultDataDir(e), "the node's data dir")
	pass := fs.String("passphrase-file", "", "the node's passphrase file (default: $"+passphraseEnv+", else the one in --data-dir)")
	light := fs.Bool("light-kdf", false, "cheaper scrypt for throwaway test wallets")
	fs.asJSON = fs.Bool("json", false, "print JSON")
	return fs, dataDir, pass, light
}

func walletPassphrase(e *env, dataDir, file string) ([]byte, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	return node.LoadPassphrase(file, e.getenv(passphraseEnv), dataDir, slog.New(slog.NewTextHandler(e.stderr, nil)))
}

func runWalletNew(_ context.Context, e *env, args []string) error {
	fs, dataDir, pass, light := walletFlags(e, "new", "[--data-dir DIR]", strings.TrimSpace(`
Make a wallet the node holds (for an agent it hosts): a secp256k1 key in a go-ethereum keystore
file under DATA_DIR/wallets, encrypted with the node's passphrase. Prints its address; the node
loads it at its next start.`))
	if err := fs.parse(args); err != nil {
		return err
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		return err
	}
	return storeWallet(e, *dataDir, *pass, key, *light, *fs.asJSON)
}

func runWalletImport(_ context.Context, e *env, args []string) error {
	fs, dataDir, pass, light := walletFlags(e, "import", "--key-file FILE [--data-dir DIR]",
		"Import a wallet from a file holding its hex private key into the node's keystore.")
	keyFile := fs.String("key-file", "", "file with the wallet's hex private key")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *keyFile == "" {
		return usagef("--key-file is required")
	}
	b, err := os.ReadFile(*keyFile)
	if err != nil {
		return err
	}
	key, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"))
	if err != nil {
		return fmt.Errorf("%s: not a hex secp256k1 private key", *keyFile)
	}
	return storeWallet(e, *dataDir, *pass, key, *light, *fs.asJSON)
}

// storeWallet encrypts key with the node's passphrase into DATA_DIR/wallets and prints its
// address.
func storeWallet(e *env, dataDir, passFile string, key *ecdsa.PrivateKey, light, asJSON bool) error {
	p, err := walletPassphrase(e, dataDir, passFile)
	if err != nil {
		return err
	}
	addr, err := node.SaveWallet(node.WalletDir(dataDir), key, p, light)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e, map[string]string{"address": addr})
	}
	fmt.Fprintln(e.stdout, addr)
	return nil
}

func runWalletList(_ context.Context, e *env, args []string) error {
	fs, dataDir, pass, _ := walletFlags(e, "list", "[--data-dir DIR]", "List the wallets the node holds.")
	if err := fs.parse(args); err != nil {
		return err
	}
	p, err := walletPassphrase(e, *dataDir, *pass)
	if err != nil {
		return err
	}
	keys, err := node.LoadWallets(node.WalletDir(*dataDir), p)
	if err != nil {
		return err
	}
	var addrs []string
	for _, k := range keys {
		addrs = append(addrs, crypto.PubkeyToAddress(k.PublicKey).Hex())
	}
	sort.Strings(addrs)
	if *fs.asJSON {
		if addrs == nil {
			addrs = []string{}
		}
		return printJSON(e, map[string][]string{"wallets": addrs})
	}
	if len(addrs) == 0 {
		fmt.Fprintln(e.stdout, "no wallets")
	}
	for _, a := range addrs {
		fmt.Fprintln(e.stdout, a)
	}
	return nil
}
