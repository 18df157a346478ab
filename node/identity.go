package node

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
)

// checkPassphraseSource refuses an exposed node (exposed says how, empty when it is not)
// without a passphrase from the environment or from a file outside the data dir.
func checkPassphraseSource(file, given, dataDir, exposed string) error {
	if exposed == "" {
		return nil
	}
	inData := false
	if file != "" {
		if rel, err := filepath.Rel(absPath(dataDir), absPath(file)); err == nil && !strings.HasPrefix(rel, "..") {
			inData = true
		}
	}
	switch {
	case file == "" && given == "":
		return fmt.Errorf("this node %s: give the passphrase that encrypts its keys with --passphrase-file (outside --data-dir) or $%s", exposed, PassphraseEnv)
	case inData:
		return fmt.Errorf("this node %s: --passphrase-file %s is inside --data-dir, beside the keys it protects; keep it elsewhere", exposed, file)
	}
	return nil
}

// absPath is p made absolute (p itself when that fails).
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// LoadPassphrase finds the passphrase that encrypts the keys in dataDir, as a node on a
// development chain does (see loadPassphrase): for the commands that open them offline.
func LoadPassphrase(file, given, dataDir string, log *slog.Logger) ([]byte, error) {
	return loadPassphrase(file, given, dataDir, "", log)
}

// loadPassphrase finds the passphrase that encrypts the node's keys: --passphrase-file,
// then the one given ($SURETY_PASSPHRASE), then (for a development node) a random one kept in
// DATA_DIR/passphrase, created on first start with a warning. A node that is exposed (it
// listens beyond loopback, or settles on a chain that is not a devnet; exposed says how) must
// be given one, from a file outside the data dir or the environment: a passphrase kept beside
// the keys protects nothing.
func loadPassphrase(file, given, dataDir, exposed string, log *slog.Logger) ([]byte, error) {
	if err := checkPassphraseSource(file, given, dataDir, exposed); err != nil {
		return nil, err
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read passphrase: %w", err)
		}
		p := strings.TrimRight(string(b), "\r\n")
		if p == "" {
			return nil, fmt.Errorf("passphrase file %s is empty", file)
		}
		return []byte(p), nil
	}
	if given != "" {
		return []byte(given), nil
	}
	path := filepath.Join(dataDir, "passphrase")
	b, err := os.ReadFile(path)
	if err == nil && len(b) > 0 {
		return b, nil
	}
	if !errors.Is(err, fs.ErrNotExist) && err != nil {
		return nil, fmt.Errorf("read passphrase: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	p := []byte(hex.EncodeToString(raw))
	if err := os.WriteFile(path, p, 0o600); err != nil {
		return nil, fmt.Errorf("write passphrase: %w", err)
	}
	log.Warn("keys at rest are encrypted with a generated passphrase kept beside them; give --passphrase-file or $"+PassphraseEnv+" for a real deployment", "file", path)
	return p, nil
}

// identityConfig is what the node needs to set up its identity.
type identityConfig struct {
	passphrase []byte
	kdf        identity.KDFParams
	started    time.Time
	chainID    uint64
	registry   common.Address
	// keys is the chain's index of who closed which DID (package stake).
	keys identity.KeyStatusReader
	// mayCreate guards reserved group ids (groupGate), and bound says which DIDs a wallet
	// binds on chain.
	mayCreate func(ctx context.Context, id, sender string) error
	bound     func(ctx context.Context, did string) (bool, error)
}

// startIdentity opens the identity store in db, creates the node's DID on first start, and
// builds the identity service with an envelope verifier that asks the chain's index for
// revoked and rotated keys, and the group threads.
func startIdentity(ctx context.Context, db *sql.DB, cfg identityConfig, log *slog.Logger) (*identity.Service, *groups.Service, *identity.Store, error) {
	store, err := identity.OpenStore(ctx, db, identity.StoreConfig{Passphrase: cfg.passphrase, KDF: cfg.kdf})
	if err != nil {
		return nil, nil, nil, err
	}
	node, created, err := store.NodeKey(ctx)
	if errors.Is(err, identity.ErrWrongPassphrase) {
		return nil, nil, nil, fmt.Errorf("the passphrase does not open this node's keys")
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if created {
		log.Info("created the node's DID", "did", node.DID.String())
	}
	verifier := identity.NewVerifier(identity.VerifierConfig{Started: cfg.started, Keys: cfg.keys})
	ids := identity.NewService(identity.ServiceConfig{Store: store, Node: node, Verifier: verifier,
		ChainID: cfg.chainID, Registry: cfg.registry})
	threads, err := groups.New(ctx, db, groups.Config{Verify: ids.VerifyEnvelope, MayCreate: cfg.mayCreate, Bound: cfg.bound, Logger: log})
	if err != nil {
		return nil, nil, nil, err
	}
	return ids, threads, store, nil
}
