package erc8004

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// DIDKey is the on-chain metadata key under which Surety registers an agent's DID (its
// bytes, UTF-8). The registration file names the DID too; the metadata makes it findable on
// chain.
const DIDKey = "did"

// ErrNoAgent reports an agent id the index does not hold.
var ErrNoAgent = errors.New("erc8004: no such agent")

// ErrNoBindings reports FeedbackFor on an index that cannot check which wallets control a DID.
var ErrNoBindings = errors.New("erc8004: the index has no wallet bindings to check a DID's agents against")

// Agent is one agent of the identity registry as the index holds it.
type Agent struct {
	ID    uint64         `json:"agentId"`
	Owner common.Address `json:"owner"`
	// Wallet is the agent wallet; zero when cleared (by a transfer or unsetAgentWallet).
	Wallet common.Address `json:"wallet"`
	URI    string         `json:"agentURI"`
	// DID is the value of the agent's "did" metadata: what its registrant claims, checked
	// against the DID's wallet bindings only where a query says so.
	DID             string `json:"did,omitempty"`
	RegisteredBlock uint64 `json:"registeredBlock"`
	UpdatedBlock    uint64 `json:"updatedBlock"`
}

// Feedback is one feedback of the reputation registry.
type Feedback struct {
	AgentID       uint64         `json:"agentId"`
	Client        common.Address `json:"clientAddress"`
	FeedbackIndex uint64         `json:"feedbackIndex"`
	// Value is a signed fixed-point number with ValueDecimals decimals (0-18).
	Value         *big.Int    `json:"value"`
	ValueDecimals uint8       `json:"valueDecimals"`
	Tag1          string      `json:"tag1"`
	Tag2          string      `json:"tag2"`
	Endpoint      string      `json:"endpoint"`
	FeedbackURI   string      `json:"feedbackURI"`
	FeedbackHash  common.Hash `json:"feedbackHash"`
	Revoked       bool        `json:"revoked"`
	// RevokedBlock is the block of the revocation (0 while not revoked).
	RevokedBlock uint64 `json:"revokedBlock,omitempty"`
	Block        uint64 `json:"block"`
	// Time is the time of its block (unix seconds).
	Time     int64  `json:"time"`
	LogIndex uint   `json:"logIndex"`
	TxHash   string `json:"txHash"`
}

// Response is one response appended to a feedback.
type Response struct {
	AgentID       uint64         `json:"agentId"`
	Client        common.Address `json:"clientAddress"`
	FeedbackIndex uint64         `json:"feedbackIndex"`
	Responder     common.Address `json:"responder"`
	ResponseURI   string         `json:"responseURI"`
	ResponseHash  common.Hash    `json:"responseHash"`
	Block         uint64         `json:"block"`
	LogIndex      uint           `json:"logIndex"`
}

// Validation is one validation request and its latest response.
type Validation struct {
	RequestHash  common.Hash    `json:"requestHash"`
	AgentID      uint64         `json:"agentId"`
	Validator    common.Address `json:"validatorAddress"`
	RequestURI   string         `json:"requestURI"`
	Responded    bool           `json:"responded"`
	Response     uint8          `json:"response"`
	ResponseURI  string         `json:"responseURI,omitempty"`
	ResponseHash common.Hash    `json:"responseHash"`
	Tag          string         `json:"tag,omitempty"`
	Block        uint64         `json:"block"`
	UpdatedBlock uint64         `json:"updatedBlock"`
}

const agentCols = `a.agent_id, a.owner, a.wallet, a.uri, a.registered_block, a.updated_block,
	COALESCE((SELECT CAST(m.value AS TEXT) FROM erc8004_metadata m WHERE m.chain = a.chain AND m.agent_id = a.agent_id AND m.key = 'did'), '')`

func scanAgent(sc interface{ Scan(...any) error }) (*Agent, error) {
	var a Agent
	var id int64
	var owner, wallet string
	if err := sc.Scan(&id, &owner, &wallet, &a.URI, &a.RegisteredBlock, &a.UpdatedBlock, &a.DID); err != nil {
		return nil, err
	}
	a.ID, a.Owner = uint64(id), common.HexToAddress(owner)
	if wallet != "" {
		a.Wallet = common.HexToAddress(wallet)
	}
	return &a, nil
}

// agents lists the agents matching where, by id, at most limit (0: all).
func (ix *Indexer) agents(ctx context.Context, limit int, where string, args ...any) ([]Agent, error) {
	q := `SELECT ` + agentCols + ` FROM erc8004_agents a WHERE a.chain = ? ` + where + ` ORDER BY a.agent_id`
	if limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(limit)
	}
	rows, err := ix.cfg.DB.QueryContext(ctx, q, append([]any{ix.cfg.Chain}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("erc8004 agents: %w", err)
	}
	defer rows.Close()
	var out []Agent
	for rows.Next() {
		a, err := scanAgent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

// Agent is agent id's row, or ErrNoAgent.
func (ix *Indexer) Agent(ctx context.Context, id uint64) (*Agent, error) {
	if id > math.MaxInt64 {
		return nil, ErrNoAgent
	}
	as, err := ix.agents(ctx, 0, `AND a.agent_id = ?`, int64(id))
	if err != nil {
		return nil, err
	}
	if len(as) == 0 {
		return nil, ErrNoAgent
	}
	return &as[0], nil
}

// AgentAt is agent id as it stood at block: its owner (the last Transfer at or before it),
// wallet (the last agentWallet MetadataSet) and DID claim (the last "did" MetadataSet) and
// agentURI, replayed from the stored events; ErrNoAgent when it was not registered by then.
// The index's own rows are the latest state; this is for a replay at an anchored block.
func (ix *Indexer) AgentAt(ctx context.Context, id, block uint64) (*Agent, error) {
	if id > math.MaxInt64 || block > math.MaxInt64 {
		return nil, ErrNoAgent
	}
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT name, block, data FROM erc8004_events WHERE chain = ? AND agent_id = ? AND block <= ?
		AND name IN ('Transfer', 'Registered', 'URIUpdated', 'MetadataSet') ORDER BY block, log_index`, ix.cfg.Chain, int64(id), int64(block))
	if err != nil {
		return nil, fmt.Errorf("erc8004 agent at block: %w", err)
	}
	defer rows.Close()
	var a *Agent
	for rows.Next() {
		var name, data string
		var b uint64
		if err := rows.Scan(&name, &b, &data); err != nil {
			return nil, err
		}
		if a == nil {
			a = &Agent{ID: id, RegisteredBlock: b}
		}
		a.UpdatedBlock = b
		switch name {
		case "Transfer":
			var d transferData
			if err := json.Unmarshal([]byte(data), &d); err != nil {
				return nil, err
			}
			a.Owner = d.To
		case "Registered":
			var d registeredData
			if err := json.Unmarshal([]byte(data), &d); err != nil {
				return nil, err
			}
			a.URI = d.AgentURI
		case "URIUpdated":
			var d uriData
			if err := json.Unmarshal([]byte(data), &d); err != nil {
				return nil, err
			}
			a.URI = d.URI
		case "MetadataSet":
			var d metadataData
			if err := json.Unmarshal([]byte(data), &d); err != nil {
				return nil, err
			}
			switch d.Key {
			case AgentWalletKey:
				a.Wallet = common.Address{}
				if len(d.Value) == common.AddressLength {
					a.Wallet = common.BytesToAddress(d.Value)
				}
			case DIDKey:
				a.DID = string(d.Value)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if a == nil {
		return nil, ErrNoAgent
	}
	return a, nil
}

// AgentsOf lists the agents wallet owns or is the agent wallet of, by id, at most MaxClaims.
func (ix *Indexer) AgentsOf(ctx context.Context, wallet common.Address) ([]Agent, error) {
	return ix.agents(ctx, MaxClaims, `AND (a.owner = ? OR a.wallet = ?)`, addr(wallet), addr(wallet))
}

// MaxClaims bounds the agents AgentsClaiming lists: anyone can register agent ids claiming any
// DID, as many as they pay gas for.
const MaxClaims = 100

// AgentsClaiming lists the agents whose "did" metadata is did, by id, at most MaxClaims: what
// registrants claim, unchecked (VerifiedAgents checks the claim).
func (ix *Indexer) AgentsClaiming(ctx context.Context, did string) ([]Agent, error) {
	return ix.agents(ctx, MaxClaims, `AND EXISTS (SELECT 1 FROM erc8004_metadata m WHERE m.chain = a.chain AND m.agent_id = a.agent_id
		AND m.key = 'did' AND m.value = ?)`, []byte(did))
}

// VerifiedAgents lists the agents claiming did whose owner or agent wallet is a wallet bound
// to did on chain (IndexerConfig.Bindings): the agents that are the DID's. It returns
// ErrNoBindings when the index has no bindings to check against.
func (ix *Indexer) VerifiedAgents(ctx context.Context, did string) ([]Agent, error) {
	if ix.cfg.Bindings == nil {
		return nil, ErrNoBindings
	}
	wallets, err := ix.cfg.Bindings.WalletsOf(ctx, did)
	if err != nil || len(wallets) == 0 {
		return nil, err
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(wallets)), ", ")
	args := []any{[]byte(did)}
	for range 2 {
		for _, w := range wallets {
			args = append(args, addr(w))
		}
	}
	return ix.agents(ctx, 0, `AND EXISTS (SELECT 1 FROM erc8004_metadata m WHERE m.chain = a.chain AND m.agent_id = a.agent_id
		AND m.key = 'did' AND m.value = ?) AND (a.owner IN (`+in+`) OR a.wallet IN (`+in+`))`, args...)
}

// FeedbackFilter narrows Feedback.
type FeedbackFilter struct {
	// IncludeRevoked adds revoked feedback (left out otherwise, as the registry's reads do).
	IncludeRevoked bool
	// Client, when set, keeps one client's feedback; Tag1, when set, one tag1.
	Client *common.Address
	Tag1   string
	// UpTo, when not 0, reads the feedback as it stood at block UpTo: given at or before it,
	// and revoked only by a revocation at or before it (a replay at an anchored block).
	UpTo uint64
	// Limit bounds the rows (0: all).
	Limit int
}

// Feedback lists agent's feedback in chain order (block, then log index).
func (ix *Indexer) Feedback(ctx context.Context, agent uint64, f FeedbackFilter) ([]Feedback, error) {
	if agent > math.MaxInt64 {
		return nil, nil
	}
	upTo := int64(math.MaxInt64)
	if f.UpTo != 0 && f.UpTo < math.MaxInt64 {
		upTo = int64(f.UpTo)
	}
	// As of block upTo: a revocation after it has not happened yet.
	q := `SELECT agent_id, client, feedback_index, value, value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash,
		revoked AND revoked_block <= ?, CASE WHEN revoked AND revoked_block <= ? THEN revoked_block ELSE 0 END,
		block, block_time, log_index, tx_hash FROM erc8004_feedback WHERE chain = ? AND agent_id = ? AND block <= ?`
	args := []any{upTo, upTo, ix.cfg.Chain, int64(agent), upTo}
	if !f.IncludeRevoked {
		q += ` AND NOT (revoked AND revoked_block <= ?)`
		args = append(args, upTo)
	}
	if f.Client != nil {
		q += ` AND client = ?`
		args = append(args, addr(*f.Client))
	}
	if f.Tag1 != "" {
		q += ` AND tag1 = ?`
		args = append(args, f.Tag1)
	}
	q += ` ORDER BY block, log_index`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := ix.cfg.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("erc8004 feedback: %w", err)
	}
	defer rows.Close()
	var out []Feedback
	for rows.Next() {
		var fb Feedback
		var id, index, decimals int64
		var client, value, hash string
		if err := rows.Scan(&id, &client, &index, &value, &decimals, &fb.Tag1, &fb.Tag2, &fb.Endpoint, &fb.FeedbackURI, &hash,
			&fb.Revoked, &fb.RevokedBlock, &fb.Block, &fb.Time, &fb.LogIndex, &fb.TxHash); err != nil {
			return nil, err
		}
		fb.AgentID, fb.Client, fb.FeedbackIndex, fb.ValueDecimals = uint64(id), common.HexToAddress(client), uint64(index), uint8(decimals)
		fb.FeedbackHash = common.HexToHash(hash)
		var ok bool
		if fb.Value, ok = new(big.Int).SetString(value, 10); !ok {
			return nil, fmt.Errorf("erc8004 feedback: stored value %q is not a number", value)
		}
		out = append(out, fb)
	}
	return out, rows.Err()
}

// FeedbackFor is the unrevoked feedback to the agents that are did's (VerifiedAgents), in
// chain order: what reputation imports. Feedback an agent got before it became did's counts
// too (the agent is one identity on chain).
func (ix *Indexer) FeedbackFor(ctx context.Context, did string) ([]Feedback, error) {
	agents, err := ix.VerifiedAgents(ctx, did)
	if err != nil {
		return nil, err
	}
	var out []Feedback
	for _, a := range agents {
		fb, err := ix.Feedback(ctx, a.ID, FeedbackFilter{})
		if err != nil {
			return nil, err
		}
		out = append(out, fb...)
	}
	sortFeedback(out)
	return out, nil
}

// FeedbackOf is one feedback with what the identity registry says of its agent now: the DID
// its metadata claims, its owner and its agent wallet (zero when cleared).
type FeedbackOf struct {
	Feedback
	DID    string         `json:"did"`
	Owner  common.Address `json:"owner"`
	Wallet common.Address `json:"wallet"`
}

// AllFeedback is every unrevoked feedback of every agent whose metadata claims a DID, in chain
// order (block, then log index), each with the agent's DID claim, owner and wallet as they
// are now. The claim is unchecked: whoever imports it checks the owner or wallet against the
// DID's bindings (reputation's import rule does).
func (ix *Indexer) AllFeedback(ctx context.Context) ([]FeedbackOf, error) {
	return ix.feedbackOf(ctx, "")
}

// feedbackFromBatch bounds the clients one FeedbackFrom query names.
const feedbackFromBatch = 500

// FeedbackFrom is AllFeedback of the given clients alone (reputation reads the feedback of
// wallets that paid fees, never a fresh wallet's): the rows junk clients wrote are not read.
func (ix *Indexer) FeedbackFrom(ctx context.Context, clients []common.Address) ([]FeedbackOf, error) {
	var out []FeedbackOf
	for len(clients) > 0 {
		n := min(len(clients), feedbackFromBatch)
		args := make([]any, n)
		for i, c := range clients[:n] {
			args[i] = addr(c)
		}
		in := strings.Repeat("?,", n)
		part, err := ix.feedbackOf(ctx, " AND f.client IN ("+in[:len(in)-1]+")", args...)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
		clients = clients[n:]
	}
	slices.SortFunc(out, func(a, b FeedbackOf) int {
		if a.Block != b.Block {
			return cmp.Compare(a.Block, b.Block)
		}
		return cmp.Compare(a.LogIndex, b.LogIndex)
	})
	return out, nil
}

// feedbackOf runs AllFeedback's query with one more condition.
func (ix *Indexer) feedbackOf(ctx context.Context, and string, args ...any) ([]FeedbackOf, error) {
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT f.agent_id, f.client, f.feedback_index, f.value, f.value_decimals, f.tag1, f.tag2,
		f.endpoint, f.feedback_uri, f.feedback_hash, f.block, f.block_time, f.log_index, f.tx_hash, CAST(m.value AS TEXT), a.owner, a.wallet
		FROM erc8004_feedback f
		JOIN erc8004_agents a ON a.chain = f.chain AND a.agent_id = f.agent_id
		JOIN erc8004_metadata m ON m.chain = f.chain AND m.agent_id = f.agent_id AND m.key = 'did'
		WHERE f.chain = ? AND f.revoked = 0`+and+` ORDER BY f.block, f.log_index`, append([]any{ix.cfg.Chain}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("erc8004 feedback: %w", err)
	}
	defer rows.Close()
	var out []FeedbackOf
	for rows.Next() {
		var fo FeedbackOf
		var id, index, decimals int64
		var client, value, hash, owner, wallet string
		if err := rows.Scan(&id, &client, &index, &value, &decimals, &fo.Tag1, &fo.Tag2, &fo.Endpoint, &fo.FeedbackURI, &hash,
			&fo.Block, &fo.Time, &fo.LogIndex, &fo.TxHash, &fo.DID, &owner, &wallet); err != nil {
			return nil, err
		}
		fo.AgentID, fo.Client, fo.FeedbackIndex, fo.ValueDecimals = uint64(id), common.HexToAddress(client), uint64(index), uint8(decimals)
		fo.FeedbackHash, fo.Owner = common.HexToHash(hash), common.HexToAddress(owner)
		if wallet != "" {
			fo.Wallet = common.HexToAddress(wallet)
		}
		var ok bool
		if fo.Value, ok = new(big.Int).SetString(value, 10); !ok {
			return nil, fmt.Errorf("erc8004 feedback: stored value %q is not a number", value)
		}
		out = append(out, fo)
	}
	return out, rows.Err()
}

// sortFeedback orders feedback by block, then log index (chain order).
func sortFeedback(fb []Feedback) {
	for i := 1; i < len(fb); i++ {
		for j := i; j > 0 && (fb[j].Block < fb[j-1].Block || fb[j].Block == fb[j-1].Block && fb[j].LogIndex < fb[j-1].LogIndex); j-- {
			fb[j], fb[j-1] = fb[j-1], fb[j]
		}
	}
}

// Responses lists the responses to one feedback, in chain order.
func (ix *Indexer) Responses(ctx context.Context, agent uint64, client common.Address, index uint64) ([]Response, error) {
	if agent > math.MaxInt64 || index > math.MaxInt64 {
		return nil, nil
	}
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT responder, response_uri, response_hash, block, log_index FROM erc8004_responses
		WHERE chain = ? AND agent_id = ? AND client = ? AND feedback_index = ? ORDER BY block, log_index`,
		ix.cfg.Chain, int64(agent), addr(client), int64(index))
	if err != nil {
		return nil, fmt.Errorf("erc8004 responses: %w", err)
	}
	defer rows.Close()
	var out []Response
	for rows.Next() {
		r := Response{AgentID: agent, Client: client, FeedbackIndex: index}
		var responder, hash string
		if err := rows.Scan(&responder, &r.ResponseURI, &hash, &r.Block, &r.LogIndex); err != nil {
			return nil, err
		}
		r.Responder, r.ResponseHash = common.HexToAddress(responder), common.HexToHash(hash)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Validations lists agent's validation requests, in chain order, at most limit of them (0: all).
func (ix *Indexer) Validations(ctx context.Context, agent uint64, limit int) ([]Validation, error) {
	if agent > math.MaxInt64 {
		return nil, nil
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := ix.cfg.DB.QueryContext(ctx, `SELECT request_hash, validator, request_uri, responded, response, response_uri, response_hash,
		tag, block, updated_block FROM erc8004_validations WHERE chain = ? AND agent_id = ? ORDER BY block, request_hash LIMIT ?`,
		ix.cfg.Chain, int64(agent), limit)
	if err != nil {
		return nil, fmt.Errorf("erc8004 validations: %w", err)
	}
	defer rows.Close()
	var out []Validation
	for rows.Next() {
		v := Validation{AgentID: agent}
		var req, validator, hash string
		var response int64
		if err := rows.Scan(&req, &validator, &v.RequestURI, &v.Responded, &response, &v.ResponseURI, &hash, &v.Tag, &v.Block, &v.UpdatedBlock); err != nil {
			return nil, err
		}
		v.RequestHash, v.Validator, v.Response, v.ResponseHash = common.HexToHash(req), common.HexToAddress(validator), uint8(response), common.HexToHash(hash)
		out = append(out, v)
	}
	return out, rows.Err()
}
