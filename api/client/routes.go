package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// Info is GET /v1/info: the node's version, chain, contracts and DID.
func (c *Client) Info(ctx context.Context) (wire.Info, error) {
	var out wire.Info
	return out, c.get(ctx, "/v1/info", &out)
}

// Health is GET /healthz.
func (c *Client) Health(ctx context.Context) (wire.Health, error) {
	var out wire.Health
	return out, c.get(ctx, "/healthz", &out)
}

// Peers is GET /v1/peers: the libp2p peers the node is connected to, each gossip topic's
// mesh, and the DHT puts under way.
func (c *Client) Peers(ctx context.Context) (*wire.PeerList, error) {
	var out wire.PeerList
	return &out, c.get(ctx, "/v1/peers", &out)
}

// Challenge is what GET /v1/challenge answers: a challenge to sign, for the node's DID.
type Challenge = wire.Challenge

// Challenge is GET /v1/challenge.
func (c *Client) Challenge(ctx context.Context) (Challenge, error) {
	var out Challenge
	return out, c.get(ctx, "/v1/challenge", &out)
}

// RegisterDID is POST /v1/dids/register with a signed proof of possession.
func (c *Client) RegisterDID(ctx context.Context, proof string) (*wire.Issued, error) {
	var out wire.Issued
	if err := c.postJSON(ctx, "/v1/dids/register", wire.RegisterRequest{Proof: proof}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ResolveDID is GET /1.0/identifiers/{did}: the resolution result as the node wrote it. A
// deactivated DID is an *Error with status 410.
func (c *Client) ResolveDID(ctx context.Context, did, format string) (json.RawMessage, error) {
	var out json.RawMessage
	return out, c.get(ctx, "/1.0/identifiers/"+esc(did)+"?format="+url.QueryEscape(format), &out)
}

// VerifyEnvelope is POST /v1/envelopes/verify.
func (c *Client) VerifyEnvelope(ctx context.Context, env []byte) (wire.VerifyResponse, error) {
	var out wire.VerifyResponse
	return out, c.postJOSE(ctx, "/v1/envelopes/verify", env, &out)
}

// RegisterCard is POST /v1/agents with a signed Agent Card (compact JWS).
func (c *Client) RegisterCard(ctx context.Context, jws string) (*wire.Agent, error) {
	var out wire.Agent
	if err := c.postJOSE(ctx, "/v1/agents", []byte(jws), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RegisterA2ACard is POST /v1/agents with a signed A2A Agent Card (JSON, signed by the DID
// its Surety trust extension names; registry.SignA2A makes one).
func (c *Client) RegisterA2ACard(ctx context.Context, card []byte) (*wire.Agent, error) {
	var out wire.Agent
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/agents", contentType: "application/a2a-card+json", body: card}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// NodeA2ACard is GET /.well-known/agent-card.json: the node's own A2A card, signed by the
// node (its signature is over a2a.Canonical of the card).
func (c *Client) NodeA2ACard(ctx context.Context) (*wire.A2ACard, error) {
	var out wire.A2ACard
	if err := c.get(ctx, "/.well-known/agent-card.json", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AgentA2ACard is GET /v1/agents/{did}/agent-card.json: the agent's card as A2A with the
// node's live trust params, signed by the node.
func (c *Client) AgentA2ACard(ctx context.Context, did string) (*wire.A2ACard, error) {
	var out wire.A2ACard
	if err := c.get(ctx, "/v1/agents/"+esc(did)+"/agent-card.json", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Agent is GET /v1/agents/{did}.
func (c *Client) Agent(ctx context.Context, did string) (*wire.Agent, error) {
	var out wire.Agent
	if err := c.get(ctx, "/v1/agents/"+esc(did), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SearchAgents is GET /v1/agents?q=&capability=&limit=: the agents.
func (c *Client) SearchAgents(ctx context.Context, q url.Values) ([]*wire.Agent, error) {
	out, err := c.SearchAgentList(ctx, q)
	if err != nil {
		return nil, err
	}
	return out.Agents, nil
}

// SearchAgentList is GET /v1/agents?q=&capability=&limit=, the whole answer: the agents and
// whether the node is looking the capability up in the network (SearchAgentsStream follows
// that lookup).
func (c *Client) SearchAgentList(ctx context.Context, q url.Values) (*wire.AgentList, error) {
	var out wire.AgentList
	if err := c.get(ctx, "/v1/agents?"+q.Encode(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CheckAgentStatus is POST /v1/agents/{did}/status: the node reads the DID's key status
// from the chain again.
func (c *Client) CheckAgentStatus(ctx context.Context, did string) (*wire.StatusResult, error) {
	var out wire.StatusResult
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/agents/" + esc(did) + "/status"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SubmitAudit is POST /v1/audits with a signed audit envelope.
func (c *Client) SubmitAudit(ctx context.Context, env []byte) (*wire.Submitted, error) {
	var out wire.Submitted
	if err := c.postJOSE(ctx, "/v1/audits", env, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Reputation is GET /v1/reputation/{did}.
func (c *Client) Reputation(ctx context.Context, did string) (*wire.Reputation, error) {
	var out wire.Reputation
	if err := c.get(ctx, "/v1/reputation/"+esc(did), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TopReputation is GET /v1/reputation?top=n.
func (c *Client) TopReputation(ctx context.Context, n string) ([]*wire.Reputation, error) {
	var out wire.ReputationList
	return out.Agents, c.get(ctx, "/v1/reputation?top="+url.QueryEscape(n), &out)
}

// SetGroupMembers is POST /v1/groups/{id}/members with the creator's membership envelope.
func (c *Client) SetGroupMembers(ctx context.Context, group string, env []byte) (*wire.Group, error) {
	var out wire.Group
	if err := c.postJOSE(ctx, "/v1/groups/"+esc(group)+"/members", env, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PostToGroup is POST /v1/groups/{id}/envelopes with a member's envelope.
func (c *Client) PostToGroup(ctx context.Context, group string, env []byte) (*wire.Posted, error) {
	var out wire.Posted
	if err := c.postJOSE(ctx, "/v1/groups/"+esc(group)+"/envelopes", env, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Group is GET /v1/groups/{id}.
func (c *Client) Group(ctx context.Context, group string) (*wire.Group, error) {
	var out wire.Group
	if err := c.get(ctx, "/v1/groups/"+esc(group), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GroupEnvelopes is GET /v1/groups/{id}/envelopes?after=: one page of the thread.
func (c *Client) GroupEnvelopes(ctx context.Context, group string, after int64) (*wire.GroupPage, error) {
	var out wire.GroupPage
	if err := c.get(ctx, "/v1/groups/"+esc(group)+"/envelopes?after="+strconv.FormatInt(after, 10), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// LogHead is GET /v1/log/head: the audit log's latest signed head.
func (c *Client) LogHead(ctx context.Context) (wire.Head, error) {
	var out wire.Head
	return out, c.get(ctx, "/v1/log/head", &out)
}

// LogCheckpoint is GET /v1/log/checkpoint: the log's latest head as a C2SP checkpoint, the
// signed note as the node sent it, for reputation/verify.OpenCheckpoint to check (this
// package parses nothing it does not need to).
func (c *Client) LogCheckpoint(ctx context.Context) ([]byte, error) {
	_, note, err := c.send(ctx, request{method: http.MethodGet, path: "/v1/log/checkpoint"})
	return note, err
}

// InclusionProof is GET /v1/log/proof/inclusion?leaf=&size=.
func (c *Client) InclusionProof(ctx context.Context, leaf merkle.Hash, size uint64) (wire.InclusionProof, error) {
	var out wire.InclusionProof
	return out, c.get(ctx, fmt.Sprintf("/v1/log/proof/inclusion?leaf=%s&size=%d", leaf, size), &out)
}

// ConsistencyProof is GET /v1/log/proof/consistency?from=&to=.
func (c *Client) ConsistencyProof(ctx context.Context, from, to uint64) (wire.ConsistencyProof, error) {
	var out wire.ConsistencyProof
	return out, c.get(ctx, fmt.Sprintf("/v1/log/proof/consistency?from=%d&to=%d", from, to), &out)
}

// LogScores is GET /v1/log/scores?size=&did=&after=&limit=&inputs=: the scores the node computed
// for an anchored head (size 0: the latest it scored), of one agent (did) or a page of every
// agent's after after in DID order (the answer's Next is the next page's after), with the head's inputs when asked for on a first page.
func (c *Client) LogScores(ctx context.Context, size uint64, did, after string, limit int, inputs bool) (*wire.ScoredHead, error) {
	q := url.Values{}
	if size > 0 {
		q.Set("size", strconv.FormatUint(size, 10))
	}
	if did != "" {
		q.Set("did", did)
	}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if inputs {
		q.Set("inputs", "1")
	}
	var out wire.ScoredHead
	if err := c.get(ctx, "/v1/log/scores?"+q.Encode(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ScoreHistory is GET /v1/reputation/{did}/history: did's score at each scored head the node
// keeps, oldest first.
func (c *Client) ScoreHistory(ctx context.Context, did string) (*wire.ScoreHistory, error) {
	var out wire.ScoreHistory
	if err := c.get(ctx, "/v1/reputation/"+url.PathEscape(did)+"/history", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// LogHeads reads a page of the log's signed heads (GET /v1/log/heads), newest first: those
// of epochs before before (0: from the latest), at most limit (0: the node's page size).
func (c *Client) LogHeads(ctx context.Context, before int64, limit int) (*wire.HeadPage, error) {
	q := url.Values{}
	if before > 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out wire.HeadPage
	if err := c.get(ctx, "/v1/log/heads?"+q.Encode(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// LogLeaves is GET /v1/log/leaves?from=&limit=&size=&subject=: a page of the audit log's
// leaves (the signed audit envelopes) from index from, below size (0: the latest head's), of
// subject ("": every subject), at most limit (0: the node's page); ask again from the page's Next until
// it is nil. The client checks nothing: reputation/verify.EnvelopeLeaf of each envelope is
// its leaf, and the leaves up to a head's size give its root.
func (c *Client) LogLeaves(ctx context.Context, from, size uint64, subject string, limit int) (*wire.LeafPage, error) {
	q := url.Values{"from": {strconv.FormatUint(from, 10)}}
	if size > 0 {
		q.Set("size", strconv.FormatUint(size, 10))
	}
	if subject != "" {
		q.Set("subject", subject)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out wire.LeafPage
	if err := c.get(ctx, "/v1/log/leaves?"+q.Encode(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AddBinding is POST /v1/bindings with a signed wallet binding: the node records it on chain
// from a wallet it holds, or answers the call for the wallet to send itself.
func (c *Client) AddBinding(ctx context.Context, binding []byte) (wire.BindingAnswer, error) {
	var out wire.BindingAnswer
	return out, c.do(ctx, request{method: http.MethodPost, path: "/v1/bindings", contentType: "application/json", body: binding}, &out)
}

// Jobs is GET /v1/jobs with the filter in q (status, client, provider, evaluator, limit,
// after).
func (c *Client) Jobs(ctx context.Context, q url.Values) ([]*wire.Job, error) {
	var out wire.JobList
	return out.Jobs, c.get(ctx, "/v1/jobs?"+q.Encode(), &out)
}

// Job is GET /v1/jobs/{id}: the job with its workers and history. A job the node does not
// hold is an *Error with slug unknown-job, whose detail says whether the chain has it (not
// indexed yet on this node).
func (c *Client) Job(ctx context.Context, id uint64) (*wire.Job, error) {
	var out wire.Job
	if err := c.get(ctx, "/v1/jobs/"+strconv.FormatUint(id, 10), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Bounties is GET /v1/bounties with the filter in q (status, poster, worker, ...).
func (c *Client) Bounties(ctx context.Context, q url.Values) ([]*wire.Bounty, error) {
	var out wire.BountyList
	return out.Bounties, c.get(ctx, "/v1/bounties?"+q.Encode(), &out)
}

// Bounty is GET /v1/bounties/{id}.
func (c *Client) Bounty(ctx context.Context, id string) (*wire.Bounty, error) {
	var out wire.Bounty
	if err := c.get(ctx, "/v1/bounties/"+esc(id), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutBountySpec is PUT /v1/bounties/{id}/spec: the bounty's task text, checked by the node
// against its specHash.
func (c *Client) PutBountySpec(ctx context.Context, id uint64, text string) error {
	return c.do(ctx, request{method: http.MethodPut, path: fmt.Sprintf("/v1/bounties/%d/spec", id), contentType: "text/plain; charset=utf-8", body: []byte(text)}, nil)
}

// Write posts a signed write (a bounty post or action, a withdrawal, a stake op) to path
// under an Idempotency-Key, so that sending it again never makes a second transaction, and
// decodes the answer into out (a *wire.BountyResult, a *wire.StakeResult).
func (c *Client) Write(ctx context.Context, path string, env []byte, idempotencyKey string, out any) error {
	var header map[string]string
	if idempotencyKey != "" {
		header = map[string]string{"Idempotency-Key": idempotencyKey}
	}
	return c.do(ctx, request{method: http.MethodPost, path: path, contentType: "application/jose", body: env, header: header}, out)
}

// WriteAsync is Write for a slow chain: it asks the node to answer within wait or else to
// carry on (Prefer: respond-async), and then follows the operation (GET
// /v1/operations/{id}), calling follow at each change, until it has the answer, which it
// decodes into out (a refusal is an *Error, as from Write). A node that stops answering
// meanwhile (a restart) is asked again until ctx ends.
func (c *Client) WriteAsync(ctx context.Context, path string, env []byte, idempotencyKey string, wait time.Duration, follow func(*wire.Operation), out any) error {
	header := map[string]string{"Prefer": fmt.Sprintf("respond-async, wait=%d", int(wait.Seconds()))}
	if idempotencyKey != "" {
		header["Idempotency-Key"] = idempotencyKey
	}
	status, data, err := c.send(ctx, request{method: http.MethodPost, path: path, contentType: "application/jose", body: env, header: header})
	if err != nil {
		return err
	}
	if status == http.StatusAccepted {
		var op wire.Operation
		if err := json.Unmarshal(data, &op); err != nil || op.ID == "" {
			return fmt.Errorf("node %s accepted the request but named no operation: %v", c.base, err)
		}
		last := ""
		for {
			if b, _ := json.Marshal(op); string(b) != last && follow != nil {
				follow(&op)
				last = string(b)
			}
			if op.Final() {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("operation %s (%s): %w", op.ID, op.State, ctx.Err())
			case <-time.After(operationPoll):
			}
			next, err := c.Operation(ctx, op.ID)
			if err != nil {
				var answered *Error
				if !errors.As(err, &answered) && ctx.Err() == nil {
					// No answer: the node may be restarting; it keeps its operations and
					// carries them on, so ask again until ctx ends.
					continue
				}
				return fmt.Errorf("follow operation %s: %w", op.ID, err)
			}
			op = *next
		}
		if op.State == wire.OpFailed {
			return errorOf(op.Status, op.Result)
		}
		status, data = op.Status, op.Result
	}
	return c.decode(status, data, out)
}

// Operation is GET /v1/operations/{id}.
func (c *Client) Operation(ctx context.Context, id string) (*wire.Operation, error) {
	var out wire.Operation
	return &out, c.get(ctx, "/v1/operations/"+url.PathEscape(id), &out)
}

// operationPoll is how often WriteAsync asks how an operation is going.
const operationPoll = 500 * time.Millisecond

// PostBounty is POST /v1/bounties.
func (c *Client) PostBounty(ctx context.Context, env []byte, idempotencyKey string) (*wire.BountyResult, error) {
	var out wire.BountyResult
	if err := c.Write(ctx, "/v1/bounties", env, idempotencyKey, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ActOnBounty is POST /v1/bounties/{id}/{action}.
func (c *Client) ActOnBounty(ctx context.Context, id uint64, action wire.Action, env []byte, idempotencyKey string) (*wire.BountyResult, error) {
	var out wire.BountyResult
	if err := c.Write(ctx, fmt.Sprintf("/v1/bounties/%d/%s", id, action), env, idempotencyKey, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Withdraw is POST /v1/withdraw: the signer's wallet takes what the escrow credited it (a
// payout it could not be pushed at settlement). Nothing credited is an *Error with status 409
// (nothing-to-withdraw).
func (c *Client) Withdraw(ctx context.Context, env []byte, idempotencyKey string) (*wire.BountyResult, error) {
	var out wire.BountyResult
	if err := c.Write(ctx, "/v1/withdraw", env, idempotencyKey, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StakePaths are the routes of the stake ops.
var StakePaths = map[wire.StakeOp]string{
	wire.OpStake: "/v1/stake", wire.OpUnbond: "/v1/stake/unbond", wire.OpWithdrawStake: "/v1/stake/withdraw",
}

// Stake is POST /v1/stake, /v1/stake/unbond or /v1/stake/withdraw, by op.
func (c *Client) Stake(ctx context.Context, op wire.StakeOp, env []byte, idempotencyKey string) (*wire.StakeResult, error) {
	path, ok := StakePaths[op]
	if !ok {
		return nil, fmt.Errorf("client: no route for stake op %q", op)
	}
	var out wire.StakeResult
	if err := c.Write(ctx, path, env, idempotencyKey, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// KeyChangePaths are the routes that revoke or rotate the signer's DID from a wallet the node
// holds.
var KeyChangePaths = map[wire.StakeOp]string{wire.OpRevoke: "/v1/dids/revoke", wire.OpRotate: "/v1/dids/rotate"}

// ChangeKey is POST /v1/dids/revoke or /v1/dids/rotate, by op: env is signed by the DID
// revoked or rotated away from, its body a wire.RevokeBody or wire.RotateBody.
func (c *Client) ChangeKey(ctx context.Context, op wire.StakeOp, env []byte, idempotencyKey string) (*wire.KeyChange, error) {
	path, ok := KeyChangePaths[op]
	if !ok {
		return nil, fmt.Errorf("client: no route for key change %q", op)
	}
	var out wire.KeyChange
	if err := c.Write(ctx, path, env, idempotencyKey, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StakeOf is GET /v1/stake/{did}?wallet=: the agent's stake under wallet, read from the chain.
func (c *Client) StakeOf(ctx context.Context, did string, wallet common.Address) (*wire.Holding, error) {
	var out wire.Holding
	if err := c.get(ctx, "/v1/stake/"+esc(did)+"?wallet="+wallet.Hex(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Relay is POST /v1/tx/raw: a transaction an external wallet signed, to the escrow or the
// stake registry.
func (c *Client) Relay(ctx context.Context, rawTx []byte) (*wire.BountyResult, error) {
	var out wire.BountyResult
	if err := c.postJSON(ctx, "/v1/tx/raw", wire.RelayRequest{RawTx: hexutil.Bytes(rawTx)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
