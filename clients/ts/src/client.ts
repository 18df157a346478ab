// A typed client of a Surety node's HTTP API (api/openapi.json; the bodies are api/wire's).
// Every refusal is a problem+json answer (RFC 9457), surfaced as a ProblemError.

import { type Binding, type BindingStatement, bindingJSON } from "./binding.js";
import type { Card, Endpoint } from "./card.js";

/** The problem+json a node answers a refused request with. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  /** For envelope refusals, the verifier's reason (e.g. wrong-audience). */
  reason?: string;
}

/** ProblemError is a request the node refused, with its problem. */
export class ProblemError extends Error {
  readonly type: string;
  readonly status: number;
  readonly title: string;
  readonly detail?: string;
  readonly reason?: string;
  constructor(
    readonly method: string,
    readonly path: string,
    readonly problem: Problem,
  ) {
    super(`${method} ${path}: ${problem.status} ${problem.title}${problem.detail ? ": " + problem.detail : ""} (${problem.type})`);
    this.name = "ProblemError";
    this.type = problem.type;
    this.status = problem.status;
    this.title = problem.title;
    this.detail = problem.detail;
    this.reason = problem.reason;
  }
  /** slug is the last part of the problem type, e.g. "envelope-expired". */
  get slug(): string {
    return this.type.slice(this.type.lastIndexOf("/") + 1);
  }
}

// ---- wire types (api/wire) ----

export interface Info {
  version: string;
  chain: { id: number; kind: string; genesis: string; blockNumber: number; stateKey: string; indexedBlock?: number; confirmations: number; minStake?: string };
  contracts: Record<string, string>;
  nodeDid?: string;
  peer?: { id: string; addrs: string[]; binding: string };
  auditLog?: { state?: string; detail?: string; since?: string; quorum: number };
}
export interface Health {
  status: string;
  [k: string]: unknown;
}
export interface Challenge {
  challenge: string;
  expires: string;
  audience: string;
}
export interface Issued {
  did: string;
  kind: string;
  didDocument?: unknown;
  credential: string;
}
export interface Agent extends Card {
  jws: string;
  stake: string;
  staked: boolean;
  score?: number;
  endpoints?: Endpoint[];
  /** GET /v1/agents/{did} only: the DID's agent ids in the ERC-8004 identity registry. */
  erc8004AgentIds?: number[];
}
export interface VerifyResponse {
  valid: boolean;
  [k: string]: unknown;
}
export type BountyStatus = string;
export interface BountyEvent {
  bountyId?: number;
  name: string;
  block: number;
  txHash: string;
  logIndex: number;
  data: unknown;
}
export interface Bounty {
  id: number;
  status: BountyStatus;
  poster: string;
  worker?: string;
  token: string;
  amount: string;
  arbiter: string;
  deadline: number;
  reviewWindow: number;
  feeBps: number;
  minStake: string;
  specHash: string;
  spec?: string;
  resultHash?: string;
  payout: string;
  fee: string;
  posterRefund: string;
  postedBlock: number;
  updatedBlock: number;
  history?: BountyEvent[];
}
export interface BountyResult {
  bounty?: Bounty;
  txHash: string;
  block: number;
  gasUsed: number;
}
/** An ERC-8183 job's status (the standard's JobStatus). */
export type JobStatus = "open" | "funded" | "submitted" | "completed" | "rejected" | "expired";
/** An event of JobEscrow or SuretyHook, as the node indexed it. */
export interface JobEvent {
  jobId?: number;
  contract: "JobEscrow" | "SuretyHook";
  name: string;
  block: number;
  txHash: string;
  logIndex: number;
  /** The event's arguments by their Solidity names (integers above 64 bits as decimal strings). */
  data: Record<string, unknown>;
}
/** One worker's entry in a Surety job. */
export interface JobEntry {
  worker: string;
  agentId: string;
  lockId: string;
  deliverable?: string;
  bps?: number;
  amount?: string;
}
/** A Surety job's side in SuretyHook: plan, phase, entries, dispute, settlement, milestone parts. */
export interface JobSurety {
  phase: string;
  plan?: Record<string, unknown>;
  entries?: JobEntry[];
  dispute?: { by: string; reasonHash: string };
  settlement?: { outcome: string; toWorkers: string; toClient: string; slash: string };
  parts?: number[];
}
/** An ERC-8183 job as the node's index shows it (GET /v1/jobs/{id}). */
export interface Job {
  id: number;
  status: JobStatus;
  client: string;
  provider: string;
  evaluator: string;
  hook: string;
  expiredAt: number;
  description: string;
  providerAgentId: string;
  token: string;
  budget: string;
  deliverable?: string;
  reason?: string;
  rejectedBy?: string;
  payout: string;
  platformFee: string;
  evaluatorFee: string;
  refund: string;
  createdBlock: number;
  updatedBlock: number;
  workers?: string[];
  surety?: JobSurety;
  history?: JobEvent[];
}
/** The filter of GET /v1/jobs. */
export interface JobFilter {
  status?: JobStatus;
  client?: string;
  provider?: string;
  evaluator?: string;
  after?: number;
  limit?: number;
}
export type Action = "claim" | "assign" | "submit" | "accept" | "reject" | "dispute" | "resolve" | "resolve-expired" | "release" | "refund" | "cancel" | "unclaim";
export interface Holding {
  agentId: string;
  controller: string;
  status: string;
  staked: string;
  locked: string;
  unbonding: string;
  unlockAt?: number;
  token: string;
}
/** An agent of the ERC-8004 identity registry as the node indexes it. */
export interface ERC8004Agent {
  agentId: number;
  owner: string;
  /** The agent wallet; the zero address when cleared. */
  wallet: string;
  agentURI: string;
  /** What its metadata "did" claims. */
  did?: string;
  registeredBlock: number;
  updatedBlock: number;
}
/** GET /v1/erc8004/dids/{did}: the agents that are the DID's, and those that only claim it. */
export interface ERC8004DID {
  did: string;
  agents: ERC8004Agent[];
  claiming: ERC8004Agent[];
}
/**
 * One ERC-8004 feedback: value has valueDecimals decimals. value is a JSON integer of up to
 * 1e38: exact here below 2^53 (Surety's audits are at most 10000).
 */
export interface ERC8004Feedback {
  agentId: number;
  clientAddress: string;
  feedbackIndex: number;
  value: number;
  valueDecimals: number;
  tag1: string;
  tag2: string;
  endpoint: string;
  feedbackURI: string;
  feedbackHash: string;
  revoked: boolean;
  /** The block of the revocation (absent while not revoked). */
  revokedBlock?: number;
  block: number;
  /** The time of its block (unix seconds). */
  time: number;
  logIndex: number;
  txHash: string;
}
export interface ERC8004Validation {
  requestHash: string;
  agentId: number;
  validatorAddress: string;
  requestURI: string;
  responded: boolean;
  response: number;
  responseURI?: string;
  responseHash: string;
  tag?: string;
  block: number;
  updatedBlock: number;
}
/** An ERC-8004 registration file (registration-v1). */
export interface ERC8004Registration {
  type: string;
  name: string;
  description: string;
  image: string;
  services: { name: string; endpoint: string; version?: string; skills?: string[]; domains?: string[] }[];
  x402Support: boolean;
  active: boolean;
  registrations: { agentId: number; agentRegistry: string }[];
  supportedTrust?: string[];
}
export interface StakeResult {
  txHash: string;
  block: number;
  gasUsed: number;
  stake?: Holding;
}
export interface BindingAnswer {
  statement: BindingStatement;
  onChain: boolean;
  txHash?: string;
  block?: number;
  /** When the node does not hold the wallet: the call the wallet sends (build it yourself). */
  to?: string;
  data?: string;
}
export interface AuditRecord {
  auditor: string;
  subject: string;
  bounty?: { chain_id: number; escrow: string; id: number };
  envelope?: string;
  score: number;
  evidence: { hash: string; uri?: string };
  time: number;
}
export interface StoredAudit extends AuditRecord {
  leaf: string;
  backed: boolean;
  side?: string;
  settled?: number;
  supersededBy?: string;
  refused?: string;
}
export interface Submitted {
  audit: StoredAudit;
  current: boolean;
  counted: { weight: number; backing: number; settled?: number; standing: number; stake: number; why: string };
}
export interface Reputation {
  did: string;
  score: number;
  confidence: number;
  weight: number;
  /** The part of weight imported ERC-8004 feedback gives. */
  external?: number;
  rank: number;
  standing: number;
  audits: number;
  computed: string;
  feeding?: StoredAudit[];
  /** The ERC-8004 feedback that counts about it, one per client. */
  imported?: ImportedFeedback[];
}
/** One client's ERC-8004 feedback as reputation counts it. */
export interface ImportedFeedback {
  subject: string;
  client: string;
  score: number;
  time: number;
  settled: number;
  block: number;
}
export interface LogHead {
  size: number;
  root: string;
  epoch: number;
  closed: number;
  signed: string;
  anchorTx?: string;
}
export interface InclusionProofAnswer {
  leaf: string;
  index: number;
  size: number;
  path: string[];
}
/** A leaf of the audit log with the signed audit envelope (base64) it is the hash of. */
export interface LoggedLeaf {
  index: number;
  leaf: string;
  epoch: number;
  anchorEpoch?: number;
  envelope?: string;
}
/** GET /v1/log/leaves: a page of the log's leaves, with the signed heads they name. */
export interface LeafPage {
  size: number;
  leaves: LoggedLeaf[];
  heads: LogHead[];
  next?: number;
}
/** GET /v1/log/heads: a page of the log's signed heads, newest first. */
export interface HeadPage {
  heads: LogHead[];
  next?: number;
}
/** One agent's five figures at a scored head (reputation.HeadScore). */
export interface HeadScore {
  did: string;
  score: number;
  confidence: number;
  weight: number;
  standing: number;
  relative: number;
}
/** One audit that counts at a scored head. */
export interface ScoredAudit {
  leaf: string;
  auditor: string;
  subject: string;
  target: string;
  score: number;
  time: number;
  backed: boolean;
  settled: number;
}
/**
 * GET /v1/log/scores: the scores of a head anchored on chain, computed from the log's leaves up
 * to it and the chain's facts at the block of its first anchor alone (docs/REPUTATION.md,
 * "Recomputing a score").
 */
export interface ScoredHead {
  size: number;
  epoch: number;
  root: string;
  at: number;
  block: number;
  anchorTx: string;
  params: Record<string, number>;
  scores: HeadScore[];
  inputs?: { stake: Record<string, number>; audits: ScoredAudit[] };
  next?: string;
}
/** GET /v1/reputation/{did}/history: the agent's figures at each scored head, oldest first. */
export interface ScoreHistory {
  did: string;
  points: { size: number; epoch: number; at: number; score: number; confidence: number; standing: number }[];
}
export interface ConsistencyProofAnswer {
  from: number;
  to: number;
  path: string[];
}
export interface Operation {
  id: string;
  state: string;
  status?: number;
  result?: unknown;
  [k: string]: unknown;
}

/** Options of a Client. */
export interface ClientOptions {
  /** Per-request timeout in milliseconds; default 30 s. */
  timeoutMs?: number;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
  /** The most bytes read from one answer; default MAX_ANSWER (16 MiB). */
  maxAnswerBytes?: number;
}

interface Req {
  method: string;
  path: string;
  body?: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  raw?: boolean;
}

/** MAX_ANSWER bounds the bytes read from one answer. */
export const MAX_ANSWER = 16 << 20;

/** Client calls one node's API. */
export class Client {
  readonly base: string;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly maxAnswer: number;

  constructor(base: string, opts: ClientOptions = {}) {
    const u = new URL(base);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error(`node URL ${base}: use http or https`);
    this.base = base.replace(/\/+$/, "");
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.fetchFn = opts.fetch ?? fetch;
    this.maxAnswer = opts.maxAnswerBytes ?? MAX_ANSWER;
  }

  private async send(r: Req): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { Accept: "application/json, application/problem+json", ...(r.headers ?? {}) };
    if (r.contentType) headers["Content-Type"] = r.contentType;
    const res = await this.fetchFn(this.base + r.path, {
      method: r.method,
      headers,
      body: r.body === undefined ? undefined : typeof r.body === "string" ? r.body : Buffer.from(r.body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await readLimited(res, this.maxAnswer, `${r.method} ${r.path}`);
    if (res.status >= 400) {
      let p: Problem | undefined;
      try {
        const j = JSON.parse(text);
        if (j && typeof j.type === "string" && typeof j.status === "number") p = j;
      } catch {
        p = undefined;
      }
      throw new ProblemError(r.method, r.path, p ?? { type: "about:blank", title: res.statusText || "error", status: res.status, detail: text.slice(0, 200) });
    }
    return { status: res.status, text };
  }

  private async json<T>(r: Req): Promise<T> {
    const { text } = await this.send(r);
    if (text === "") return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new Error(`${r.method} ${r.path}: the node answered something other than JSON`);
    }
  }

  private get<T>(path: string): Promise<T> {
    return this.json<T>({ method: "GET", path });
  }

  private postJOSE<T>(path: string, jws: string, headers?: Record<string, string>): Promise<T> {
    return this.json<T>({ method: "POST", path, body: jws, contentType: "application/jose", headers });
  }

  private postJSON<T>(path: string, body: unknown): Promise<T> {
    return this.json<T>({ method: "POST", path, body: JSON.stringify(body), contentType: "application/json" });
  }

  /** GET /healthz */
  health(): Promise<Health> {
    return this.get("/healthz");
  }
  /** GET /v1/info: the node's chain, contracts and DID. */
  info(): Promise<Info> {
    return this.get("/v1/info");
  }
  /** GET /v1/openapi.json */
  openapi(): Promise<Record<string, unknown>> {
    return this.get("/v1/openapi.json");
  }
  /** GET /v1/peers: the node's libp2p peers and gossip meshes. */
  peers(): Promise<Record<string, unknown>> {
    return this.get("/v1/peers");
  }
  /** POST /v1/agents/{did}/status: have the node recheck a DID's key and stake on chain. */
  checkAgentStatus(did: string): Promise<Record<string, unknown>> {
    return this.json({ method: "POST", path: `/v1/agents/${encodeURIComponent(did)}/status` });
  }
  /** POST /v1/dids/revoke or /v1/dids/rotate from a wallet the node holds (a signed envelope). */
  changeKey(op: "revoke" | "rotate", jws: string, idempotencyKey?: string): Promise<Record<string, unknown>> {
    return this.postJOSE(`/v1/dids/${op}`, jws, idem(idempotencyKey));
  }
  /** GET /v1/challenge: a one-time challenge for registering a DID. */
  challenge(): Promise<Challenge> {
    return this.get("/v1/challenge");
  }
  /** POST /v1/dids/register: proof is an envelope to the node whose body holds the challenge. */
  registerDID(proof: string): Promise<Issued> {
    return this.postJSON("/v1/dids/register", { proof });
  }
  /** GET /1.0/identifiers/{did}: DID resolution (the resolution result). */
  resolveDID(did: string): Promise<Record<string, unknown>> {
    return this.get(`/1.0/identifiers/${encodeURIComponent(did)}`);
  }
  /** POST /v1/envelopes/verify: the node's verdict on an envelope (spends nothing). */
  verifyEnvelope(jws: string): Promise<VerifyResponse> {
    return this.postJOSE("/v1/envelopes/verify", jws);
  }
  /** POST /v1/agents: register a signed card (compact JWS). */
  registerCard(jws: string): Promise<Agent> {
    return this.postJOSE("/v1/agents", jws);
  }
  /**
   * POST /v1/agents with an A2A Agent Card (its JSON text, signed by the agent: signA2ACard):
   * registered as a JWS card is, under the same rules.
   */
  registerA2ACard(cardJSON: string): Promise<Agent> {
    return this.json({ method: "POST", path: "/v1/agents", body: cardJSON, contentType: "application/a2a-card+json" });
  }
  /** GET /.well-known/agent-card.json: the node's own A2A card as text (verifyServedA2ACard). */
  async nodeA2ACard(): Promise<string> {
    return (await this.send({ method: "GET", path: "/.well-known/agent-card.json" })).text;
  }
  /**
   * GET /v1/agents/{did}/agent-card.json: the agent's card as A2A, as text: served (with the
   * node's live trust params, signed by the node: verifyServedA2ACard) or, with form
   * "registered", the agent's own signed A2A card (parseA2ACard).
   */
  async agentA2ACard(did: string, form?: "registered"): Promise<string> {
    const q = form ? `?form=${form}` : "";
    return (await this.send({ method: "GET", path: `/v1/agents/${encodeURIComponent(did)}/agent-card.json${q}` })).text;
  }
  /** GET /v1/credentials/{did}/registration or /stake: a VC 2.0 credential (vc+jwt) the node issued. */
  async credential(did: string, kind: "registration" | "stake"): Promise<string> {
    return (await this.send({ method: "GET", path: `/v1/credentials/${encodeURIComponent(did)}/${kind}` })).text;
  }
  /** POST /v1/credentials/verify: the node's verdict on a credential it issued. */
  verifyCredential(vcJwt: string): Promise<Record<string, unknown>> {
    return this.json({ method: "POST", path: "/v1/credentials/verify", body: vcJwt, contentType: "application/vc+jwt" });
  }
  /** GET /v1/status/{list}: one of the node's revocation status lists (a vc+jwt). */
  async statusList(list: number | string): Promise<string> {
    return (await this.send({ method: "GET", path: `/v1/status/${encodeURIComponent(String(list))}` })).text;
  }
  /** GET /v1/agents/{did} */
  agent(did: string): Promise<Agent> {
    return this.get(`/v1/agents/${encodeURIComponent(did)}`);
  }
  /** GET /v1/agents?q=&capability=&limit=: discovery. */
  async searchAgents(q: Record<string, string | number>): Promise<Agent[]> {
    const qs = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]));
    return (await this.get<{ agents: Agent[] }>(`/v1/agents?${qs}`)).agents ?? [];
  }
  /** POST /v1/audits: file an audit envelope. */
  submitAudit(jws: string): Promise<Submitted> {
    return this.postJOSE("/v1/audits", jws);
  }
  /** GET /v1/reputation/{did} */
  reputation(did: string): Promise<Reputation> {
    return this.get(`/v1/reputation/${encodeURIComponent(did)}`);
  }
  /** GET /v1/reputation?top=N */
  async topReputation(n = 20): Promise<Reputation[]> {
    return (await this.get<{ agents: Reputation[] }>(`/v1/reputation?top=${n}`)).agents ?? [];
  }
  /** POST /v1/groups/{id}/members: a membership envelope by the group's creator. */
  setGroupMembers(group: string, jws: string): Promise<Record<string, unknown>> {
    return this.postJOSE(`/v1/groups/${encodeURIComponent(group)}/members`, jws);
  }
  /** POST /v1/groups/{id}/envelopes: a member's post. */
  postToGroup(group: string, jws: string): Promise<Record<string, unknown>> {
    return this.postJOSE(`/v1/groups/${encodeURIComponent(group)}/envelopes`, jws);
  }
  /** GET /v1/groups/{id} */
  group(group: string): Promise<Record<string, unknown>> {
    return this.get(`/v1/groups/${encodeURIComponent(group)}`);
  }
  /** GET /v1/groups/{id}/envelopes?after=N */
  groupEnvelopes(group: string, after = 0): Promise<Record<string, unknown>> {
    return this.get(`/v1/groups/${encodeURIComponent(group)}/envelopes?after=${after}`);
  }
  /** GET /v1/log/head: the audit log's head (check "signed" with openHead). */
  logHead(): Promise<LogHead> {
    return this.get("/v1/log/head");
  }
  /** GET /v1/log/checkpoint: the C2SP signed note. */
  async logCheckpoint(): Promise<string> {
    return (await this.send({ method: "GET", path: "/v1/log/checkpoint" })).text;
  }
  /** GET /v1/log/proof/inclusion?leaf=&size= */
  inclusionProof(leaf: string, size: number): Promise<InclusionProofAnswer> {
    return this.get(`/v1/log/proof/inclusion?leaf=${encodeURIComponent(leaf)}&size=${size}`);
  }
  /**
   * GET /v1/log/leaves?from=&size=&subject=&limit=: a page of the audit log's leaves (the
   * signed audit envelopes, base64) from index `from`, below `size` (a head's; default the
   * latest), of one subject or all; ask again from `next` until it is absent.
   */
  logLeaves(opts: { from?: number; size?: number; subject?: string; limit?: number } = {}): Promise<LeafPage> {
    const q = new URLSearchParams({ from: String(opts.from ?? 0) });
    if (opts.size) q.set("size", String(opts.size));
    if (opts.subject) q.set("subject", opts.subject);
    if (opts.limit) q.set("limit", String(opts.limit));
    return this.get(`/v1/log/leaves?${q}`);
  }
  /** GET /v1/log/heads?before=&limit=: a page of the log's signed heads, newest first. */
  logHeads(opts: { before?: number; limit?: number } = {}): Promise<HeadPage> {
    const q = new URLSearchParams();
    if (opts.before) q.set("before", String(opts.before));
    if (opts.limit) q.set("limit", String(opts.limit));
    return this.get(`/v1/log/heads?${q}`);
  }
  /**
   * GET /v1/log/scores?size=&did=&after=&limit=&inputs=: the scores the node computed for an
   * anchored head (size 0: the latest it scored), one agent's (did) or a page of every agent's
   * after `after` in DID order (the answer's `next` is the next page's after), with the head's
   * inputs on a first page when asked for.
   */
  logScores(opts: { size?: number; did?: string; after?: string; limit?: number; inputs?: boolean } = {}): Promise<ScoredHead> {
    const q = new URLSearchParams();
    if (opts.size) q.set("size", String(opts.size));
    if (opts.did) q.set("did", opts.did);
    if (opts.after) q.set("after", opts.after);
    if (opts.limit) q.set("limit", String(opts.limit));
    if (opts.inputs) q.set("inputs", "1");
    return this.get(`/v1/log/scores?${q}`);
  }
  /** GET /v1/reputation/{did}/history: the agent's figures at each scored head the node keeps. */
  scoreHistory(did: string): Promise<ScoreHistory> {
    return this.get(`/v1/reputation/${encodeURIComponent(did)}/history`);
  }
  /** GET /v1/log/proof/consistency?from=&to= */
  consistencyProof(from: number, to: number): Promise<ConsistencyProofAnswer> {
    return this.get(`/v1/log/proof/consistency?from=${from}&to=${to}`);
  }
  /**
   * POST /v1/bindings: hand the node a binding both keys signed. A node holding the wallet
   * records it; otherwise it answers onChain false with the call for the wallet to send.
   */
  addBinding(b: Binding): Promise<BindingAnswer> {
    return this.json({ method: "POST", path: "/v1/bindings", body: bindingJSON(b), contentType: "application/json" });
  }
  /** GET /v1/bounties?status=&poster=&worker=&q= */
  async bounties(q: Record<string, string> = {}): Promise<Bounty[]> {
    return (await this.get<{ bounties: Bounty[] }>(`/v1/bounties?${new URLSearchParams(q)}`)).bounties ?? [];
  }
  /** GET /v1/bounties/{id} */
  bounty(id: number | string): Promise<Bounty> {
    return this.get(`/v1/bounties/${encodeURIComponent(String(id))}`);
  }
  /** GET /v1/jobs?status=&client=&provider=&evaluator=&after=&limit=: ERC-8183 jobs from the node's index. */
  async jobs(f: JobFilter = {}): Promise<Job[]> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(f)) if (v !== undefined && v !== "") q.set(k, String(v));
    return (await this.get<{ jobs: Job[] }>(`/v1/jobs?${q}`)).jobs ?? [];
  }
  /** GET /v1/jobs/{id}: the job with its workers, Surety side and history. A job the node does
   * not hold is a ProblemError of type unknown-job; its detail says whether the chain has it. */
  job(id: number | string): Promise<Job> {
    return this.get(`/v1/jobs/${encodeURIComponent(String(id))}`);
  }
  /** PUT /v1/bounties/{id}/spec: the task text whose keccak256 the bounty recorded. */
  async putBountySpec(id: number | string, text: string): Promise<void> {
    await this.send({ method: "PUT", path: `/v1/bounties/${encodeURIComponent(String(id))}/spec`, body: text, contentType: "text/plain; charset=utf-8" });
  }
  /** POST /v1/bounties: post from a wallet the node holds (a signed envelope). */
  postBounty(jws: string, idempotencyKey?: string): Promise<BountyResult> {
    return this.postJOSE("/v1/bounties", jws, idem(idempotencyKey));
  }
  /** POST /v1/bounties/{id}/{action}: act from a wallet the node holds. */
  actOnBounty(id: number, action: Action, jws: string, idempotencyKey?: string): Promise<BountyResult> {
    return this.postJOSE(`/v1/bounties/${id}/${action}`, jws, idem(idempotencyKey));
  }
  /** POST /v1/withdraw */
  withdraw(jws: string, idempotencyKey?: string): Promise<BountyResult> {
    return this.postJOSE("/v1/withdraw", jws, idem(idempotencyKey));
  }
  /** POST /v1/stake, /v1/stake/unbond, /v1/stake/withdraw from a wallet the node holds. */
  stake(op: "stake" | "unbond" | "withdraw", jws: string, idempotencyKey?: string): Promise<StakeResult> {
    const path = { stake: "/v1/stake", unbond: "/v1/stake/unbond", withdraw: "/v1/stake/withdraw" }[op];
    return this.postJOSE(path, jws, idem(idempotencyKey));
  }
  /** GET /v1/stake/{did}?wallet= */
  stakeOf(did: string, wallet: string): Promise<Holding> {
    return this.get(`/v1/stake/${encodeURIComponent(did)}?wallet=${wallet}`);
  }
  /** GET /v1/erc8004/registration/{did}: the DID's ERC-8004 registration file. */
  erc8004Registration(did: string): Promise<ERC8004Registration> {
    return this.get(`/v1/erc8004/registration/${encodeURIComponent(did)}`);
  }
  /** GET /v1/erc8004/dids/{did}: the DID's agent ids (and those only claiming it). */
  erc8004DID(did: string): Promise<ERC8004DID> {
    return this.get(`/v1/erc8004/dids/${encodeURIComponent(did)}`);
  }
  /** GET /v1/erc8004/agents/{id} */
  erc8004Agent(id: number | bigint): Promise<ERC8004Agent> {
    return this.get(`/v1/erc8004/agents/${id}`);
  }
  /** GET /v1/erc8004/agents/{id}/feedback?client=&tag1=&revoked= : in chain order. */
  erc8004Feedback(id: number | bigint, opts: { client?: string; tag1?: string; revoked?: boolean } = {}): Promise<{ agentId: number; feedback: ERC8004Feedback[] }> {
    const q = new URLSearchParams();
    if (opts.client) q.set("client", opts.client);
    if (opts.tag1) q.set("tag1", opts.tag1);
    if (opts.revoked) q.set("revoked", "true");
    return this.get(`/v1/erc8004/agents/${id}/feedback?${q}`);
  }
  /** GET /v1/erc8004/agents/{id}/validations */
  erc8004Validations(id: number | bigint): Promise<{ agentId: number; validations: ERC8004Validation[] }> {
    return this.get(`/v1/erc8004/agents/${id}/validations`);
  }
  /** GET /v1/operations/{id} */
  operation(id: string): Promise<Operation> {
    return this.get(`/v1/operations/${encodeURIComponent(id)}`);
  }
  /** POST /v1/tx/raw: relay a signed transaction to the escrow or stake registry. */
  relay(rawTx: string): Promise<BountyResult> {
    return this.postJSON("/v1/tx/raw", { rawTx });
  }
  /** The node's JSON-RPC relay (POST /v1/rpc), for viem's http transport. */
  get rpcURL(): string {
    return this.base + "/v1/rpc";
  }

  /** waitIndexed waits until the node's indexes hold block (its /v1/info indexedBlock). */
  async waitIndexed(block: number, timeoutMs = 60_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const info = await this.info();
      if ((info.chain.indexedBlock ?? -1) >= block) return;
      if (Date.now() > until) throw new Error(`the node had not indexed block ${block} in ${timeoutMs} ms (at ${info.chain.indexedBlock})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

// readLimited reads an answer's body, refusing one longer than max bytes as it streams in
// (a node cannot make the client hold more).
async function readLimited(res: Response, max: number, what: string): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > max) {
      await reader.cancel();
      throw new Error(`${what}: answer larger than ${max} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function idem(key?: string): Record<string, string> | undefined {
  return key ? { "Idempotency-Key": key } : undefined;
}
