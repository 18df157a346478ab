"""A typed client of a Surety node's HTTP API (api/openapi.json), on urllib. Refusals come
back as ProblemError (RFC 9457 problem+json: type, status, title, detail, reason)."""

import json
import time
import urllib.error
import urllib.parse
import urllib.request

from .errors import ProblemError
from .types import (Agent, BindingAnswer, Bounty, Head, Holding, InclusionProof, Info, Job,
                    Reputation, Submitted, VerifyResponse)

DEFAULT_TIMEOUT = 60
MAX_ANSWER = 8 << 20  # bytes of one answer the client reads


class Client:
    """A node at base_url (e.g. http://127.0.0.1:7746)."""

    def __init__(self, base_url: str, timeout: float = DEFAULT_TIMEOUT):
        self.base = base_url.rstrip("/")
        self.timeout = timeout
        self._info = None

    # --- plumbing ---

    def request(self, method, path, body=None, content_type="application/json", headers=None, query=None, raw=False):
        """The decoded JSON answer (None for 204; the bytes with raw); ProblemError for a
        4xx/5xx answer."""
        want_raw = raw
        url = self.base + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/json, application/problem+json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read(MAX_ANSWER + 1)
                status = resp.status
        except urllib.error.HTTPError as e:
            raw = e.read(MAX_ANSWER + 1)
            raise problem_of(e.code, raw, e.headers.get("Content-Type", "")) from None
        if len(raw) > MAX_ANSWER:
            raise ProblemError(status, title="answer larger than %d bytes" % MAX_ANSWER)
        if want_raw:
            return raw
        if status == 204 or not raw:
            return None
        return json.loads(raw)

    def _did_path(self, did):
        return urllib.parse.quote(str(did), safe=":")

    # --- node ---

    def health(self) -> dict:
        return self.request("GET", "/healthz")

    def info(self) -> Info:
        self._info = Info.from_json(self.request("GET", "/v1/info"))
        return self._info

    def cached_info(self) -> Info:
        return self._info or self.info()

    def openapi(self) -> dict:
        return self.request("GET", "/v1/openapi.json")

    def wait_indexed(self, block: int, timeout: float = 60, poll: float = 0.25) -> Info:
        """Returns once the node's chain indexes hold block (its indexedBlock)."""
        end = time.monotonic() + timeout
        while True:
            info = self.info()
            ib = info.chain.indexed_block
            if ib is not None and ib >= block:
                return info
            if time.monotonic() > end:
                raise TimeoutError("the node had not indexed block %d (it has %s)" % (block, ib))
            time.sleep(poll)

    # --- identity ---

    def resolve(self, did: str, fmt: str = "") -> dict:
        return self.request("GET", "/1.0/identifiers/" + self._did_path(did), query={"format": fmt or None})

    def challenge(self) -> dict:
        return self.request("GET", "/v1/challenge")

    def register_did(self, proof: str) -> dict:
        """POST /v1/dids/register: proof is an envelope to the node whose body is
        {"challenge": ...} (from challenge())."""
        return self.request("POST", "/v1/dids/register", {"proof": proof})

    def register_self(self, key) -> dict:
        """Registers key's DID with the node (proof of possession): signs the node's one-time
        challenge in an envelope to it. Answers {did, kind, didDocument, credential}."""
        ch = self.challenge()
        return self.register_did(self.envelope_for(key, {"challenge": ch["challenge"]}))

    def verify_envelope(self, envelope: str) -> VerifyResponse:
        return VerifyResponse.from_json(self.request("POST", "/v1/envelopes/verify", envelope, "application/jose"))

    def add_binding(self, binding: dict) -> BindingAnswer:
        """POST /v1/bindings: the node checks the binding; for a wallet it does not hold it
        answers the call to send (to, data) unless the chain has the binding already."""
        return BindingAnswer.from_json(self.request("POST", "/v1/bindings", binding))

    def registration_credential(self, did: str) -> str:
        """GET /v1/credentials/{did}/registration: the VC 2.0 registration credential (vc+jwt;
        credentials.verify_credential), with a status entry when the DID holds the minimum stake."""
        return self.request("GET", "/v1/credentials/%s/registration" % self._did_path(did), raw=True).decode().strip()

    def stake_credential(self, did: str, wallet: str = "") -> str:
        """GET /v1/credentials/{did}/stake: the VC 2.0 stake credential (wallet, amount, chain,
        block), for a DID holding the minimum stake."""
        return self.request("GET", "/v1/credentials/%s/stake" % self._did_path(did), query={"wallet": wallet or None}, raw=True).decode().strip()

    def status_list(self, url: str) -> str:
        """The BitstringStatusListCredential a credential's status entry names (an http(s)
        URL the node serves under /v1/status/)."""
        if not url.startswith(("http://", "https://")):
            raise ValueError("a status list URL is http(s): %r" % url[:100])
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": "application/vc+jwt"}), timeout=self.timeout) as resp:
            return resp.read(MAX_ANSWER).decode().strip()

    # --- agents ---

    def register_agent(self, signed_card: str) -> Agent:
        return Agent.from_json(self.request("POST", "/v1/agents", signed_card, "application/jose"))

    def register_a2a_card(self, card_text: str) -> Agent:
        """POST /v1/agents with an A2A AgentCard's JSON (signed: a2a.sign_card)."""
        return Agent.from_json(self.request("POST", "/v1/agents", card_text, "application/a2a-card+json"))

    def a2a_card_text(self, did: str = "", form: str = "") -> str:
        """The A2A card a node serves, as text (verify it with a2a.verify_served): an agent's
        (GET /v1/agents/{did}/agent-card.json; form "registered" for the agent's own signed
        card) or, without did, the node's own (/.well-known/agent-card.json)."""
        path = "/v1/agents/" + self._did_path(did) + "/agent-card.json" if did else "/.well-known/agent-card.json"
        return self.request("GET", path, query={"form": form or None}, raw=True).decode("utf-8")

    def agent(self, did: str) -> Agent:
        return Agent.from_json(self.request("GET", "/v1/agents/" + self._did_path(did)))

    def search_agents(self, q: str = "", capability: str = "", limit: int = 0, mode: str = ""):
        """GET /v1/agents: q takes words or a sentence; mode is "hybrid" (the node's default:
        words and meaning) or "keyword" (words only)."""
        ans = self.request("GET", "/v1/agents", query={"q": q or None, "capability": capability or None, "limit": limit or None, "mode": mode or None})
        return [Agent.from_json(a) for a in ans.get("agents") or []]

    def agent_status(self, did: str) -> dict:
        return self.request("POST", "/v1/agents/" + self._did_path(did) + "/status")

    # --- stake ---

    def stake_of(self, did: str, wallet: str) -> Holding:
        return Holding.from_json(self.request("GET", "/v1/stake/" + self._did_path(did), query={"wallet": wallet}))

    # --- ERC-8183 jobs ---

    def job(self, job_id) -> Job:
        """GET /v1/jobs/{id}: a job the node lacks is a ProblemError unknown-job, whose detail
        says whether the chain has it (not indexed yet on this node)."""
        return Job.from_json(self.request("GET", "/v1/jobs/%d" % int(job_id)))

    def jobs(self, **filters):
        """GET /v1/jobs (status, client, provider, evaluator, after, limit)."""
        ans = self.request("GET", "/v1/jobs", query=filters)
        return [Job.from_json(j) for j in ans.get("jobs") or []]

    # --- bounties ---

    def bounty(self, bounty_id) -> Bounty:
        return Bounty.from_json(self.request("GET", "/v1/bounties/%d" % int(bounty_id)))

    def bounties(self, **filters):
        ans = self.request("GET", "/v1/bounties", query=filters)
        return [Bounty.from_json(b) for b in ans.get("bounties") or []]

    def put_bounty_spec(self, bounty_id, text: str):
        return self.request("PUT", "/v1/bounties/%d/spec" % int(bounty_id), text.encode(), "text/plain; charset=utf-8")

    def relay(self, raw_tx: bytes) -> dict:
        """POST /v1/tx/raw: the node sends a transaction the wallet signed (to the escrow or
        the stake registry) and answers once it is mined and indexed."""
        return self.request("POST", "/v1/tx/raw", {"rawTx": "0x" + raw_tx.hex()})

    # --- reputation and the audit log ---

    def submit_audit(self, envelope: str) -> Submitted:
        return Submitted.from_json(self.request("POST", "/v1/audits", envelope, "application/jose"))

    def reputation(self, did: str) -> Reputation:
        return Reputation.from_json(self.request("GET", "/v1/reputation/" + self._did_path(did)))

    def top_reputation(self, n: int = 20):
        return [Reputation.from_json(r) for r in self.request("GET", "/v1/reputation", query={"top": n}).get("agents") or []]

    def log_head(self) -> Head:
        return Head.from_json(self.request("GET", "/v1/log/head"))

    def checkpoint(self) -> str:
        """GET /v1/log/checkpoint: the latest head as a C2SP signed note (objects.open_checkpoint)."""
        return self.request("GET", "/v1/log/checkpoint", raw=True).decode("utf-8")

    def inclusion_proof(self, leaf_hex: str, size: int = 0) -> InclusionProof:
        return InclusionProof.from_json(self.request("GET", "/v1/log/proof/inclusion", query={"leaf": leaf_hex, "size": size or None}))

    def consistency_proof(self, first: int, second: int = 0) -> dict:
        return self.request("GET", "/v1/log/proof/consistency", query={"from": first, "to": second or None})

    # --- signed writes (envelopes to this node, on its chain) ---

    def envelope_for(self, key, body, bounty_id: int = 0, ttl: int = 300) -> str:
        """An envelope from key to this node (aud its DID, chain_id its chain, to [its DID]),
        naming bounty bounty_id when given: what the node's state-changing routes take."""
        from .jws import sign_envelope
        info = self.cached_info()
        fields = {"to": [info.node_did]}
        if bounty_id:
            fields["bounty"] = {"chain_id": info.chain.id, "escrow": info.contracts["BountyEscrow"], "id": int(bounty_id)}
        return sign_envelope(key, body, aud=info.node_did, chain_id=info.chain.id, ttl=ttl, fields=fields)

    def _signed(self, path, envelope, idempotency_key=""):
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self.request("POST", path, envelope, "application/jose", headers=headers)

    def post_bounty(self, key, body: dict, idempotency_key: str = "") -> dict:
        """POST /v1/bounties from a wallet the node holds (body: wallet, amount, arbiter,
        deadline, reviewWindow, [minStake, spec, salt, token]); answers {bounty, txHash, ...}."""
        return self._signed("/v1/bounties", self.envelope_for(key, body), idempotency_key)

    def act_on_bounty(self, key, bounty_id: int, action: str, body: dict, idempotency_key: str = "") -> dict:
        """POST /v1/bounties/{id}/{action} (claim, submit, accept, ...) from a wallet the node
        holds; the envelope names the bounty."""
        return self._signed("/v1/bounties/%d/%s" % (int(bounty_id), action), self.envelope_for(key, body, bounty_id), idempotency_key)

    def stake_from_node_wallet(self, key, wallet: str, amount: int, op: str = "stake") -> dict:
        """POST /v1/stake (op "stake") or /v1/stake/unbond (op "unbond") from a wallet the node
        holds and key's DID is bound to."""
        path = "/v1/stake" if op == "stake" else "/v1/stake/unbond"
        return self._signed(path, self.envelope_for(key, {"op": op, "wallet": wallet, "amount": str(int(amount))}))

    def withdraw_stake_from_node_wallet(self, key, wallet: str) -> dict:
        return self._signed("/v1/stake/withdraw", self.envelope_for(key, {"op": "withdraw-stake", "wallet": wallet}))

    def withdraw(self, key, wallet: str, token: str = "0x" + "00" * 20) -> dict:
        """POST /v1/withdraw: a node-held wallet's credit in the escrow."""
        return self._signed("/v1/withdraw", self.envelope_for(key, {"wallet": wallet, "token": token}))

    def operation(self, op_id: str) -> dict:
        """GET /v1/operations/{id}: a write the node carries on (Prefer: respond-async)."""
        return self.request("GET", "/v1/operations/" + urllib.parse.quote(op_id, safe=""))

    # --- groups ---

    def set_group_members(self, membership: str) -> dict:
        """POST /v1/groups/{id}/members with a membership envelope (groups.sign_membership)."""
        return self.request("POST", "/v1/groups/%s/members" % _group_of(membership), membership, "application/jose")

    def post_to_group(self, post: str) -> dict:
        """POST /v1/groups/{id}/envelopes with a post (groups.sign_post)."""
        return self.request("POST", "/v1/groups/%s/envelopes" % _group_of(post), post, "application/jose")

    def group(self, group_id: str) -> dict:
        return self.request("GET", "/v1/groups/" + urllib.parse.quote(group_id, safe=""))

    def group_envelopes(self, group_id: str, after: int = 0, limit: int = 0) -> dict:
        """A page of a thread: {envelopes, next}."""
        return self.request("GET", "/v1/groups/%s/envelopes" % urllib.parse.quote(group_id, safe=""),
                            query={"after": after or None, "limit": limit or None})

    def peers(self) -> dict:
        return self.request("GET", "/v1/peers")

    # --- the chain, through the node ---

    def rpc_url(self) -> str:
        """The node's JSON-RPC relay (POST /v1/rpc) for a wallet the agent holds."""
        return self.base + "/v1/rpc"


def _group_of(envelope: str) -> str:
    """The group_id an envelope names (read, not verified: the node verifies it)."""
    from .encoding import b64url_decode
    try:
        gid = json.loads(b64url_decode(envelope.split(".")[1]))["group_id"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ValueError("not a group envelope (no group_id)") from None
    return urllib.parse.quote(gid, safe="")


def problem_of(status, raw: bytes, content_type: str = "") -> ProblemError:
    """The ProblemError of a refused request's body."""
    try:
        p = json.loads(raw)
    except ValueError:
        p = None
    if not isinstance(p, dict):
        return ProblemError(status, title=raw[:200].decode("utf-8", "replace"))
    meta = p.get("didResolutionMetadata")
    if isinstance(meta, dict) and isinstance(meta.get("error"), dict):
        p = meta["error"]
    return ProblemError(int(p.get("status") or status), type=p.get("type") or "about:blank", title=p.get("title") or "",
                        detail=p.get("detail") or "", reason=p.get("reason") or "", instance=p.get("instance") or "", body=p)
