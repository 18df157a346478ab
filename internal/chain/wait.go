package chain

import (
	"context"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// ReceiptReader reads transaction receipts.
type ReceiptReader interface {
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
}

// WaitMined waits until the transaction hash has a receipt, or ctx ends. It polls every 5 ms
// at first, since an automining chain (Anvil, the embedded chain) has the receipt within
// milliseconds, and backs off to one poll a second for chains with real block times.
// (go-ethereum's bind.WaitMined polls once a second from the start.)
func WaitMined(ctx context.Context, r ReceiptReader, hash common.Hash) (*types.Receipt, error) {
	wait := 5 * time.Millisecond
	for {
		// Not found yet, or a transient transport error: either way, ask again until ctx ends.
		if receipt, err := r.TransactionReceipt(ctx, hash); err == nil {
			return receipt, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		if wait *= 2; wait > time.Second {
			wait = time.Second
		}
	}
}
