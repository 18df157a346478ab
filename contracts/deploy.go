package contracts

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/units"
)

// Sentinel errors of deployments.
var (
	// ErrBadDeployment reports a deployment file that cannot be used.
	ErrBadDeployment = errors.New("contracts: bad deployment")
	// ErrWrongChain reports a deployment made for another chain than the one connected.
	ErrWrongChain = errors.New("contracts: deployment is for another chain")
	// ErrNoCode reports a deployment address where the chain has no contract.
	ErrNoCode = errors.New("contracts: no contract code at address")
	// ErrForeignRegistry reports a deployment whose StakeRegistry is not the one its escrow
	// created (and alone may lock and slash).
	ErrForeignRegistry = errors.New("contracts: stake registry is not the escrow's")
	// ErrForeignHook reports a deployment whose SuretyHook is not its registry's job locker,
	// locks in another registry, is not built on its JobEscrow, or is not on its allowlist.
	ErrForeignHook = errors.New("contracts: SuretyHook is not the deployment's job locker")
)

// Addresses holds the address of every Surety contract; a deployment must name them all.
type Addresses struct {
	StakeRegistry common.Address `json:"StakeRegistry"`
	BountyEscrow  common.Address `json:"BountyEscrow"`
	RootAnchor    common.Address `json:"RootAnchor"`
	// JobEscrow is the ERC-8183 job escrow; SuretyHook the hook (and evaluator of record) of
	// Surety's jobs on it, the registry's job locker.
	JobEscrow  common.Address `json:"JobEscrow"`
	SuretyHook common.Address `json:"SuretyHook"`
	// The ERC-8004 (Trustless Agents) registries: agent ids, feedback, validations.
	IdentityRegistry   common.Address `json:"IdentityRegistry"`
	ReputationRegistry common.Address `json:"ReputationRegistry"`
	ValidationRegistry common.Address `json:"ValidationRegistry"`
}

// Named lists the contracts by name, in a fixed order (the field order).
func (a Addresses) Named() []NamedAddress {
	v := reflect.ValueOf(a)
	out := make([]NamedAddress, v.NumField())
	for i := range out {
		out[i] = NamedAddress{Name: v.Type().Field(i).Name, Address: v.Field(i).Interface().(common.Address)}
	}
	return out
}

// List returns the addresses in the order of Named.
func (a Addresses) List() []common.Address {
	named := a.Named()
	out := make([]common.Address, len(named))
	for i, n := range named {
		out[i] = n.Address
	}
	return out
}

// NamedAddress is one contract of a deployment.
type NamedAddress struct {
	Name    string
	Address common.Address
}

// Deployment says where Surety's contracts live on one chain: the content of the
// --deployment file that `surety deploy` and `make devnet` write.
type Deployment struct {
	ChainID uint64 `json:"chainId"`
	// Block is the block of the first deployment transaction: event indexers start there.
	Block     uint64         `json:"block"`
	Deployer  common.Address `json:"deployer"`
	Contracts Addresses      `json:"contracts"`
}

// ParseDeployment decodes and checks a deployment file. Unknown fields are refused, so a typo
// in a hand-written file is an error rather than a missing contract.
func ParseDeployment(data []byte) (*Deployment, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d Deployment
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadDeployment, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the JSON object", ErrBadDeployment)
	}
	if d.ChainID == 0 {
		return nil, fmt.Errorf("%w: chainId is missing", ErrBadDeployment)
	}
	for _, n := range d.Contracts.Named() {
		if n.Address == (common.Address{}) {
			return nil, fmt.Errorf("%w: contracts.%s is missing", ErrBadDeployment, n.Name)
		}
	}
	return &d, nil
}

// Marshal encodes d as an indented JSON document.
func (d *Deployment) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Backend is what deploying and checking a deployment needs from a chain.
type Backend interface {
	bind.ContractBackend
	bind.DeployBackend
	ChainID(ctx context.Context) (*big.Int, error)
}

// Check verifies that d belongs to the chain behind b: same chain id, contract code at every
// address, a StakeRegistry that is the escrow's own (the one it created and locks), and a
// SuretyHook that is that registry's job locker, locks in that registry, serves the
// deployment's JobEscrow and is on its allowlist. It checks the deployment's consistency, not
// its code (a hostile file can name contracts that answer these calls as ours do). It returns
// ErrWrongChain, ErrNoCode, ErrForeignRegistry or ErrForeignHook.
func (d *Deployment) Check(ctx context.Context, b Backend) error {
	id, err := b.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("check deployment: %w", err)
	}
	if !id.IsUint64() || id.Uint64() != d.ChainID {
		return fmt.Errorf("%w: file says chain %d, rpc is chain %s", ErrWrongChain, d.ChainID, id)
	}
	for _, n := range d.Contracts.Named() {
		code, err := b.CodeAt(ctx, n.Address, nil)
		if err != nil {
			return fmt.Errorf("check deployment: %s: %w", n.Name, err)
		}
		if len(code) == 0 {
			return fmt.Errorf("%w: %s at %s", ErrNoCode, n.Name, n.Address)
		}
	}
	if err := d.checkERC8004(ctx, b); err != nil {
		return err
	}
	escrowABI := NewBountyEscrow()
	reg, err := bind.Call(escrowABI.Instance(b, d.Contracts.BountyEscrow), &bind.CallOpts{Context: ctx}, escrowABI.PackStakeRegistry(), escrowABI.UnpackStakeRegistry)
	if err != nil {
		return fmt.Errorf("check deployment: BountyEscrow.stakeRegistry: %w", err)
	}
	if reg != d.Contracts.StakeRegistry {
		return fmt.Errorf("%w: the escrow's registry is %s, the file names %s", ErrForeignRegistry, reg, d.Contracts.StakeRegistry)
	}
	opts := &bind.CallOpts{Context: ctx}
	regABI := NewStakeRegistry()
	locker, err := bind.Call(regABI.Instance(b, reg), opts, regABI.PackJobLocker(), regABI.UnpackJobLocker)
	if err != nil {
		return fmt.Errorf("check deployment: StakeRegistry.jobLocker: %w", err)
	}
	if locker != d.Contracts.SuretyHook {
		return fmt.Errorf("%w: the registry's job locker is %s, the file names %s", ErrForeignHook, locker, d.Contracts.SuretyHook)
	}
	hookABI := NewSuretyHook()
	core, err := bind.Call(hookABI.Instance(b, d.Contracts.SuretyHook), opts, hookABI.PackCore(), hookABI.UnpackCore)
	if err != nil {
		return fmt.Errorf("check deployment: SuretyHook.core: %w", err)
	}
	if core != d.Contracts.JobEscrow {
		return fmt.Errorf("%w: the hook serves %s, the file names JobEscrow %s", ErrForeignHook, core, d.Contracts.JobEscrow)
	}
	// Two registries can name one predicted hook address (one deployer's two deploys): the
	// hook must lock stake in this deployment's registry, the one the node indexes.
	hookReg, err := bind.Call(hookABI.Instance(b, d.Contracts.SuretyHook), opts, hookABI.PackStakeRegistry(), hookABI.UnpackStakeRegistry)
	if err != nil {
		return fmt.Errorf("check deployment: SuretyHook.stakeRegistry: %w", err)
	}
	if hookReg != reg {
		return fmt.Errorf("%w: the hook locks stake in registry %s, the deployment's is %s", ErrForeignHook, hookReg, reg)
	}
	jobABI := NewJobEscrow()
	allowed, err := bind.Call(jobABI.Instance(b, d.Contracts.JobEscrow), opts, jobABI.PackWhitelistedHooks(d.Contracts.SuretyHook), jobABI.UnpackWhitelistedHooks)
	if err != nil {
		return fmt.Errorf("check deployment: JobEscrow.whitelistedHooks: %w", err)
	}
	if !allowed {
		return fmt.Errorf("%w: JobEscrow %s does not allow the hook %s", ErrForeignHook, d.Contracts.JobEscrow, d.Contracts.SuretyHook)
	}
	return nil
}

// DeployConfig sets the contracts' parameters. The zero value deploys for a dev chain: the
// deployer owns the escrows and receives fees, and stake is in ETH. Nobody may slash at will:
// the registry's only slashing path is a dispute ruling on the escrow, capped at the stake the
// worker's claim locked.
type DeployConfig struct {
	// Owner sets the escrows' fees and treasury (and JobEscrow's hook allowlist); zero means
	// the deployer. JobEscrow is deployed owned by the deployer, configured, then offered to
	// Owner (two-step: Owner calls acceptOwnership). (The registry has no owner.)
	Owner common.Address
	// Treasury receives the escrows' protocol fees; zero means the owner.
	Treasury common.Address
	// FeeBps is the escrow fee for new bounties and JobEscrow's platform fee, at most 1000 (10%).
	FeeBps uint16
	// StakeToken is the ERC-20 agents stake; zero means ETH.
	StakeToken common.Address
	// UnbondDelay is the seconds between requesting unbonding and withdrawing; 0 means 7 days.
	UnbondDelay uint64
	// MinStake is the stake (base units) below which an agent counts as unstaked, fixed in
	// the registry for the deployment's life; nil means DefaultMinStake, 0 sets no minimum.
	MinStake *big.Int
}

// DefaultFeeBps is the protocol fee dev chains deploy with: 0.5%.
const DefaultFeeBps = 50

// DefaultMinStake is the minimum stake dev chains deploy with: 0.1 ETH (10^17 base units).
var DefaultMinStake = big.NewInt(1e17)

// DefaultUnbondDelay is how long unbonding stake waits before it can be withdrawn.
const DefaultUnbondDelay = 7 * 24 * 60 * 60

// Deploy puts every Surety contract on the chain behind b, sent from key, and waits for each
// to be mined. Progress, one call per contract, goes to progress when it is not nil.
func Deploy(ctx context.Context, b Backend, key *ecdsa.PrivateKey, cfg DeployConfig, progress func(name string, addr common.Address)) (*Deployment, error) {
	id, err := b.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("deploy: chain id: %w", err)
	}
	return DeployFrom(ctx, b, bind.NewKeyedTransactor(key, id), cfg, progress)
}

// DeployFrom is Deploy sent from opts.From, each transaction signed by opts.Signer (a wallet
// whose key is elsewhere, behind Clef, say).
func DeployFrom(ctx context.Context, b Backend, from *bind.TransactOpts, cfg DeployConfig, progress func(name string, addr common.Address)) (*Deployment, error) {
	id, err := b.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("deploy: chain id: %w", err)
	}
	deployer := from.From
	if cfg.Owner == (common.Address{}) {
		cfg.Owner = deployer
	}
	if cfg.Treasury == (common.Address{}) {
		cfg.Treasury = cfg.Owner
	}
	if cfg.UnbondDelay == 0 {
		cfg.UnbondDelay = DefaultUnbondDelay
	}
	if cfg.MinStake == nil {
		cfg.MinStake = DefaultMinStake
	}
	if cfg.FeeBps > 1000 {
		return nil, fmt.Errorf("deploy: fee %d bps is above the 1000 bps cap", cfg.FeeBps)
	}

	opts := *from
	opts.Context = ctx
	opts.Nonce = nil
	d := &Deployment{ChainID: id.Uint64(), Deployer: deployer}
	send := func(what string, tx func() (common.Address, common.Hash, error)) (common.Address, error) {
		addr, hash, err := tx()
		if err != nil {
			return common.Address{}, fmt.Errorf("deploy %s: %w", what, err)
		}
		receipt, err := chain.WaitMined(ctx, b, hash)
		if err != nil {
			return common.Address{}, fmt.Errorf("deploy %s: wait for receipt: %w", what, err)
		}
		if receipt.Status != 1 {
			return common.Address{}, fmt.Errorf("deploy %s: transaction %s reverted", what, hash)
		}
		if d.Block == 0 {
			d.Block = receipt.BlockNumber.Uint64()
		}
		if progress != nil && addr != (common.Address{}) {
			progress(what, addr)
		}
		return addr, nil
	}
	create := func(name string, meta *bind.MetaData, input []byte) (common.Address, error) {
		return send(name, func() (common.Address, common.Hash, error) {
			addr, tx, err := bind.DeployContract(&opts, common.FromHex(meta.Bin), b, input)
			if err != nil {
				return common.Address{}, common.Hash{}, err
			}
			return addr, tx.Hash(), nil
		})
	}

	// The escrow creates its StakeRegistry and is that registry's locker of bounty ids; the
	// registry's job locker is the SuretyHook, deployed two transactions later (after
	// JobEscrow) at an address predicted from the deployer's nonce, and fixed in the
	// registry's constructor. No account, the deployer included, can lock or slash stake any
	// other way. The hook's constructor checks that it is the registry's job locker, so a
	// wrong prediction (another transaction from the deployer in between) fails the deploy.
	// Every transaction takes the account's pending nonce (a nonce the caller set in its
	// options is not used: the prediction and the transactions must agree), and so does the
	// prediction.
	nonce, err := b.PendingNonceAt(ctx, deployer)
	if err != nil {
		return nil, fmt.Errorf("deploy: nonce: %w", err)
	}
	hookAt := crypto.CreateAddress(deployer, nonce+2)
	escrowABI := NewBountyEscrow()
	if d.Contracts.BountyEscrow, err = create("BountyEscrow", &BountyEscrowMetaData,
		escrowABI.PackConstructor(cfg.Owner, cfg.Treasury, cfg.FeeBps, cfg.StakeToken, cfg.UnbondDelay, cfg.MinStake, hookAt)); err != nil {
		return nil, err
	}
	if d.Contracts.StakeRegistry, err = bind.Call(escrowABI.Instance(b, d.Contracts.BountyEscrow), &bind.CallOpts{Context: ctx},
		escrowABI.PackStakeRegistry(), escrowABI.UnpackStakeRegistry); err != nil {
		return nil, fmt.Errorf("deploy: read the escrow's StakeRegistry: %w", err)
	}
	if progress != nil {
		progress("StakeRegistry", d.Contracts.StakeRegistry)
	}
	jobABI := NewJobEscrow()
	if d.Contracts.JobEscrow, err = create("JobEscrow", &JobEscrowMetaData, jobABI.PackConstructor(deployer, cfg.Treasury)); err != nil {
		return nil, err
	}
	if d.Contracts.SuretyHook, err = create("SuretyHook", &SuretyHookMetaData,
		NewSuretyHook().PackConstructor(d.Contracts.JobEscrow, d.Contracts.StakeRegistry)); err != nil {
		return nil, err
	}
	if d.Contracts.SuretyHook != hookAt {
		return nil, fmt.Errorf("deploy: SuretyHook landed at %s, the registry's job locker is %s", d.Contracts.SuretyHook, hookAt)
	}
	call := func(what string, to common.Address, data []byte) error {
		_, err := send(what, func() (common.Address, common.Hash, error) {
			tx, err := bind.Transact(bind.NewBoundContract(to, abi.ABI{}, b, b, b), &opts, data)
			if err != nil {
				return common.Address{}, common.Hash{}, err
			}
			return common.Address{}, tx.Hash(), nil
		})
		return err
	}
	if err := call("JobEscrow.setHookWhitelist", d.Contracts.JobEscrow, jobABI.PackSetHookWhitelist(d.Contracts.SuretyHook, true)); err != nil {
		return nil, err
	}
	if cfg.FeeBps != 0 {
		if err := call("JobEscrow.setPlatformFee", d.Contracts.JobEscrow, jobABI.PackSetPlatformFee(big.NewInt(int64(cfg.FeeBps)), cfg.Treasury)); err != nil {
			return nil, err
		}
	}
	if cfg.Owner != deployer {
		if err := call("JobEscrow.transferOwnership", d.Contracts.JobEscrow, jobABI.PackTransferOwnership(cfg.Owner)); err != nil {
			return nil, err
		}
	}
	if d.Contracts.RootAnchor, err = create("RootAnchor", &RootAnchorMetaData, nil); err != nil {
		return nil, err
	}
	if err := deployERC8004(d, create); err != nil {
		return nil, err
	}
	return d, nil
}

// DeployDevToken deploys a DevToken (an ERC-20 anyone may mint) for dev chains and tests. It is
// not part of a Deployment: production chains use real tokens.
func DeployDevToken(ctx context.Context, b Backend, key *ecdsa.PrivateKey, name, symbol string) (common.Address, error) {
	id, err := b.ChainID(ctx)
	if err != nil {
		return common.Address{}, fmt.Errorf("deploy DevToken: chain id: %w", err)
	}
	opts := bind.NewKeyedTransactor(key, id)
	opts.Context = ctx
	addr, tx, err := bind.DeployContract(opts, common.FromHex(DevTokenMetaData.Bin), b, NewDevToken().PackConstructor(name, symbol))
	if err != nil {
		return common.Address{}, fmt.Errorf("deploy DevToken: %w", err)
	}
	receipt, err := chain.WaitMined(ctx, b, tx.Hash())
	if err != nil {
		return common.Address{}, fmt.Errorf("deploy DevToken: wait for receipt: %w", err)
	}
	if receipt.Status != 1 {
		return common.Address{}, fmt.Errorf("deploy DevToken: transaction %s reverted", tx.Hash())
	}
	return addr, nil
}

// MinStake reads the deployment's minimum stake from its StakeRegistry: the stake below which
// every node counts an agent as unstaked.
func (d *Deployment) MinStake(ctx context.Context, b bind.ContractBackend) (*big.Int, error) {
	reg := NewStakeRegistry()
	v, err := bind.Call(reg.Instance(b, d.Contracts.StakeRegistry), &bind.CallOpts{Context: ctx}, reg.PackMinStake(), reg.UnpackMinStake)
	if err != nil {
		return nil, fmt.Errorf("read StakeRegistry.minStake: %w", err)
	}
	return v, nil
}

// StakeToken reads what the deployment's StakeRegistry stakes: ETH, or an ERC-20 and its
// symbol and decimals, so stake converts to whole tokens by the token's own decimals.
func (d *Deployment) StakeToken(ctx context.Context, b bind.ContractBackend) (common.Address, units.Token, error) {
	reg := NewStakeRegistry()
	opts := &bind.CallOpts{Context: ctx}
	addr, err := bind.Call(reg.Instance(b, d.Contracts.StakeRegistry), opts, reg.PackStakeToken(), reg.UnpackStakeToken)
	if err != nil {
		return common.Address{}, units.Token{}, fmt.Errorf("read StakeRegistry.stakeToken: %w", err)
	}
	if addr == (common.Address{}) {
		return addr, units.Ether, nil
	}
	erc20 := NewDevToken() // any ERC-20's decimals() and symbol() read alike
	dec, err := bind.Call(erc20.Instance(b, addr), opts, erc20.PackDecimals(), erc20.UnpackDecimals)
	if err != nil {
		return addr, units.Token{}, fmt.Errorf("read decimals() of stake token %s: %w", addr.Hex(), err)
	}
	if dec > units.MaxDecimals {
		return addr, units.Token{}, fmt.Errorf("stake token %s reports %d decimals (at most %d make sense)", addr.Hex(), dec, units.MaxDecimals)
	}
	sym, err := bind.Call(erc20.Instance(b, addr), opts, erc20.PackSymbol(), erc20.UnpackSymbol)
	if err != nil || sym == "" || len(sym) > 16 {
		sym = addr.Hex()[:10] // symbol() is optional in ERC-20
	}
	return addr, units.Token{Symbol: sym, Decimals: dec}, nil
}
