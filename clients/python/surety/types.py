"""Typed views of the node's answers (api/wire/*.go, api/openapi.json). Each is a dataclass
built from the JSON by from_json, which keeps the whole answer in .raw so that a field this
version does not know is not lost."""

from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional


class _Wire:
    # JSON names that are not the snake case of the attribute.
    _json_names: Dict[str, str] = {}
    _nested: Dict[str, Any] = {}

    @classmethod
    def from_json(cls, d):
        if d is None:
            return None
        if not isinstance(d, dict):
            raise TypeError("%s: want a JSON object, got %r" % (cls.__name__, type(d)))
        by_json = {cls._json_names.get(f.name, _camel(f.name)): f.name for f in fields(cls) if f.name != "raw"}
        kw = {}
        for k, v in d.items():
            attr = by_json.get(k)
            if attr is None:
                continue
            sub = cls._nested.get(attr)
            if sub is not None and v is not None:
                v = [sub.from_json(x) for x in v] if isinstance(v, list) else sub.from_json(v)
            kw[attr] = v
        obj = cls(**kw)
        obj.raw = d
        return obj


def _camel(name):
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


@dataclass
class InfoChain(_Wire):
    id: int = 0
    kind: str = ""
    genesis: str = ""
    block_number: int = 0
    state_key: str = ""
    indexed_block: Optional[int] = None
    confirmations: int = 0
    min_stake: str = ""
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class Info(_Wire):
    version: str = ""
    chain: InfoChain = None
    contracts: Dict[str, str] = field(default_factory=dict)
    node_did: str = ""
    peer: Optional[dict] = None
    audit_log: Optional[dict] = None
    raw: dict = field(default_factory=dict, repr=False)
    _json_names = {"node_did": "nodeDid"}
    _nested = {"chain": InfoChain}


@dataclass
class Agent(_Wire):
    did: str = ""
    name: str = ""
    description: str = ""
    capabilities: List[str] = field(default_factory=list)
    endpoints: List[dict] = field(default_factory=list)
    wallet: str = ""
    seq: int = 0
    updated: int = 0
    jws: str = ""
    stake: str = "0"
    staked: bool = False
    score: float = 0.0
    erc8004_agent_ids: List[int] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class Holding(_Wire):
    agent_id: str = ""
    controller: str = ""
    status: str = ""
    staked: str = "0"
    locked: str = "0"
    unbonding: str = "0"
    unlock_at: int = 0
    token: str = ""
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class Bounty(_Wire):
    id: int = 0
    status: str = ""
    poster: str = ""
    worker: str = ""
    token: str = ""
    amount: str = "0"
    arbiter: str = ""
    deadline: int = 0
    review_window: int = 0
    fee_bps: int = 0
    min_stake: str = "0"
    spec_hash: str = ""
    spec: str = ""
    result_hash: str = ""
    payout: str = "0"
    fee: str = "0"
    poster_refund: str = "0"
    posted_block: int = 0
    updated_block: int = 0
    history: List[dict] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False)

    def terms(self):
        """The escrow's Terms tuple for calls after post (poster, token, amount, arbiter,
        deadline, reviewWindow, feeBps, minStake, specHash)."""
        return (self.poster, self.token, int(self.amount), self.arbiter, int(self.deadline), int(self.review_window),
                int(self.fee_bps), int(self.min_stake), self.spec_hash)

    @property
    def terminal(self):
        return self.status in ("accepted", "released", "resolved", "refunded", "cancelled")


@dataclass
class Job(_Wire):
    """An ERC-8183 job as the node's index shows it (GET /v1/jobs/{id}); surety is a Surety
    job's side in SuretyHook (plan, phase, entries, dispute, settlement, milestone parts)."""
    id: int = 0
    status: str = ""
    client: str = ""
    provider: str = ""
    evaluator: str = ""
    hook: str = ""
    expired_at: int = 0
    description: str = ""
    provider_agent_id: str = "0"
    token: str = ""
    budget: str = "0"
    deliverable: str = ""
    reason: str = ""
    rejected_by: str = ""
    payout: str = "0"
    platform_fee: str = "0"
    evaluator_fee: str = "0"
    refund: str = "0"
    created_block: int = 0
    updated_block: int = 0
    workers: List[str] = field(default_factory=list)
    surety: Optional[dict] = None
    history: List[dict] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def terminal(self):
        return self.status in ("completed", "rejected", "expired")


@dataclass
class StoredAudit(_Wire):
    auditor: str = ""
    subject: str = ""
    bounty: Optional[dict] = None
    envelope: str = ""  # the signed envelope, base64 (standard) as the node keeps it
    score: float = 0.0
    evidence: dict = field(default_factory=dict)
    time: int = 0
    leaf: str = ""
    backed: bool = False
    side: str = ""
    settled: float = 0.0
    superseded_by: Optional[str] = None
    refused: str = ""
    weight: float = 0.0  # in a reputation's feeding: what its auditor's audits of the subject add to Σ w
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class ImportedFeedback(_Wire):
    subject: str = ""
    client: str = ""
    score: float = 0.0
    time: int = 0
    settled: float = 0.0
    block: int = 0
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class Reputation(_Wire):
    did: str = ""
    score: float = 0.0
    confidence: float = 0.0
    weight: float = 0.0
    external: float = 0.0
    rank: float = 0.0
    standing: float = 0.0
    audits: int = 0
    computed: str = ""
    feeding: List[StoredAudit] = field(default_factory=list)
    imported: List[ImportedFeedback] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False)
    _nested = {"feeding": StoredAudit, "imported": ImportedFeedback}


@dataclass
class Counted(_Wire):
    weight: float = 0.0
    backing: float = 0.0
    settled: float = 0.0
    standing: float = 0.0
    stake: float = 0.0
    why: str = ""
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class Submitted(_Wire):
    audit: StoredAudit = None
    current: bool = False
    counted: Counted = None
    raw: dict = field(default_factory=dict, repr=False)
    _nested = {"audit": StoredAudit, "counted": Counted}


@dataclass
class Head(_Wire):
    size: int = 0
    root: str = ""
    epoch: int = 0
    closed: int = 0
    signed: str = ""
    anchor_tx: str = ""
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class InclusionProof(_Wire):
    leaf: str = ""
    index: int = 0
    size: int = 0
    path: List[str] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class BindingAnswer(_Wire):
    statement: dict = field(default_factory=dict)
    on_chain: bool = False
    tx_hash: str = ""
    block: int = 0
    to: Optional[str] = None
    data: str = ""
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class VerifyResponse(_Wire):
    valid: bool = False
    sender: str = ""
    signers: List[str] = field(default_factory=list)
    payload: Any = None
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class Receipt(_Wire):
    transaction_hash: str = ""
    block_number: str = "0x0"
    status: str = "0x0"
    gas_used: str = "0x0"
    logs: List[dict] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def ok(self):
        return int(self.status, 16) == 1

    @property
    def block(self):
        return int(self.block_number, 16)
