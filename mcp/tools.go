package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation/verify"
)

// The audit kind the tools write (reputation.AuditKind: the wire value, which this package
// does not link the node to read; the node refuses any other, so TestToolsAgainstANode's
// filed audit holds the two together).
const (
	auditKind = "surety.audit/1"
)

// groupStates are the conversation states a group post may name.
var groupStates = []string{identity.StateDiscussion, identity.StateTaskAssignment, identity.StateExecution, identity.StateConclusion}

// DIDInput names an agent.
type DIDInput struct {
	DID string `json:"did" jsonschema:"the agent's DID, e.g. did:key:z6Mk..."`
}

// NodeInfo is what node_info answers: what an envelope for this node names.
type NodeInfo struct {
	NodeDID       string `json:"nodeDid" jsonschema:"the node's DID: the aud of an envelope that writes"`
	ChainID       uint64 `json:"chainId" jsonschema:"the chain_id of an envelope that writes"`
	Escrow        string `json:"escrow" jsonschema:"the BountyEscrow address an envelope's bounty names"`
	StakeRegistry string `json:"stakeRegistry"`
	Version       string `json:"version"`
	Signer        string `json:"signer,omitempty" jsonschema:"the DID this server signs writes with; empty: every write takes your own signed envelope"`
	Wallet        string `json:"wallet,omitempty" jsonschema:"the wallet the signer acts from"`
}

// Resolution is a DID resolution result (W3C DID Resolution).
type Resolution struct {
	Document           map[string]any `json:"didDocument"`
	ResolutionMetadata map[string]any `json:"didResolutionMetadata,omitempty"`
	DocumentMetadata   map[string]any `json:"didDocumentMetadata,omitempty"`
}

// SearchInput is a discovery query.
type SearchInput struct {
	Query      string `json:"query,omitempty" jsonschema:"words or a sentence, matched against names, descriptions and capabilities and by meaning"`
	Capability string `json:"capability,omitempty" jsonschema:"only agents with this capability tag"`
	Limit      int    `json:"limit,omitempty" jsonschema:"at most this many agents (1 to 50, default 10)"`
	Mode       string `json:"mode,omitempty" jsonschema:"hybrid (default: words and meaning) or keyword (words only)"`
}

// Agents are search results, best first (relevance × stake × reputation, docs/SEARCH.md).
type Agents struct {
	Agents      []*wire.Agent `json:"agents"`
	Discovering bool          `json:"discovering,omitempty" jsonschema:"the node is looking the capability up in the network: search again in a few seconds for the providers it finds"`
}

// ReputationProof is an agent's reputation with the log's signed head and, for the audits
// that fed it, their inclusion in that head, each checked here.
type ReputationProof struct {
	Reputation *wire.Reputation `json:"reputation"`
	Head       *wire.Head       `json:"head,omitempty"`
	// HeadVerified: the head's signature is the node's DID's.
	HeadVerified bool         `json:"headVerified"`
	Proofs       []AuditProof `json:"proofs"`
}

// AuditProof is one feeding audit's place in the log.
type AuditProof struct {
	Leaf string `json:"leaf"`
	// Included: the inclusion proof leads from the leaf to the signed head's root.
	Included bool     `json:"included"`
	Index    uint64   `json:"index,omitempty"`
	Path     []string `json:"path,omitempty"`
	Problem  string   `json:"problem,omitempty" jsonschema:"why there is no checked proof (e.g. the audit's epoch is not closed yet)"`
}

// BountyInput names a bounty.
type BountyInput struct {
	ID uint64 `json:"id" jsonschema:"the bounty id"`
}

// BountyView is a bounty and its task text, checked against the specHash on chain.
type BountyView struct {
	Bounty *wire.Bounty `json:"bounty"`
	Task   string       `json:"task,omitempty"`
	// TaskVerified: keccak256 of task is the bounty's specHash on chain.
	TaskVerified bool `json:"taskVerified"`
}

// JobsInput filters ERC-8183 jobs.
type JobsInput struct {
	Status    string `json:"status,omitempty" jsonschema:"open, funded, submitted, completed, rejected or expired"`
	Client    string `json:"client,omitempty" jsonschema:"only jobs this wallet created"`
	Provider  string `json:"provider,omitempty" jsonschema:"only jobs with this provider, or that this worker entered through SuretyHook"`
	Evaluator string `json:"evaluator,omitempty" jsonschema:"only jobs with this evaluator"`
	After     uint64 `json:"after,omitempty" jsonschema:"only jobs with a larger id (the last id of the previous page)"`
	Limit     int    `json:"limit,omitempty" jsonschema:"at most this many (default 20)"`
}

// Jobs are ERC-8183 jobs as the node indexes them.
type Jobs struct {
	Jobs []*wire.Job `json:"jobs"`
}

// JobInput names an ERC-8183 job.
type JobInput struct {
	ID uint64 `json:"id" jsonschema:"the job id in JobEscrow"`
}

// JobView is an ERC-8183 job with its Surety side and history.
type JobView struct {
	Job *wire.Job `json:"job"`
}

// Signed are the arguments every write shares.
type Signed struct {
	Envelope       string `json:"envelope,omitempty" jsonschema:"your own signed envelope (compact JWS) for this write: its aud the node's DID and chain_id its chain (node_info), body as the API route takes it; required when this server holds no key, and then the other arguments but the ids are ignored"`
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"sent as Idempotency-Key: the same key never acts twice; send a write again under the same key (and envelope) after a timeout to get its answer instead of acting twice"`
}

// PostBountyInput posts a bounty.
type PostBountyInput struct {
	Signed
	Amount          string `json:"amount,omitempty" jsonschema:"the reward in wei (base units), a decimal integer"`
	Arbiter         string `json:"arbiter,omitempty" jsonschema:"the address that decides disputes (not you, not the worker)"`
	Task            string `json:"task,omitempty" jsonschema:"the task text; the contract records its keccak256"`
	DeadlineSeconds int64  `json:"deadlineSeconds,omitempty" jsonschema:"seconds from now by which a result must be submitted (default one day)"`
	ReviewSeconds   int64  `json:"reviewSeconds,omitempty" jsonschema:"seconds the poster has to accept or dispute a submission (default one hour)"`
	MinStake        string `json:"minStake,omitempty" jsonschema:"stake (wei) a claim locks from the worker's agent; default none"`
	Token           string `json:"token,omitempty" jsonschema:"an ERC-20 to pay in; default ETH"`
	Salt            string `json:"salt,omitempty" jsonschema:"makes the bounty id: a second post with the same salt is refused"`
}

// ClaimInput claims a bounty.
type ClaimInput struct {
	Signed
	ID    uint64 `json:"id" jsonschema:"the bounty id"`
	Agent string `json:"agent,omitempty" jsonschema:"the claiming agent's DID (default: the signer's)"`
}

// SubmitInput submits a result.
type SubmitInput struct {
	Signed
	ID     uint64 `json:"id" jsonschema:"the bounty id"`
	Result string `json:"result,omitempty" jsonschema:"the result; its keccak256 is recorded on chain"`
}

// AcceptInput accepts a submission.
type AcceptInput struct {
	Signed
	ID uint64 `json:"id" jsonschema:"the bounty id"`
}

// DisputeInput disputes a submission.
type DisputeInput struct {
	Signed
	ID     uint64 `json:"id" jsonschema:"the bounty id"`
	Reason string `json:"reason,omitempty" jsonschema:"why; its keccak256 is recorded on chain"`
}

// GroupPostInput posts into a group thread.
type GroupPostInput struct {
	Signed
	Group string `json:"group" jsonschema:"the group id"`
	Text  string `json:"text,omitempty" jsonschema:"the message"`
	State string `json:"state,omitempty" jsonschema:"discussion, task_assignment, execution or conclusion"`
}

// AuditInput files an audit.
type AuditInput struct {
	Signed
	Subject      string  `json:"subject,omitempty" jsonschema:"the audited agent's DID"`
	BountyID     uint64  `json:"bountyId,omitempty" jsonschema:"the audited bounty (or envelopeId)"`
	EnvelopeID   string  `json:"envelopeId,omitempty" jsonschema:"the audited envelope's id (or bountyId)"`
	Score        float64 `json:"score,omitempty" jsonschema:"from 0 (bad) to 1 (excellent)"`
	EvidenceHash string  `json:"evidenceHash,omitempty" jsonschema:"0x and 32 bytes of hex: a hash of what you examined"`
	EvidenceURI  string  `json:"evidenceUri,omitempty" jsonschema:"where the evidence can be read"`
}

func (s *server) addTools(srv *sdk.Server) {
	addTool(srv, "node_info", "Node info", "The node's DID, chain and contracts: what an envelope for it names, and who this server signs as.", true, s.nodeInfo)
	addTool(srv, "resolve_did", "Resolve a DID", "Resolve a did:key or did:pkh to its DID document (W3C DID Resolution), with whether it was deactivated on chain.", true, s.resolveDID)
	addTool(srv, "search_agents", "Search agents", "Find registered agents by text and capability, ranked by relevance × stake × reputation: words OR-ed, a sentence works, \"phrases\" and prefix* too.", true, s.searchAgents)
	addTool(srv, "get_agent", "Show an agent", "An agent's signed card: name, capabilities, endpoints, wallet, stake.", true, s.getAgent)
	addTool(srv, "get_reputation", "Show a reputation with its proof", "An agent's score and the audits that fed it, with the audit log's signed head and each audit's inclusion proof, checked here.", true, s.getReputation)
	addTool(srv, "get_bounty", "Show a bounty", "A bounty's terms, status and history, with its task text checked against the hash on chain.", true, s.getBounty)
	addTool(srv, "list_jobs", "List ERC-8183 jobs", "ERC-8183 jobs in the node's JobEscrow, filtered by status, client, provider (or a worker who entered through SuretyHook) and evaluator. They are sent from your own wallet (surety job, or any ERC-8183 tool).", true, s.listJobs)
	addTool(srv, "get_job", "Show an ERC-8183 job", "An ERC-8183 job: its parties, budget, status and events, and for a Surety job its plan, competing entries, dispute, settlement and milestone parts.", true, s.getJob)
	addTool(srv, "post_bounty", "Post a bounty", "Post a bounty: its reward is locked in escrow until it is settled.", false, s.postBounty)
	addTool(srv, "claim_bounty", "Claim a bounty", "Take an open bounty as its worker.", false, s.claimBounty)
	addTool(srv, "submit_bounty", "Submit a result", "Submit the result of a bounty you claimed.", false, s.submitBounty)
	addTool(srv, "accept_bounty", "Accept a submission", "Accept the submission of your bounty: the worker is paid.", false, s.acceptBounty)
	addTool(srv, "dispute_bounty", "Dispute a submission", "Dispute the submission of your bounty: the arbiter decides.", false, s.disputeBounty)
	addTool(srv, "post_to_group", "Post to a group", "Post a message into a group thread you are a member of.", false, s.postToGroup)
	addTool(srv, "file_audit", "File an audit", "Sign an audit of an agent's work (a bounty or an envelope) and file it with the node.", false, s.fileAudit)
}

func (s *server) nodeInfo(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, NodeInfo, error) {
	in, err := info(ctx, s.node(req.Extra))
	if err != nil {
		return nil, NodeInfo{}, err
	}
	out := NodeInfo{NodeDID: in.NodeDID, ChainID: in.Chain.ID, Escrow: in.Contracts["BountyEscrow"], StakeRegistry: in.Contracts["StakeRegistry"], Version: in.Version}
	if s.cfg.Signer != nil {
		out.Signer, out.Wallet = s.cfg.Signer.Key.DID.String(), s.cfg.Signer.Wallet.Hex()
	}
	return nil, out, nil
}

// checkDID refuses what is not a DID before it reaches the node.
func checkDID(name, did string) error {
	if _, err := identity.ParseDID(did); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return nil
}

func (s *server) resolveDID(ctx context.Context, req *sdk.CallToolRequest, in DIDInput) (*sdk.CallToolResult, Resolution, error) {
	if err := checkDID("did", in.DID); err != nil {
		return nil, Resolution{}, err
	}
	raw, err := s.node(req.Extra).ResolveDID(ctx, in.DID, "")
	if err != nil {
		return nil, Resolution{}, err
	}
	var out Resolution
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, Resolution{}, fmt.Errorf("the node's resolution result: %w", err)
	}
	return nil, out, nil
}

func (s *server) searchAgents(ctx context.Context, req *sdk.CallToolRequest, in SearchInput) (*sdk.CallToolResult, Agents, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, maxSearch)
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if in.Query != "" {
		q.Set("q", in.Query)
	}
	if in.Capability != "" {
		q.Set("capability", in.Capability)
	}
	if in.Mode != "" {
		q.Set("mode", in.Mode)
	}
	list, err := s.node(req.Extra).SearchAgentList(ctx, q)
	if err != nil {
		return nil, Agents{}, err
	}
	if list.Agents == nil {
		list.Agents = []*wire.Agent{}
	}
	return nil, Agents{Agents: list.Agents, Discovering: list.Discovering}, nil
}

func (s *server) getAgent(ctx context.Context, req *sdk.CallToolRequest, in DIDInput) (*sdk.CallToolResult, *wire.Agent, error) {
	if err := checkDID("did", in.DID); err != nil {
		return nil, nil, err
	}
	a, err := s.node(req.Extra).Agent(ctx, in.DID)
	return nil, a, err
}

func (s *server) getReputation(ctx context.Context, req *sdk.CallToolRequest, in DIDInput) (*sdk.CallToolResult, ReputationProof, error) {
	if err := checkDID("did", in.DID); err != nil {
		return nil, ReputationProof{}, err
	}
	out, err := reputationProof(ctx, s.node(req.Extra), in.DID)
	return nil, out, err
}

// reputationProof reads did's reputation and checks what it can of it against the log: the
// head's signature by the node's DID, and each feeding audit's inclusion in that head.
func reputationProof(ctx context.Context, c *client.Client, did string) (ReputationProof, error) {
	r, err := c.Reputation(ctx, did)
	if err != nil {
		return ReputationProof{}, err
	}
	out := ReputationProof{Reputation: r, Proofs: []AuditProof{}}
	nodeInfo, err := info(ctx, c)
	if err != nil {
		return out, err
	}
	head, err := c.LogHead(ctx)
	var ce *client.Error
	switch {
	case errors.As(err, &ce) && ce.Status == 404:
		// No log on this node (or nothing logged yet): no head to prove against.
		for _, a := range r.Feeding {
			out.Proofs = append(out.Proofs, AuditProof{Leaf: a.Leaf.String(), Problem: "the node serves no audit log head"})
		}
		return out, nil
	case err != nil:
		return out, err
	}
	out.Head = &head
	signed, err := verify.OpenHead(head.Signed, nodeInfo.NodeDID)
	out.HeadVerified = err == nil && signed.Size == head.Size && signed.Root == head.Root
	for i, a := range r.Feeding {
		p := AuditProof{Leaf: a.Leaf.String()}
		switch {
		case i >= maxProofs:
			p.Problem = fmt.Sprintf("only the first %d audits are proven here; ask the node's /v1/log/proof/inclusion for the rest", maxProofs)
		case !out.HeadVerified:
			p.Problem = "the log head's signature is not the node's"
		case head.Size == 0:
			p.Problem = "the log is empty: the audit's epoch is not closed yet"
		default:
			proof, err := c.InclusionProof(ctx, a.Leaf, head.Size)
			if err != nil {
				p.Problem = err.Error()
				break
			}
			vp := verify.InclusionProof{Leaf: proof.Leaf, Index: proof.Index, Size: proof.Size, Path: proof.Path}
			if err := verify.Inclusion(a.Leaf, vp, head.Size, signed.Root); err != nil {
				p.Problem = err.Error()
				break
			}
			p.Included, p.Index = true, proof.Index
			for _, h := range proof.Path {
				p.Path = append(p.Path, h.String())
			}
		}
		out.Proofs = append(out.Proofs, p)
	}
	return out, nil
}

func (s *server) listJobs(ctx context.Context, req *sdk.CallToolRequest, in JobsInput) (*sdk.CallToolResult, Jobs, error) {
	q := url.Values{}
	for k, v := range map[string]string{"status": in.Status, "client": in.Client, "provider": in.Provider, "evaluator": in.Evaluator} {
		if v != "" {
			q.Set(k, v)
		}
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	q.Set("limit", strconv.Itoa(min(limit, maxSearch)))
	if in.After > 0 {
		q.Set("after", strconv.FormatUint(in.After, 10))
	}
	list, err := s.node(req.Extra).Jobs(ctx, q)
	if err != nil {
		return nil, Jobs{}, err
	}
	if list == nil {
		list = []*wire.Job{}
	}
	return nil, Jobs{Jobs: list}, nil
}

func (s *server) getJob(ctx context.Context, req *sdk.CallToolRequest, in JobInput) (*sdk.CallToolResult, JobView, error) {
	if in.ID == 0 {
		return nil, JobView{}, errors.New("id: give a job id (a positive integer)")
	}
	j, err := s.node(req.Extra).Job(ctx, in.ID)
	if err != nil {
		return nil, JobView{}, err
	}
	return nil, JobView{Job: j}, nil
}

func (s *server) getBounty(ctx context.Context, req *sdk.CallToolRequest, in BountyInput) (*sdk.CallToolResult, BountyView, error) {
	out, err := bountyView(ctx, s.node(req.Extra), in.ID)
	return nil, out, err
}

// bountyView reads bounty id with its task text, which it shows only when its keccak256 is
// the specHash on chain: a node cannot show another task than the one posted.
func bountyView(ctx context.Context, c *client.Client, id uint64) (BountyView, error) {
	if id == 0 {
		return BountyView{}, errors.New("id: give a bounty id (a positive integer)")
	}
	b, err := c.Bounty(ctx, strconv.FormatUint(id, 10))
	if err != nil {
		return BountyView{}, err
	}
	out := BountyView{Bounty: b}
	if b.Spec != "" && crypto.Keccak256Hash([]byte(b.Spec)) == b.SpecHash {
		out.Task, out.TaskVerified = b.Spec, true
	}
	return out, nil
}

// signedWrite sends a write: the caller's own envelope when given, else one signed here for
// the node (naming bounty when not zero) over the body built for the signer's wallet.
func signedWrite[T any](ctx context.Context, s *server, extra *sdk.RequestExtra, in Signed, bounty uint64, body func(wallet common.Address) (any, error),
	send func(ctx context.Context, c *client.Client, env []byte, key string) (T, error)) (T, error) {
	var zero T
	c := s.node(extra)
	env, key := []byte(strings.TrimSpace(in.Envelope)), in.IdempotencyKey
	switch {
	case len(env) > identity.MaxEnvelopeSize:
		return zero, fmt.Errorf("envelope: larger than %d bytes", identity.MaxEnvelopeSize)
	case len(env) > 0:
	case s.cfg.Signer == nil:
		return zero, ErrNoKey
	default:
		b, err := body(s.cfg.Signer.Wallet)
		if err != nil {
			return zero, err
		}
		nodeInfo, err := info(ctx, c)
		if err != nil {
			return zero, err
		}
		aud := identity.Audience{Node: nodeInfo.NodeDID, ChainID: nodeInfo.Chain.ID, Escrow: nodeInfo.Contracts["BountyEscrow"]}
		jws, err := identity.SignRequest(s.cfg.Signer.Key, aud, bounty, b, time.Now(), envelopeLife)
		if err != nil {
			return zero, err
		}
		env = []byte(jws)
		if key == "" {
			key = identity.NewNonce()
		}
	}
	if len(key) > 200 {
		return zero, errors.New("idempotencyKey: at most 200 characters")
	}
	return send(ctx, c, env, key)
}

// needWallet refuses a bounty write of a signer with no wallet.
func needWallet(wallet common.Address) error {
	if wallet == (common.Address{}) {
		return errors.New("this server has no wallet to act from: start surety mcp with --wallet ADDR (a wallet the node holds, bound to your DID), or pass your own envelope")
	}
	return nil
}

// parseWei reads a decimal amount of base units; zero is allowed only when zeroOK.
func parseWei(name, s string, zeroOK bool) (*big.Int, error) {
	if s == "" && zeroOK {
		return new(big.Int), nil
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 || len(s) > 78 || (!zeroOK && v.Sign() == 0) {
		return nil, fmt.Errorf("%s %q: want a positive decimal integer of wei (1 ETH is 1000000000000000000)", name, s)
	}
	return v, nil
}

// address reads an optional address.
func address(name, s string) (common.Address, error) {
	if s == "" {
		return common.Address{}, nil
	}
	if !common.IsHexAddress(s) {
		return common.Address{}, fmt.Errorf("%s %q: not an address (0x and 40 hex digits)", name, s)
	}
	return common.HexToAddress(s), nil
}

// text refuses a text argument that is not UTF-8 or longer than max.
func text(name, s string, max int) error {
	if len(s) > max || !utf8.ValidString(s) {
		return fmt.Errorf("%s: want UTF-8 text of at most %d bytes", name, max)
	}
	return nil
}

func (s *server) postBounty(ctx context.Context, req *sdk.CallToolRequest, in PostBountyInput) (*sdk.CallToolResult, *wire.BountyResult, error) {
	body := func(wallet common.Address) (any, error) {
		if err := needWallet(wallet); err != nil {
			return nil, err
		}
		amount, err := parseWei("amount", in.Amount, false)
		if err != nil {
			return nil, err
		}
		minStake, err := parseWei("minStake", in.MinStake, true)
		if err != nil {
			return nil, err
		}
		arbiter, err := address("arbiter", in.Arbiter)
		if err != nil || arbiter == (common.Address{}) {
			return nil, fmt.Errorf("arbiter %q: give the address that decides disputes", in.Arbiter)
		}
		token, err := address("token", in.Token)
		if err != nil {
			return nil, err
		}
		if err := text("task", in.Task, maxTask); err != nil {
			return nil, err
		}
		deadline, review := in.DeadlineSeconds, in.ReviewSeconds
		if deadline <= 0 {
			deadline = 24 * 3600
		}
		if review <= 0 {
			review = 3600
		}
		if deadline > 366*24*3600 || review > 30*24*3600 {
			return nil, errors.New("deadlineSeconds at most a year, reviewSeconds at most 30 days")
		}
		b := wire.PostBody{Wallet: wallet, Token: token, Amount: amount.String(), Arbiter: arbiter,
			Deadline: uint64(time.Now().Unix() + deadline), ReviewWindow: uint32(review), MinStake: minStake.String(),
			SpecHash: crypto.Keccak256Hash([]byte(in.Task)), Spec: in.Task}
		if in.Salt != "" {
			b.Salt = crypto.Keccak256Hash([]byte(in.Salt))
		}
		return b, nil
	}
	res, err := signedWrite(ctx, s, req.Extra, in.Signed, 0, body, func(ctx context.Context, c *client.Client, env []byte, key string) (*wire.BountyResult, error) {
		return s.bountyWrite(ctx, c, "/v1/bounties", env, key)
	})
	return nil, res, err
}

// bountyWrite sends a bounty write. On stdio it asks the node to carry a slow one on as an
// operation (Prefer: respond-async) and follows it to its answer, as the CLI does, so that a
// slow chain's transaction is waited for, not sent again; over /mcp the request's own time
// bounds it (the caller resends it under the same idempotencyKey to pick up its answer).
func (s *server) bountyWrite(ctx context.Context, c *client.Client, path string, env []byte, key string) (*wire.BountyResult, error) {
	var out wire.BountyResult
	var err error
	if s.cfg.nodeFor == nil {
		err = c.WriteAsync(ctx, path, env, key, asyncWait, nil, &out)
	} else {
		err = c.Write(ctx, path, env, key, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// act sends one bounty action.
func (s *server) act(ctx context.Context, extra *sdk.RequestExtra, in Signed, id uint64, action wire.Action, body func(*wire.ActionBody) error) (*wire.BountyResult, error) {
	if id == 0 {
		return nil, errors.New("id: give a bounty id (a positive integer)")
	}
	build := func(wallet common.Address) (any, error) {
		if err := needWallet(wallet); err != nil {
			return nil, err
		}
		b := wire.ActionBody{Wallet: wallet, AgentID: identity.AgentID(s.cfg.Signer.Key.DID.String())}
		if err := body(&b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return signedWrite(ctx, s, extra, in, id, build, func(ctx context.Context, c *client.Client, env []byte, key string) (*wire.BountyResult, error) {
		return s.bountyWrite(ctx, c, fmt.Sprintf("/v1/bounties/%d/%s", id, action), env, key)
	})
}

func (s *server) claimBounty(ctx context.Context, req *sdk.CallToolRequest, in ClaimInput) (*sdk.CallToolResult, *wire.BountyResult, error) {
	res, err := s.act(ctx, req.Extra, in.Signed, in.ID, wire.ActionClaim, func(b *wire.ActionBody) error {
		if in.Agent != "" {
			if err := checkDID("agent", in.Agent); err != nil {
				return err
			}
			b.AgentID = identity.AgentID(in.Agent)
		}
		return nil
	})
	return nil, res, err
}

func (s *server) submitBounty(ctx context.Context, req *sdk.CallToolRequest, in SubmitInput) (*sdk.CallToolResult, *wire.BountyResult, error) {
	res, err := s.act(ctx, req.Extra, in.Signed, in.ID, wire.ActionSubmit, func(b *wire.ActionBody) error {
		if err := text("result", in.Result, maxTask); err != nil {
			return err
		}
		b.ResultHash = crypto.Keccak256Hash([]byte(in.Result))
		return nil
	})
	return nil, res, err
}

func (s *server) acceptBounty(ctx context.Context, req *sdk.CallToolRequest, in AcceptInput) (*sdk.CallToolResult, *wire.BountyResult, error) {
	res, err := s.act(ctx, req.Extra, in.Signed, in.ID, wire.ActionAccept, func(*wire.ActionBody) error { return nil })
	return nil, res, err
}

func (s *server) disputeBounty(ctx context.Context, req *sdk.CallToolRequest, in DisputeInput) (*sdk.CallToolResult, *wire.BountyResult, error) {
	res, err := s.act(ctx, req.Extra, in.Signed, in.ID, wire.ActionDispute, func(b *wire.ActionBody) error {
		if err := text("reason", in.Reason, maxText); err != nil {
			return err
		}
		b.ReasonHash = crypto.Keccak256Hash([]byte(in.Reason))
		return nil
	})
	return nil, res, err
}

func (s *server) postToGroup(ctx context.Context, req *sdk.CallToolRequest, in GroupPostInput) (*sdk.CallToolResult, *wire.Posted, error) {
	if in.Group == "" || len(in.Group) > 64 || strings.ContainsAny(in.Group, "/?#") {
		return nil, nil, fmt.Errorf("group %q: give the group's id", in.Group)
	}
	env := []byte(strings.TrimSpace(in.Envelope))
	switch {
	case len(env) > identity.MaxEnvelopeSize:
		return nil, nil, fmt.Errorf("envelope: larger than %d bytes", identity.MaxEnvelopeSize)
	case len(env) > 0:
	case s.cfg.Signer == nil:
		return nil, nil, ErrNoKey
	default:
		if err := text("text", in.Text, maxText); err != nil {
			return nil, nil, err
		}
		if in.State != "" && !slices.Contains(groupStates, in.State) {
			return nil, nil, fmt.Errorf("state %q: want one of %s", in.State, strings.Join(groupStates, ", "))
		}
		fields := map[string]any{"body": map[string]any{"text": in.Text}}
		if in.State != "" {
			fields["state"] = in.State
		}
		var err error
		if env, err = identity.SignGroupEnvelope(s.cfg.Signer.Key, in.Group, fields, time.Now(), envelopeLife); err != nil {
			return nil, nil, err
		}
	}
	p, err := s.node(req.Extra).PostToGroup(ctx, in.Group, env)
	return nil, p, err
}

func (s *server) fileAudit(ctx context.Context, req *sdk.CallToolRequest, in AuditInput) (*sdk.CallToolResult, *wire.Submitted, error) {
	body := func(common.Address) (any, error) {
		if err := checkDID("subject", in.Subject); err != nil {
			return nil, err
		}
		if (in.BountyID == 0) == (in.EnvelopeID == "") {
			return nil, errors.New("name what you audited: bountyId or envelopeId")
		}
		if in.Score < 0 || in.Score > 1 {
			return nil, fmt.Errorf("score %g: want a number from 0 to 1", in.Score)
		}
		if h, err := common.ParseHexOrString(in.EvidenceHash); err != nil || len(h) != 32 || !strings.HasPrefix(in.EvidenceHash, "0x") {
			return nil, errors.New("evidenceHash: want 0x and 32 bytes of hex")
		}
		evidence := map[string]any{"hash": in.EvidenceHash}
		if in.EvidenceURI != "" {
			evidence["uri"] = in.EvidenceURI
		}
		b := map[string]any{"kind": auditKind, "subject": in.Subject, "score": in.Score, "evidence": evidence}
		if in.EnvelopeID != "" {
			b["envelope"] = in.EnvelopeID
		}
		return b, nil
	}
	res, err := signedWrite(ctx, s, req.Extra, in.Signed, in.BountyID, body, func(ctx context.Context, c *client.Client, env []byte, _ string) (*wire.Submitted, error) {
		return c.SubmitAudit(ctx, env)
	})
	return nil, res, err
}
