// Package anvil runs Foundry's Anvil devnet as a child process on loopback: for `make devnet`
// and for integration tests, which each start their own on a free port.
package anvil

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// Config says how to start Anvil.
type Config struct {
	// Bin is the anvil executable.
	Bin string
	// Port to listen on at 127.0.0.1; 0 picks a free one.
	Port int
	// ChainID; 0 keeps Anvil's default (31337).
	ChainID uint64
	// BlockTime; 0 means automine (a block per transaction), with a watcher that mines
	// whatever automine leaves ready in the pool, even if automine is turned off over RPC,
	// and sends again what it leaves queued at its wallet's next nonce (flushStuck).
	BlockTime time.Duration
	// StartTimeout bounds the wait for the RPC to answer; 0 means 20s.
	StartTimeout time.Duration
}

// Anvil is a running Anvil process.
type Anvil struct {
	// URL is the HTTP JSON-RPC endpoint.
	URL  string
	Port int

	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
	err    error // set before exited is closed
	once   sync.Once

	stopFlush context.CancelFunc // ends flushStuck; nil when it does not run
	flushed   sync.WaitGroup
}

// Start launches Anvil and waits until its RPC answers. The process is killed if the parent
// dies, so a crashed test leaves nothing behind.
func Start(ctx context.Context, cfg Config) (*Anvil, error) {
	if cfg.Bin == "" {
		return nil, errors.New("anvil: no binary given")
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 20 * time.Second
	}
	// A free port found by listening can be taken by someone else before Anvil binds it;
	// try a few times rather than fail a test on that race.
	if cfg.Port != 0 {
		// A chain already listening there would answer our readiness check, and we would
		// deploy onto it and change its accounts: refuse instead.
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", cfg.Port))
		if err != nil {
			return nil, fmt.Errorf("%w: 127.0.0.1:%d (another Anvil or node?): stop it, or pick another port", ErrPortInUse, cfg.Port)
		}
		ln.Close()
	}
	var lastErr error
	for range 3 {
		port := cfg.Port
		if port == 0 {
			p, err := freePort()
			if err != nil {
				return nil, err
			}
			port = p
		}
		a, err := start(ctx, cfg, port)
		if err == nil {
			return a, nil
		}
		lastErr = err
		if cfg.Port != 0 {
			break
		}
	}
	return nil, lastErr
}

func start(ctx context.Context, cfg Config, port int) (*Anvil, error) {
	args := []string{"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--silent"}
	if cfg.ChainID != 0 {
		args = append(args, "--chain-id", strconv.FormatUint(cfg.ChainID, 10))
	}
	if cfg.BlockTime > 0 {
		args = append(args, "--block-time", strconv.FormatFloat(cfg.BlockTime.Seconds(), 'f', -1, 64))
	}
	cmd := exec.Command(cfg.Bin, args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: a Ctrl-C in the terminal reaches only the parent, which then stops
	// Anvil in order. Pdeathsig kills it if the parent dies without doing so.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("anvil: start %s: %w", cfg.Bin, err)
	}
	a := &Anvil{
		URL:    fmt.Sprintf("http://127.0.0.1:%d", port),
		Port:   port,
		cmd:    cmd,
		out:    out,
		exited: make(chan struct{}),
	}
	go func() {
		a.err = cmd.Wait()
		close(a.exited)
	}()
	if err := a.waitReady(ctx, cfg.StartTimeout); err != nil {
		a.Stop()
		return nil, err
	}
	select {
	case <-a.exited: // someone else answered on the port: ours could not bind it
		return nil, fmt.Errorf("%w: 127.0.0.1:%d answered, but not this Anvil (%v): %s", ErrPortInUse, port, a.err, bytes.TrimSpace(a.out.Bytes()))
	default:
	}
	if cfg.BlockTime == 0 {
		fctx, cancel := context.WithCancel(context.Background())
		a.stopFlush = cancel
		a.flushed.Add(1)
		go func() {
			defer a.flushed.Done()
			a.flushStuck(fctx)
		}()
	}
	return a, nil
}

// flushStuck works around two Anvil bugs (foundry-rs/foundry#10122, seen here with anvil
// 1.7.1 on a busy machine), in which automine leaves a wallet's transaction in the pool with
// no block coming, and every later transaction of that wallet waits behind it forever:
//   - a ready transaction the miner was never told of. When ready transactions were there at
//     the last look too and no block came since, it mines a block (evm_mine), which takes them.
//   - a transaction queued behind a predecessor that was mined while it was being added, so
//     the pool waits for a predecessor it will never see again. When a wallet's queued
//     transaction has the wallet's next nonce and was there at the last look too, the
//     wallet's transactions are taken out of the pool and sent again, so that the pool judges
//     them afresh: ready, in nonce order.
//
// It looks every flushEvery. A healthy automine leaves nothing ready or queued at the next
// nonce for that long, so it does nothing then; a transaction queued behind a real gap in
// nonces is left where it is.
func (a *Anvil) flushStuck(ctx context.Context) {
	c, err := rpc.DialContext(ctx, a.URL)
	if err != nil {
		return
	}
	defer c.Close()
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	var lastHead hexutil.Uint64
	lastReady := false
	var lastQueued map[common.Hash]bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var pool struct {
			Pending hexutil.Uint64 `json:"pending"`
			Queued  hexutil.Uint64 `json:"queued"`
		}
		var head hexutil.Uint64
		if c.CallContext(ctx, &pool, "txpool_status") != nil || c.CallContext(ctx, &head, "eth_blockNumber") != nil {
			lastReady, lastQueued = false, nil
			continue
		}
		ready := pool.Pending > 0
		if ready && lastReady && head == lastHead {
			_ = c.CallContext(ctx, nil, "evm_mine") // if it fails, the next look tries again
			ready = false
		}
		lastHead, lastReady = head, ready
		if pool.Queued == 0 {
			lastQueued = nil
			continue
		}
		lastQueued = requeue(ctx, c, lastQueued)
	}
}

// requeue looks at the pool's queued transactions that have their wallet's next nonce. For
// each such one also in seen (there at the last look), it takes all of that wallet's
// transactions out of the pool (anvil_dropTransaction leaves queued ones where they are) and
// sends them again in nonce order. It returns the ones it left, for the next look.
func requeue(ctx context.Context, c *rpc.Client, seen map[common.Hash]bool) map[common.Hash]bool {
	var content struct {
		Pending map[common.Address]map[string]*types.Transaction `json:"pending"`
		Queued  map[common.Address]map[string]*types.Transaction `json:"queued"`
	}
	if c.CallContext(ctx, &content, "txpool_content") != nil {
		return nil
	}
	left := map[common.Hash]bool{}
	for from, queued := range content.Queued {
		var nonce hexutil.Uint64
		if c.CallContext(ctx, &nonce, "eth_getTransactionCount", from, "latest") != nil {
			continue
		}
		var stuck *types.Transaction
		for _, tx := range queued {
			if tx != nil && tx.Nonce() == uint64(nonce) {
				stuck = tx // the others wait behind it, or behind a real gap
			}
		}
		switch {
		case stuck == nil:
			continue
		case !seen[stuck.Hash()]:
			left[stuck.Hash()] = true
			continue
		}
		var txs []*types.Transaction
		for _, set := range []map[string]*types.Transaction{content.Pending[from], queued} {
			for _, tx := range set {
				if tx != nil {
					txs = append(txs, tx)
				}
			}
		}
		slices.SortFunc(txs, func(a, b *types.Transaction) int { return cmp.Compare(a.Nonce(), b.Nonce()) })
		// One the wallet sends in between is taken out too and not sent here: its sender's
		// own rebroadcast brings it back, as it does one this fails to send again.
		if c.CallContext(ctx, nil, "anvil_removePoolTransactions", from) != nil {
			continue
		}
		for _, tx := range txs {
			if raw, err := tx.MarshalBinary(); err == nil {
				_ = c.CallContext(ctx, nil, "eth_sendRawTransaction", hexutil.Bytes(raw))
			}
		}
	}
	return left
}

// flushEvery is how often flushStuck looks for transactions automine left behind.
const flushEvery = 500 * time.Millisecond

// ErrPortInUse reports that the port asked for already has a listener: Anvil is not started
// over someone else's chain.
var ErrPortInUse = errors.New("anvil: port in use")

func (a *Anvil) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-a.exited:
			return fmt.Errorf("anvil exited at start (%v): %s", a.err, bytes.TrimSpace(a.out.Bytes()))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if err := a.ping(ctx); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("anvil did not answer on %s within %s", a.URL, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (a *Anvil) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := rpc.DialContext(ctx, a.URL)
	if err != nil {
		return err
	}
	defer c.Close()
	var id hexutil.Uint64
	return c.CallContext(ctx, &id, "eth_chainId")
}

// SetBalance sets the balance of addr (Anvil's anvil_setBalance).
func (a *Anvil) SetBalance(ctx context.Context, addr common.Address, wei *big.Int) error {
	c, err := rpc.DialContext(ctx, a.URL)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.CallContext(ctx, nil, "anvil_setBalance", addr, (*hexutil.Big)(wei)); err != nil {
		return fmt.Errorf("anvil: set balance of %s: %w", addr, err)
	}
	return nil
}

// Exited is closed when the process has ended.
func (a *Anvil) Exited() <-chan struct{} { return a.exited }

// Stop ends the process: SIGTERM, then SIGKILL after five seconds. It is safe to call twice.
func (a *Anvil) Stop() {
	a.once.Do(func() {
		if a.stopFlush != nil {
			a.stopFlush()
			a.flushed.Wait()
		}
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.exited:
		case <-time.After(5 * time.Second):
			_ = a.cmd.Process.Kill()
			<-a.exited
		}
	})
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("anvil: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Keep the first few KiB: enough to explain a failed start, bounded for a long run.
	if room := 8<<10 - l.b.Len(); room > 0 {
		if len(p) > room {
			l.b.Write(p[:room])
		} else {
			l.b.Write(p)
		}
	}
	return len(p), nil
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}

// IncreaseTime moves Anvil's clock forward by d and mines a block at the new time.
func (a *Anvil) IncreaseTime(ctx context.Context, d time.Duration) error {
	c, err := rpc.DialContext(ctx, a.URL)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.CallContext(ctx, nil, "evm_increaseTime", hexutil.Uint64(d/time.Second)); err != nil {
		return fmt.Errorf("anvil: increase time: %w", err)
	}
	if err := c.CallContext(ctx, nil, "evm_mine"); err != nil {
		return fmt.Errorf("anvil: mine: %w", err)
	}
	return nil
}
