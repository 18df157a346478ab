package main

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"golang.org/x/term"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/node"
	"github.com/surety-ioa/surety/txn"
)

// The user's own wallet: the CLI signs with it and the node never sees the key. The flags
// are Foundry's spellings, and read the same environment variables.
const (
	keystoreEnv   = "ETH_KEYSTORE"
	passwordEnv   = "ETH_PASSWORD"
	privateKeyEnv = "ETH_PRIVATE_KEY"
	fromEnv       = "ETH_FROM"
	signerEnv     = "SURETY_SIGNER"
	deploymentEnv = "SURETY_DEPLOYMENT"
	// Foundry's names for the fee settings.
	gasPriceEnv         = "ETH_GAS_PRICE"
	priorityGasPriceEnv = "ETH_PRIORITY_GAS_PRICE"
)

// relayTipLimit bounds the tip an own wallet takes from the chain's suggestion when it
// reaches the chain through the node's relay: the node answers eth_maxPriorityFeePerGas, and
// a wallet pays its tip in full. --priority-gas-price names one instead.
var relayTipLimit = big.NewInt(100e9)

const relayTipLimitText = "100 gwei"

// ownWalletFlags name the user's own wallet: exactly one of a keystore file, a raw key, an
// external signer (Clef) or, on a dev chain, one of Anvil's test accounts.
type ownWalletFlags struct {
	e            *env
	keystore     *string
	passwordFile *string
	privateKey   *string
	signer       *string
	from         *string
	devAccount   *int
	// deployment pins the contracts to pay into (a file 'surety deploy' wrote); gasPrice and
	// priorityGasPrice fix the fees offered. All nil on deploy itself.
	deployment, gasPrice, priorityGasPrice *string
	// Spellings of earlier versions, kept working: a file holding a hex key, and a dev
	// account number.
	oldKeyFile *string
	oldDev     *int
}

// withOldSpellings also accepts the flags a command had before (--key-file / --wallet-key,
// --dev-key / --dev-wallet), marked deprecated in its help.
func (w *ownWalletFlags) withOldSpellings(f *flags, keyFile, dev string) *ownWalletFlags {
	w.oldKeyFile = f.String(keyFile, "", "deprecated: use --private-key or --keystore (a file holding a hex private key)")
	w.oldDev = f.Int(dev, -1, "deprecated: use --dev-account")
	return w
}

// mergeOldSpellings moves the deprecated flags' values onto the current ones.
func (w *ownWalletFlags) mergeOldSpellings() error {
	if w.oldDev != nil && *w.oldDev >= 0 {
		if *w.devAccount >= 0 {
			return usagef("give --dev-account once")
		}
		*w.devAccount = *w.oldDev
	}
	if w.oldKeyFile != nil && *w.oldKeyFile != "" {
		if *w.privateKey != "" {
			return usagef("give one private key")
		}
		b, err := os.ReadFile(*w.oldKeyFile)
		if err != nil {
			return startError{fmt.Errorf("read key: %w", err)}
		}
		*w.privateKey = strings.TrimSpace(string(b))
		if *w.privateKey == "" {
			return startError{fmt.Errorf("%s is empty", *w.oldKeyFile)}
		}
	}
	return nil
}

// ownWallet defines the wallet flags on f, and --deployment, which pins the contracts the
// wallet pays into. The environment (and config file) name a wallet only when the command
// line names none, neither the user's own nor a node-held --wallet; their values are never
// shown as flag defaults (a key must not land in a help text).
func (f *flags) ownWallet() *ownWalletFlags {
	w := f.walletFlags()
	w.deployment = f.String("deployment", "", "the deployment file of the contracts your wallet pays into ('surety deploy' writes it; default: $"+deploymentEnv+"); the node must name the same, else nothing is sent. Without it the node's /v1/info names them")
	w.gasPrice = f.String("gas-price", "", "the most your wallet pays a gas, base fee and tip (EIP-1559 max fee), e.g. 30gwei (default: $"+gasPriceEnv+", else the tip plus twice the base fee)")
	w.priorityGasPrice = f.String("priority-gas-price", "", "the tip a gas your wallet offers, e.g. 1gwei (default: $"+priorityGasPriceEnv+", else the chain's suggestion; through the node's relay, one above "+relayTipLimitText+" is refused)")
	f.orSetting(w.deployment, deploymentEnv)
	f.orSetting(w.gasPrice, gasPriceEnv)
	f.orSetting(w.priorityGasPrice, priorityGasPriceEnv)
	return w
}

// walletFlags defines the wallet flags on f (deploy's, which makes the contracts).
func (f *flags) walletFlags() *ownWalletFlags {
	w := &ownWalletFlags{
		e:            f.e,
		keystore:     f.String("keystore", "", "your wallet: a keystore file (go-ethereum's or cast's; default: $"+keystoreEnv+"), unlocked with --password-file, $"+passwordEnv+" or a prompt"),
		passwordFile: f.String("password-file", "", "file holding the --keystore password"),
		privateKey:   f.String("private-key", "", "your wallet: a raw hex private key (default: $"+privateKeyEnv+"; for CI and dev chains)"),
		signer:       f.String("signer", "", "your wallet behind an external signer: Clef's URL or IPC path, which also fronts hardware wallets; with --from (default: $"+signerEnv+")"),
		from:         f.String("from", "", "the account the --signer signs for (default: $"+fromEnv+")"),
		devAccount:   f.Int("dev-account", -1, "your wallet: Anvil's test account N (dev chains only; the same keys cast and anvil use)"),
	}
	f.orSetting(w.from, fromEnv)
	f.afterParse = append(f.afterParse, func() {
		if w.given() {
			return
		}
		if nodeWallet := f.Lookup("wallet"); nodeWallet != nil && nodeWallet.Value.String() != "" {
			return
		}
		*w.keystore, *w.privateKey, *w.signer = f.e.setting(keystoreEnv), f.e.setting(privateKeyEnv), f.e.setting(signerEnv)
	})
	return w
}

// given reports whether any wallet was named.
func (w *ownWalletFlags) given() bool {
	return w.oldKeyFile != nil && *w.oldKeyFile != "" || w.oldDev != nil && *w.oldDev >= 0 || *w.keystore != "" || *w.privateKey != "" || *w.signer != "" || *w.devAccount >= 0
}

// ownWallet is an opened wallet: it signs transactions and wallet bindings.
type ownWallet struct {
	signer txn.TypedDataSigner
	// dev says the wallet is a public dev account (refused off dev chains).
	dev bool
	// pinned is the deployment the user named (--deployment), nil when they named none.
	pinned *contracts.Deployment
	// fees are the fees the user named (--gas-price, --priority-gas-price).
	fees txn.Fees
}

// open unlocks the wallet named, with the deployment and fees the user named; naming no
// wallet, or more than one, is a usage error.
func (w *ownWalletFlags) open() (*ownWallet, error) {
	wallet, err := w.unlock()
	if err != nil {
		return nil, err
	}
	return wallet, w.pin(wallet)
}

// unlock opens the wallet named.
func (w *ownWalletFlags) unlock() (*ownWallet, error) {
	if err := w.mergeOldSpellings(); err != nil {
		return nil, err
	}
	named := 0
	for _, set := range []bool{*w.keystore != "", *w.privateKey != "", *w.signer != "", *w.devAccount >= 0} {
		if set {
			named++
		}
	}
	switch {
	case named == 0:
		return nil, usagef("name your wallet: --keystore FILE, --private-key (or $%s), --signer URL --from ADDR, or --dev-account N on a dev chain", privateKeyEnv)
	case named > 1:
		return nil, usagef("name one wallet: --keystore, --private-key, --signer or --dev-account (check $%s, $%s, $%s and the config file too)", keystoreEnv, privateKeyEnv, signerEnv)
	}
	var key *ecdsa.PrivateKey
	switch {
	case *w.signer != "":
		if !common.IsHexAddress(*w.from) {
			return nil, usagef("--signer needs --from ADDR, the account to sign for")
		}
		s, err := txn.NewExternalSigner(*w.signer, common.HexToAddress(*w.from))
		if err != nil {
			return nil, startError{err}
		}
		// Name each call to Clef, which shows it decoded to its user (and refuses calls it
		// cannot decode unless run with --advanced).
		for _, m := range []*bind.MetaData{&contracts.BountyEscrowMetaData, &contracts.StakeRegistryMetaData, &contracts.IERC20MetaData,
			&contracts.JobEscrowMetaData, &contracts.SuretyHookMetaData} {
			a, err := m.ParseABI()
			if err != nil {
				return nil, err
			}
			s.Describe(a)
		}
		return &ownWallet{signer: s}, nil
	case *w.devAccount >= 0:
		if *w.devAccount >= maxDevAccount {
			return nil, usagef("--dev-account %d: Anvil's test accounts are numbered 0 to %d", *w.devAccount, maxDevAccount-1)
		}
		key = chain.DevKey(*w.devAccount)
	case *w.privateKey != "":
		k, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(*w.privateKey), "0x"))
		if err != nil {
			return nil, usagef("--private-key is not a hex secp256k1 private key")
		}
		key = k
	default:
		k, err := w.unlockKeystore()
		if err != nil {
			return nil, err
		}
		key = k
	}
	if *w.from != "" && (!common.IsHexAddress(*w.from) || common.HexToAddress(*w.from) != crypto.PubkeyToAddress(key.PublicKey)) {
		return nil, usagef("--from %s is not the wallet's address %s", *w.from, crypto.PubkeyToAddress(key.PublicKey).Hex())
	}
	return &ownWallet{signer: txn.NewKeySigner(key), dev: *w.devAccount >= 0}, nil
}

// pin reads the deployment file and the fees the user named, if any, into wallet.
func (w *ownWalletFlags) pin(wallet *ownWallet) error {
	for _, f := range []struct {
		name string
		raw  *string
		dst  **big.Int
	}{{"--gas-price", w.gasPrice, &wallet.fees.FeeCap}, {"--priority-gas-price", w.priorityGasPrice, &wallet.fees.Tip}} {
		if f.raw == nil || *f.raw == "" {
			continue
		}
		v, err := parseAmount(*f.raw)
		if err != nil {
			return usagef("%s: %v", f.name, err)
		}
		*f.dst = v
	}
	if w.deployment == nil || *w.deployment == "" {
		return nil
	}
	b, err := os.ReadFile(*w.deployment)
	if err != nil {
		return usagef("--deployment: %v", err)
	}
	d, err := contracts.ParseDeployment(b)
	if err != nil {
		return usagef("--deployment %s: %v", *w.deployment, err)
	}
	wallet.pinned = d
	return nil
}

// checkNode refuses a node the wallet must not pay through: one on a chain that is not a
// devnet when the wallet is a public dev account (anyone can spend from it), or one whose
// chain or contracts are not the pinned deployment's (the wallet would pay into contracts the
// user did not choose: a node could name its own). A devnet is told by its chain id: the
// kind is the node's word.
func (w *ownWallet) checkNode(info api.Info, nodeURL string) error {
	if w.dev && !node.DevnetChain(info.Chain.ID) {
		return usagef("--dev-account: Anvil's test keys are public; the node's chain %d is not a devnet", info.Chain.ID)
	}
	d := w.pinned
	if d == nil {
		return nil
	}
	if d.ChainID != info.Chain.ID {
		return fmt.Errorf("the node at %s settles on chain %d; your --deployment is on chain %d: nothing sent", nodeURL, info.Chain.ID, d.ChainID)
	}
	for name, want := range map[string]common.Address{"BountyEscrow": d.Contracts.BountyEscrow, "StakeRegistry": d.Contracts.StakeRegistry,
		"JobEscrow": d.Contracts.JobEscrow, "SuretyHook": d.Contracts.SuretyHook} {
		if got := info.Contracts[name]; !common.IsHexAddress(got) || common.HexToAddress(got) != want {
			return fmt.Errorf("the node at %s names %s at %.64q; your --deployment has it at %s: another deployment (or a node naming its own): nothing sent", nodeURL, name, got, want.Hex())
		}
	}
	return nil
}

// maxDevAccount bounds --dev-account (BIP-32 indexes below 2^31; nobody funds this many).
const maxDevAccount = 1 << 20

// unlockKeystore decrypts --keystore with the password from --password-file, $ETH_PASSWORD,
// or a prompt when stdin is a terminal.
func (w *ownWalletFlags) unlockKeystore() (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(*w.keystore)
	if err != nil {
		return nil, startError{fmt.Errorf("--keystore: %w", err)}
	}
	var pass string
	switch {
	case *w.passwordFile != "":
		p, err := os.ReadFile(*w.passwordFile)
		if err != nil {
			return nil, startError{fmt.Errorf("--password-file: %w", err)}
		}
		pass = strings.TrimRight(string(p), "\r\n")
	case w.e.getenv(passwordEnv) != "":
		pass = w.e.getenv(passwordEnv)
	default:
		f, ok := w.e.stdin.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			return nil, usagef("--keystore %s: give its password with --password-file or $%s (no terminal to ask on)", *w.keystore, passwordEnv)
		}
		fmt.Fprintf(w.e.stderr, "password for %s: ", *w.keystore)
		p, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(w.e.stderr)
		if err != nil {
			return nil, err
		}
		pass = string(p)
	}
	k, err := keystore.DecryptKey(b, pass)
	if err != nil {
		return nil, startError{fmt.Errorf("--keystore %s: %w", *w.keystore, err)}
	}
	return k.PrivateKey, nil
}

// ownChain is how the CLI reaches the chain for the user's own wallet: --rpc-url directly,
// or else the node's JSON-RPC endpoint (POST /v1/rpc), which relays the wallet's signed
// calls to the escrow and the stake registry. Either way it must be the node's chain.
func ownChain(ctx context.Context, rpcURL, nodeURL string, info api.Info) (*ethclient.Client, error) {
	url, what := rpcURL, "--rpc-url "+rpcURL
	if url == "" {
		url, what = strings.TrimRight(nodeURL, "/")+"/v1/rpc", "the node's JSON-RPC "+strings.TrimRight(nodeURL, "/")+"/v1/rpc"
	}
	c, err := ethclient.DialContext(ctx, url)
	if err != nil {
		return nil, startError{fmt.Errorf("%s: %w", what, err)}
	}
	id, err := c.ChainID(ctx)
	if err != nil {
		c.Close()
		return nil, startError{fmt.Errorf("%s does not answer: %w", what, err)}
	}
	if id.Uint64() != info.Chain.ID {
		c.Close()
		return nil, startError{fmt.Errorf("%s is chain %s, the node settles on chain %d", what, id, info.Chain.ID)}
	}
	return c, nil
}

// progress prints a transaction's way to the node's index: a line per step, plain (it is
// read by people and scripts alike; --json commands print it on stderr).
type progress struct {
	w    *env
	what string
}

func (p progress) sender(s *txn.Sender) {
	s.OnProgress(func(ev txn.Progress) {
		switch ev.Stage {
		case txn.StageSent:
			p.w.progressf("%s: sent %s to %s", p.what, ev.Tx.Hex(), ev.To.Hex())
		case txn.StageMined:
			if ev.Reverted {
				p.w.progressDone("%s: mined %s in block %d, and it reverted", p.what, ev.Tx.Hex(), ev.Block)
				return
			}
			p.w.progressf("%s: mined %s in block %d", p.what, ev.Tx.Hex(), ev.Block)
		}
	})
}

// waitIndexed waits until the node's indexes hold block (its /v1/info indexedBlock), telling
// how far the chain is meanwhile (k/N confirmations, when the node waits for some): a slow
// chain is not an unreachable node.
func waitIndexed(ctx context.Context, e *env, c *client.Client, block uint64, what string) error {
	told := -1
	for {
		info, err := c.Info(ctx)
		if err != nil {
			return err
		}
		if ib := info.Chain.IndexedBlock; ib != nil && *ib >= block {
			e.progressDone("%s: block %d indexed by the node", what, block)
			return nil
		}
		if n := info.Chain.Confirmations; n > 0 {
			k := 0
			if head := info.Chain.BlockNumber; head > block {
				k = int(min(head-block, n))
			}
			if k != told {
				e.progressf("%s: block %d has %d/%d confirmations", what, block, k, n)
				told = k
			}
		} else if told < 0 {
			e.progressf("%s: waiting for the node to index block %d (chain head %d)", what, block, info.Chain.BlockNumber)
			told = 0
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the node had not indexed block %d: %w", block, ctx.Err())
		case <-time.After(indexPoll):
		}
	}
}

// indexPoll is how often the CLI asks whether the node has indexed a block.
const indexPoll = 250 * time.Millisecond

// ownSession is a write from the user's own wallet: the node (its chain, contracts and
// index), the chain connection, and a sender that shows each transaction as it goes.
type ownSession struct {
	e      *env
	what   string
	node   *client.Client
	info   api.Info
	chain  *ethclient.Client
	snd    *txn.Sender
	wallet *ownWallet
}

// openOwn opens the wallet w names and connects to the node and the chain (rpcURL, or the
// node's relay).
func openOwn(ctx context.Context, e *env, w *ownWalletFlags, nodeURL, rpcURL, what string, receiptTimeout time.Duration) (*ownSession, error) {
	wallet, err := w.open()
	if err != nil {
		return nil, err
	}
	c, info, err := dialNode(ctx, nodeURL)
	if err != nil {
		return nil, err
	}
	return connectOwn(ctx, e, wallet, c, info, nodeURL, rpcURL, what, receiptTimeout)
}

// connectOwn is openOwn for a wallet already open and a node already dialled.
func connectOwn(ctx context.Context, e *env, wallet *ownWallet, c *client.Client, info api.Info, nodeURL, rpcURL, what string, receiptTimeout time.Duration) (*ownSession, error) {
	if err := wallet.checkNode(info, nodeURL); err != nil {
		return nil, err
	}
	if wallet.pinned == nil && !node.DevnetChain(info.Chain.ID) {
		e.progressDone("%s: paying into the contracts the node names (pin yours with --deployment FILE or $%s)", what, deploymentEnv)
	}
	ch, err := ownChain(ctx, rpcURL, nodeURL, info)
	if err != nil {
		return nil, err
	}
	snd, err := txn.NewSender(ctx, ch, wallet.signer, receiptTimeout)
	if err != nil {
		ch.Close()
		return nil, err
	}
	fees := wallet.fees
	if rpcURL == "" {
		fees.MaxSuggestedTip = relayTipLimit
	}
	snd.SetFees(fees)
	progress{w: e, what: what}.sender(snd)
	return &ownSession{e: e, what: what, node: c, info: info, chain: ch, snd: snd, wallet: wallet}, nil
}

// Close ends the chain connection.
func (o *ownSession) Close() { o.chain.Close() }

// contract is the address the node names for a deployed contract.
func (o *ownSession) contract(name string) common.Address {
	return common.HexToAddress(o.info.Contracts[name])
}

// send sends call from the wallet and returns its receipt once the node has indexed it.
func (o *ownSession) send(ctx context.Context, call txn.Call) (*types.Receipt, error) {
	r, err := o.snd.Send(ctx, call)
	if err != nil {
		return nil, err
	}
	if err := waitIndexed(ctx, o.e, o.node, r.BlockNumber.Uint64(), o.what); err != nil {
		return nil, fmt.Errorf("transaction %s was mined in block %d, but %w", r.TxHash.Hex(), r.BlockNumber.Uint64(), err)
	}
	return r, nil
}
