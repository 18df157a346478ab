package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/labstack/echo/v4"
)

// ChainRPC is what POST /v1/rpc reads from the node's chain.
type ChainRPC interface {
	ethereum.ChainIDReader
	BlockNumber(ctx context.Context) (uint64, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	ethereum.ChainStateReader
	ethereum.PendingStateReader
	ethereum.ContractCaller
	ethereum.PendingContractCaller
	ethereum.GasEstimator
	ethereum.GasPricer
	ethereum.GasPricer1559
	ethereum.FeeHistoryReader
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
	TransactionByHash(ctx context.Context, hash common.Hash) (tx *types.Transaction, isPending bool, err error)
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
}

// POST /v1/rpc is a small Ethereum JSON-RPC endpoint, so that a client holding its own wallet
// (the CLI, cast, any library) can send through the node without a chain RPC of its own. It
// answers the reads a wallet needs to build a transaction (chain id, head, nonce, balance,
// code, calls and gas estimates of the node's own contracts at recent blocks, fees,
// receipts, transactions to its contracts: what `surety log verify` reads too), the logs of
// its own contracts in ranges of at most maxLogRange blocks (what `surety log verify
// --recompute` replays), and eth_sendRawTransaction only for calls to the escrow and the stake
// registry, simulated first like POST /v1/tx/raw. Nothing else: no filters, no subscriptions,
// no batches; every request counts against the caller's write limit like any POST.

// rpcRequest is one JSON-RPC 2.0 call.
type rpcRequest struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

// rpcResponse is its answer: Result (JSON null included) or Error.
type rpcResponse struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      json.RawMessage  `json:"id"`
	Result  *json.RawMessage `json:"result,omitempty"`
	Error   *rpcError        `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// JSON-RPC error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcNoSuchMethod   = -32601
	rpcInvalidParams  = -32602
	rpcServerError    = -32000
)

// rpcMethod answers one method from its positional params.
type rpcMethod func(s *Server, ctx context.Context, p rpcParams) (any, error)

var rpcMethods = map[string]rpcMethod{
	"eth_chainId": func(s *Server, ctx context.Context, _ rpcParams) (any, error) {
		id, err := s.cfg.ChainRPC.ChainID(ctx)
		return (*hexutil.Big)(id), err
	},
	"net_version": func(s *Server, ctx context.Context, _ rpcParams) (any, error) {
		id, err := s.cfg.ChainRPC.ChainID(ctx)
		if err != nil {
			return nil, err
		}
		return id.String(), nil
	},
	"eth_blockNumber": func(s *Server, ctx context.Context, _ rpcParams) (any, error) {
		n, err := s.cfg.ChainRPC.BlockNumber(ctx)
		return hexutil.Uint64(n), err
	},
	"eth_getBlockByNumber": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		num, pending, err := p.block(0)
		if err != nil {
			return nil, err
		}
		var full bool
		if err := p.opt(1, &full); err != nil {
			return nil, err
		}
		if full || pending {
			return nil, errRPCParams("only headers (full=false) of mined blocks are served")
		}
		h, err := s.cfg.ChainRPC.HeaderByNumber(ctx, num)
		if errors.Is(err, ethereum.NotFound) {
			return nil, nil
		}
		return h, err
	},
	"eth_getTransactionCount": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		return stateRead(ctx, p, s.cfg.ChainRPC.NonceAt, s.cfg.ChainRPC.PendingNonceAt, func(n uint64) any { return hexutil.Uint64(n) })
	},
	"eth_getBalance": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		return stateRead(ctx, p, s.cfg.ChainRPC.BalanceAt, s.cfg.ChainRPC.PendingBalanceAt, func(b *big.Int) any { return (*hexutil.Big)(b) })
	},
	"eth_getCode": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		return stateRead(ctx, p, s.cfg.ChainRPC.CodeAt, s.cfg.ChainRPC.PendingCodeAt, func(b []byte) any { return hexutil.Bytes(b) })
	},
	"eth_call": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		msg, err := p.call(0)
		if err != nil {
			return nil, err
		}
		if err := s.callable(msg); err != nil {
			return nil, err
		}
		num, pending, err := p.block(1)
		if err != nil {
			return nil, err
		}
		if err := s.recent(ctx, num); err != nil {
			return nil, err
		}
		var out []byte
		if pending {
			out, err = s.cfg.ChainRPC.PendingCallContract(ctx, msg)
		} else {
			out, err = s.cfg.ChainRPC.CallContract(ctx, msg, num)
		}
		return hexutil.Bytes(out), err
	},
	"eth_estimateGas": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		msg, err := p.call(0)
		if err != nil {
			return nil, err
		}
		if err := s.callable(msg); err != nil {
			return nil, err
		}
		gas, err := s.cfg.ChainRPC.EstimateGas(ctx, msg)
		return hexutil.Uint64(gas), err
	},
	"eth_gasPrice": func(s *Server, ctx context.Context, _ rpcParams) (any, error) {
		v, err := s.cfg.ChainRPC.SuggestGasPrice(ctx)
		return (*hexutil.Big)(v), err
	},
	"eth_maxPriorityFeePerGas": func(s *Server, ctx context.Context, _ rpcParams) (any, error) {
		v, err := s.cfg.ChainRPC.SuggestGasTipCap(ctx)
		return (*hexutil.Big)(v), err
	},
	"eth_feeHistory": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		var count hexutil.Uint64
		if err := p.req(0, &count); err != nil {
			// Some clients send the count as a plain number.
			var n uint64
			if p.req(0, &n) != nil {
				return nil, err
			}
			count = hexutil.Uint64(n)
		}
		if count == 0 || count > maxFeeHistory {
			return nil, errRPCParams("block count must be 1 to %d", maxFeeHistory)
		}
		num, pending, err := p.block(1)
		if err != nil {
			return nil, err
		}
		if pending {
			num = nil
		}
		var pct []float64
		if err := p.opt(2, &pct); err != nil {
			return nil, err
		}
		if len(pct) > maxRewardPercentiles {
			return nil, errRPCParams("at most %d reward percentiles", maxRewardPercentiles)
		}
		fh, err := s.cfg.ChainRPC.FeeHistory(ctx, uint64(count), num, pct)
		if err != nil {
			return nil, err
		}
		return feeHistoryJSON(fh), nil
	},
	"eth_getTransactionReceipt": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		var h common.Hash
		if err := p.req(0, &h); err != nil {
			return nil, err
		}
		r, err := s.cfg.ChainRPC.TransactionReceipt(ctx, h)
		if errors.Is(err, ethereum.NotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		tx, _, err := s.cfg.ChainRPC.TransactionByHash(ctx, h)
		if err != nil {
			return nil, err
		}
		return receiptJSON(r, tx)
	},
	"eth_getTransactionByHash": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		var h common.Hash
		if err := p.req(0, &h); err != nil {
			return nil, err
		}
		tx, pending, err := s.cfg.ChainRPC.TransactionByHash(ctx, h)
		if errors.Is(err, ethereum.NotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		// What an auditor reads: the anchor of a log head (who sent it), and a wallet its own
		// calls; the node's own contracts only, as eth_call.
		if tx.To() == nil {
			return nil, errRPCParams("only transactions to the node's own contracts are served")
		}
		if err := s.callable(ethereum.CallMsg{To: tx.To()}); err != nil {
			return nil, errRPCParams("only transactions to the node's own contracts are served")
		}
		var r *types.Receipt
		if !pending {
			if r, err = s.cfg.ChainRPC.TransactionReceipt(ctx, h); err != nil && !errors.Is(err, ethereum.NotFound) {
				return nil, err
			}
		}
		return transactionJSON(tx, r)
	},
	"eth_getLogs": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		q, err := p.logFilter(0)
		if err != nil {
			return nil, err
		}
		// Each of the node's contracts once: a list of one address many times over costs the
		// chain's log filter as many passes.
		slices.SortFunc(q.Addresses, func(a, b common.Address) int { return a.Cmp(b) })
		q.Addresses = slices.Compact(q.Addresses)
		for _, a := range q.Addresses {
			if err := s.callable(ethereum.CallMsg{To: &a}); err != nil {
				return nil, errRPCParams("logs are served only of the node's own contracts")
			}
		}
		head, err := s.cfg.ChainRPC.BlockNumber(ctx)
		if err != nil {
			return nil, err
		}
		from, to := head, head
		if q.FromBlock != nil {
			from = q.FromBlock.Uint64()
		}
		if q.ToBlock != nil {
			to = q.ToBlock.Uint64()
		}
		if to >= from && to-from >= maxLogRange {
			return nil, errRPCParams("a log query spans at most %d blocks, not %d (from %d to %d)", maxLogRange, to-from+1, from, to)
		}
		if to = min(to, head); from > to {
			return []types.Log{}, nil
		}
		q.FromBlock, q.ToBlock = new(big.Int).SetUint64(from), new(big.Int).SetUint64(to)
		logs, err := s.cfg.ChainRPC.FilterLogs(ctx, q)
		if err != nil {
			return nil, err
		}
		if logs == nil {
			logs = []types.Log{}
		}
		return logs, nil
	},
	"eth_sendRawTransaction": func(s *Server, ctx context.Context, p rpcParams) (any, error) {
		var raw hexutil.Bytes
		if err := p.req(0, &raw); err != nil {
			return nil, err
		}
		var tx types.Transaction
		if err := tx.UnmarshalBinary(raw); err != nil {
			return nil, errRPCParams("not a signed transaction: %v", err)
		}
		var sent *types.Transaction
		var err error
		switch to := tx.To(); {
		case to != nil && *to == s.cfg.Bounties.Escrow():
			sent, err = s.cfg.Bounties.Broadcast(ctx, raw)
		case to != nil && *to == s.cfg.Staking.Registry():
			sent, err = s.cfg.Staking.Broadcast(ctx, raw)
		case to != nil && s.cfg.Jobs != nil && slices.Contains(s.cfg.Jobs.Contracts(), *to):
			sent, err = s.cfg.Jobs.Broadcast(ctx, raw)
		case to != nil && s.cfg.ERC8004Relay != nil && slices.Contains(s.cfg.ERC8004Relay.Registries(), *to):
			sent, err = s.cfg.ERC8004Relay.Broadcast(ctx, raw)
		default:
			return nil, errRPCParams("the node relays only calls to the escrow %s, the stake registry %s, the job contracts and the ERC-8004 registries", s.cfg.Bounties.Escrow().Hex(), s.cfg.Staking.Registry().Hex())
		}
		if err != nil {
			return nil, err
		}
		return sent.Hash(), nil
	},
}

// callable refuses a call (eth_call, eth_estimateGas) of anything but the node's own
// contracts: a wallet sending through the node reads and estimates those, and the node is
// no open proxy for computing on its chain.
func (s *Server) callable(msg ethereum.CallMsg) error {
	own := []common.Address{s.cfg.Bounties.Escrow(), s.cfg.Staking.Registry()}
	if s.cfg.Jobs != nil {
		own = append(own, s.cfg.Jobs.Contracts()...)
	}
	for _, c := range s.cfg.Chain.Contracts {
		own = append(own, c.Address)
	}
	if slices.Contains(own, *msg.To) {
		return nil
	}
	names := make([]string, len(own))
	for i, a := range own {
		names[i] = a.Hex()
	}
	return errRPCParams("calls go only to the node's own contracts (%s)", strings.Join(names, ", "))
}

// recent refuses a block further than maxCallAge behind the head (nil, a tag such as safe or
// finalized, is recent): the chain's history is not the node's to serve.
func (s *Server) recent(ctx context.Context, num *big.Int) error {
	if num == nil || num.Sign() < 0 {
		return nil
	}
	head, err := s.cfg.ChainRPC.BlockNumber(ctx)
	if err != nil {
		return err
	}
	if head > maxCallAge && num.Uint64() < head-maxCallAge {
		return errRPCParams("calls read only recent blocks (at most %d behind the head, %d)", maxCallAge, head)
	}
	return nil
}

// rpc answers POST /v1/rpc.
func (s *Server) rpc(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		code := rpcParseError
		if len(body) > 0 && body[0] == '[' {
			code = rpcInvalidRequest
			err = errors.New("batches are not served")
		}
		return c.JSON(http.StatusOK, rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: code, Message: err.Error()}})
	}
	out := rpcResponse{JSONRPC: "2.0", ID: req.ID}
	if out.ID == nil {
		out.ID = json.RawMessage("null")
	}
	m, ok := rpcMethods[req.Method]
	switch {
	case req.JSONRPC != "2.0":
		out.Error = &rpcError{Code: rpcInvalidRequest, Message: `not a JSON-RPC 2.0 request ("jsonrpc": "2.0")`}
	case !ok:
		out.Error = &rpcError{Code: rpcNoSuchMethod, Message: fmt.Sprintf("the method %q is not served here (this endpoint answers what a wallet needs to send through the node)", clip(req.Method, 64))}
	default:
		res, err := m(s, c.Request().Context(), rpcParams(req.Params))
		if err != nil {
			out.Error = s.rpcErrorOf(err)
			break
		}
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		raw := json.RawMessage(b)
		out.Result = &raw
	}
	if req.ID == nil && req.JSONRPC == "2.0" {
		// A notification (no id): JSON-RPC 2.0 says it gets no reply, not even an error.
		return c.NoContent(http.StatusNoContent)
	}
	return c.JSON(http.StatusOK, out)
}

// rpcErrorOf turns an error into a JSON-RPC error. An error the chain answered (a JSON-RPC
// error: a revert, a refused transaction) passes through with its code, message and revert
// data, so a client decodes a contract's custom error as if it had asked the chain; a
// refusal of the node's own keeps its message; anything else (the chain unreachable, a
// timeout) is logged and answered generically: its text may name the node's chain RPC URL.
func (s *Server) rpcErrorOf(err error) *rpcError {
	var pe *paramsError
	if errors.As(err, &pe) {
		return &rpcError{Code: rpcInvalidParams, Message: pe.msg}
	}
	var coded rpc.Error
	if errors.As(err, &coded) {
		out := &rpcError{Code: coded.ErrorCode(), Message: clip(coded.Error(), maxRPCMessage)}
		var data rpc.DataError
		if errors.As(err, &data) {
			if d, ok := data.ErrorData().(string); ok && len(d) <= maxRPCData {
				out.Data = d
			}
		}
		return out
	}
	// The node's own refusals read as its problem answers do: the mapped title and the
	// detail written for people, never err's raw text.
	if p := problemFor(err); p.Status < 500 || p.Type != problemType+"internal" {
		msg := p.Title
		if p.Detail != "" {
			msg += ": " + p.Detail
		}
		return &rpcError{Code: rpcServerError, Message: clip(msg, maxRPCMessage)}
	}
	s.log.Warn("rpc: the chain did not answer", "err", err)
	return &rpcError{Code: rpcServerError, Message: "the node's chain did not answer; try again"}
}

// Bounds of what one /v1/rpc call may ask.
const (
	// maxRPCMessage bounds the error message relayed from the chain, and maxRPCData its
	// revert data (hex).
	maxRPCMessage = 512
	maxRPCData    = 16 << 10
	// maxCallGas bounds the gas of an eth_call or eth_estimateGas here: a wallet's call
	// to the escrow or the registry needs far less, and it bounds what a caller can make
	// the node's chain compute.
	maxCallGas = 5_000_000
	// maxFeeHistory and maxRewardPercentiles bound eth_feeHistory (wallets ask for about
	// ten blocks and a percentile or two; geth allows 1024 and 100).
	maxFeeHistory        = 64
	maxRewardPercentiles = 10
)

// feeHistoryJSON is eth_feeHistory's answer as the JSON-RPC spec writes it.
func feeHistoryJSON(fh *ethereum.FeeHistory) map[string]any {
	hexes := func(xs []*big.Int) []*hexutil.Big {
		out := make([]*hexutil.Big, len(xs))
		for i, x := range xs {
			out[i] = (*hexutil.Big)(x)
		}
		return out
	}
	out := map[string]any{"oldestBlock": (*hexutil.Big)(fh.OldestBlock), "baseFeePerGas": hexes(fh.BaseFee), "gasUsedRatio": fh.GasUsedRatio}
	if fh.Reward != nil {
		rewards := make([][]*hexutil.Big, len(fh.Reward))
		for i, r := range fh.Reward {
			rewards[i] = hexes(r)
		}
		out["reward"] = rewards
	}
	return out
}

// paramsError is a request's params the method cannot use.
type paramsError struct{ msg string }

func (e *paramsError) Error() string { return e.msg }

func errRPCParams(format string, args ...any) error {
	return &paramsError{msg: fmt.Sprintf(format, args...)}
}

// rpcParams are a call's positional params.
type rpcParams []json.RawMessage

// req decodes param i, which must be there.
func (p rpcParams) req(i int, v any) error {
	if i >= len(p) {
		return errRPCParams("missing param %d", i)
	}
	if err := json.Unmarshal(p[i], v); err != nil {
		return errRPCParams("param %d: %v", i, err)
	}
	return nil
}

// logFilter reads an eth_getLogs filter: fromBlock and toBlock (numbers, or latest/earliest;
// absent: latest), address (one or several, required: the node serves its own contracts'),
// topics (each null, a hash or a list of hashes); no blockHash.
func (p rpcParams) logFilter(i int) (ethereum.FilterQuery, error) {
	var f struct {
		FromBlock *rpc.BlockNumber  `json:"fromBlock"`
		ToBlock   *rpc.BlockNumber  `json:"toBlock"`
		Address   json.RawMessage   `json:"address"`
		Topics    []json.RawMessage `json:"topics"`
		BlockHash *common.Hash      `json:"blockHash"`
	}
	var q ethereum.FilterQuery
	if err := p.req(i, &f); err != nil {
		return q, err
	}
	if f.BlockHash != nil {
		return q, errRPCParams("blockHash filters are not served; give fromBlock and toBlock")
	}
	block := func(bn *rpc.BlockNumber) (*big.Int, error) {
		switch {
		case bn == nil || *bn == rpc.LatestBlockNumber:
			return nil, nil
		case *bn == rpc.EarliestBlockNumber:
			return new(big.Int), nil
		case *bn < 0:
			return nil, errRPCParams("block tag %v is not served in log queries; give a number or latest", *bn)
		}
		return big.NewInt(bn.Int64()), nil
	}
	var err error
	if q.FromBlock, err = block(f.FromBlock); err != nil {
		return q, err
	}
	if q.ToBlock, err = block(f.ToBlock); err != nil {
		return q, err
	}
	var one common.Address
	if err := json.Unmarshal(f.Address, &one); err == nil {
		q.Addresses = []common.Address{one}
	} else if err := json.Unmarshal(f.Address, &q.Addresses); err != nil || len(q.Addresses) == 0 || len(q.Addresses) > maxLogAddresses {
		return q, errRPCParams("a log query names the node's contracts: address, one or a list of at most %d", maxLogAddresses)
	}
	if len(f.Topics) > 4 {
		return q, errRPCParams("at most 4 topics")
	}
	for _, t := range f.Topics {
		var h common.Hash
		var hs []common.Hash
		switch {
		case string(t) == "null":
			q.Topics = append(q.Topics, nil)
		case json.Unmarshal(t, &h) == nil:
			q.Topics = append(q.Topics, []common.Hash{h})
		case json.Unmarshal(t, &hs) == nil && len(hs) <= maxLogTopicAlternatives:
			q.Topics = append(q.Topics, hs)
		default:
			return q, errRPCParams("a topic is null, a 32-byte hash or a list of at most %d", maxLogTopicAlternatives)
		}
	}
	return q, nil
}

// opt decodes param i when it is there.
func (p rpcParams) opt(i int, v any) error {
	if i >= len(p) || string(p[i]) == "null" {
		return nil
	}
	return p.req(i, v)
}

// block reads a block param (a number or a tag; absent means latest): nil for the latest
// block, pending for the pending one.
func (p rpcParams) block(i int) (num *big.Int, pending bool, err error) {
	bn := rpc.LatestBlockNumber
	if err := p.opt(i, &bn); err != nil {
		return nil, false, err
	}
	switch bn {
	case rpc.LatestBlockNumber:
		return nil, false, nil
	case rpc.PendingBlockNumber:
		return nil, true, nil
	case rpc.EarliestBlockNumber:
		return new(big.Int), false, nil // the genesis, by number, so that its age is plain
	}
	return big.NewInt(int64(bn)), false, nil
}

// callArgs is a call object (eth_call, eth_estimateGas).
type callArgs struct {
	From                 *common.Address `json:"from"`
	To                   *common.Address `json:"to"`
	Gas                  *hexutil.Uint64 `json:"gas"`
	GasPrice             *hexutil.Big    `json:"gasPrice"`
	MaxFeePerGas         *hexutil.Big    `json:"maxFeePerGas"`
	MaxPriorityFeePerGas *hexutil.Big    `json:"maxPriorityFeePerGas"`
	Value                *hexutil.Big    `json:"value"`
	Data                 *hexutil.Bytes  `json:"data"`
	Input                *hexutil.Bytes  `json:"input"`
}

// call reads a call object.
func (p rpcParams) call(i int) (ethereum.CallMsg, error) {
	var a callArgs
	if err := p.req(i, &a); err != nil {
		return ethereum.CallMsg{}, err
	}
	if a.To == nil {
		return ethereum.CallMsg{}, errRPCParams("a call needs a to address (contract creation is not simulated here)")
	}
	msg := ethereum.CallMsg{To: a.To, Gas: maxCallGas}
	if a.From != nil {
		msg.From = *a.From
	}
	if a.Gas != nil && uint64(*a.Gas) < maxCallGas {
		msg.Gas = uint64(*a.Gas)
	}
	msg.GasPrice, msg.GasFeeCap, msg.GasTipCap, msg.Value = a.GasPrice.ToInt(), a.MaxFeePerGas.ToInt(), a.MaxPriorityFeePerGas.ToInt(), a.Value.ToInt()
	switch {
	case a.Input != nil:
		msg.Data = *a.Input
	case a.Data != nil:
		msg.Data = *a.Data
	}
	return msg, nil
}

// stateRead answers a read of an account's state at a block (address, block): at, or
// pending for the pending block.
func stateRead[T any](ctx context.Context, p rpcParams, at func(context.Context, common.Address, *big.Int) (T, error),
	pending func(context.Context, common.Address) (T, error), encode func(T) any) (any, error) {
	var addr common.Address
	if err := p.req(0, &addr); err != nil {
		return nil, err
	}
	num, isPending, err := p.block(1)
	if err != nil {
		return nil, err
	}
	var v T
	if isPending {
		v, err = pending(ctx, addr)
	} else {
		v, err = at(ctx, addr, num)
	}
	if err != nil {
		return nil, err
	}
	return encode(v), nil
}

// clip cuts s to at most n bytes (never inside a character), marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// transactionJSON is a transaction as eth_getTransactionByHash answers it: go-ethereum's
// encoding of the signed transaction, plus from and, once mined (r, its receipt), the block
// it is in and its index there.
func transactionJSON(tx *types.Transaction, r *types.Receipt) (map[string]any, error) {
	b, err := json.Marshal(tx)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	if err != nil {
		return nil, err
	}
	out["from"] = from
	out["blockHash"], out["blockNumber"], out["transactionIndex"] = nil, nil, nil
	if r != nil {
		out["blockHash"], out["blockNumber"], out["transactionIndex"] = r.BlockHash, (*hexutil.Big)(r.BlockNumber), hexutil.Uint64(r.TransactionIndex)
	}
	return out, nil
}

// receiptJSON is a receipt as eth_getTransactionReceipt answers it: go-ethereum's receipt
// encoding, plus the transaction's from and to, a null contractAddress for a call, and no
// pre-Byzantium root (clients such as cast require the first and choke on the rest).
func receiptJSON(r *types.Receipt, tx *types.Transaction) (map[string]any, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	if err != nil {
		return nil, err
	}
	out["from"] = from
	out["to"] = tx.To()
	if r.ContractAddress == (common.Address{}) {
		out["contractAddress"] = nil
	}
	if len(r.PostState) == 0 {
		delete(out, "root")
	}
	return out, nil
}
