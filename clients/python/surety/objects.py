"""Surety's signed objects besides envelopes: Agent Cards (registry/card.go), audits
(reputation/audit.go), wallet bindings (identity/binding.go) and the audit log's signed
tree heads and Merkle proofs (reputation/verify)."""

import base64
import binascii
import hashlib
import json
import re
import time
from urllib.parse import urlparse

from . import secp256k1
from .encoding import b64url_decode, go_json
from .errors import DIDError, VerifyError
from .jws import make_envelope, new_nonce, sign_compact, verify_jws, ENVELOPE_TYPE
from .keccak import keccak256
from .keys import parse_did

# --- Agent Cards -------------------------------------------------------------------------

CARD_TYPE = "surety-card+jws"
MAX_CARD_SIZE = 16 << 10
_MAX_NAME, _MAX_DESCRIPTION, _MAX_CAPS, _MAX_CAP, _MAX_ENDPOINTS = 100, 2000, 32, 64, 8
_MAX_CARD_AHEAD = 300


def address_json(addr: str) -> str:
    """An address as go-ethereum's common.Address writes it in JSON: lowercase 0x hex."""
    return secp256k1.checksum_address(addr).lower()


def card_payload(did, name, wallet, seq, updated=None, description="", capabilities=(), endpoints=()) -> bytes:
    """A card's JSON in registry.Card's field order."""
    c = {"did": str(did), "name": name}
    if description:
        c["description"] = description
    c["capabilities"] = list(capabilities)
    if endpoints:
        c["endpoints"] = [{"kind": e["kind"], "url": e["url"]} for e in endpoints]
    c["wallet"] = address_json(wallet)
    c["seq"] = int(seq)
    c["updated"] = int(time.time()) if updated is None else int(updated)
    return go_json(c)


def sign_card(key, name, wallet, seq, **kw) -> str:
    """The card of key's DID, signed (compact JWS, typ surety-card+jws): what POST /v1/agents
    takes."""
    return sign_compact(key, card_payload(key.did, name, wallet, seq, **kw), CARD_TYPE)


def verify_card(raw: str, now=None) -> dict:
    """The card a signed card holds, checked as registry.Parse checks it: size, a signature
    by the card's own DID, shape. VerifyError slugs: card-too-large, card-forged,
    card-wrong-did, card-malformed."""
    raw = raw.strip()
    now = int(time.time()) if now is None else int(now)
    if len(raw.encode()) > MAX_CARD_SIZE:
        raise VerifyError("card-too-large", "%d bytes, at most %d" % (len(raw.encode()), MAX_CARD_SIZE))
    try:
        payload, signer = verify_jws(raw, CARD_TYPE)
    except VerifyError as e:
        raise VerifyError("card-forged" if e.slug == "envelope-bad-signature" else "card-malformed", e.detail) from None
    try:
        c = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        c = None
    if not isinstance(c, dict) or not _card_shape(c):
        raise VerifyError("card-malformed", "not a card")
    if c.get("did") != signer:
        raise VerifyError("card-wrong-did", "signed by %s" % signer)
    _validate_card(c, now)
    return c


_CAP = re.compile(r"^[a-z0-9.\-:/]{1,%d}$" % _MAX_CAP)


def _is_uint(v, bits=64):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << bits


def _card_shape(c) -> bool:
    """Whether Go's json.Unmarshal takes the payload as a registry.Card: each known member of
    its JSON type (null for the omittable ones), the wallet a 0x address."""
    strs = all(c.get(k) is None or isinstance(c.get(k), str) for k in ("did", "name", "description"))
    caps, eps, wallet, upd = c.get("capabilities"), c.get("endpoints"), c.get("wallet"), c.get("updated")
    caps_ok = caps is None or (isinstance(caps, list) and all(isinstance(x, str) for x in caps))
    eps_ok = eps is None or (isinstance(eps, list) and all(
        e is None or (isinstance(e, dict) and all(e.get(k) is None or isinstance(e.get(k), str) for k in ("kind", "url"))) for e in eps))
    wallet_ok = wallet is None or (isinstance(wallet, str) and re.fullmatch(r"0[xX][0-9a-fA-F]{40}", wallet) is not None)
    seq_ok = c.get("seq") is None or _is_uint(c.get("seq"))
    upd_ok = upd is None or (isinstance(upd, int) and not isinstance(upd, bool) and -(1 << 63) <= upd < 1 << 63)
    return strs and caps_ok and eps_ok and wallet_ok and seq_ok and upd_ok


def _validate_card(c, now):
    def bad(msg):
        raise VerifyError("card-malformed", msg)
    if not _card_shape(c):
        bad("not a card: a member of the wrong type")
    c.setdefault("seq", 0)
    c.setdefault("updated", 0)
    c.setdefault("name", "")
    eps = [e or {} for e in (c.get("endpoints") or [])]
    seq, updated, name = c.get("seq"), c.get("updated"), c.get("name")
    caps = c.get("capabilities") or []
    desc = c.get("description") or ""
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        bad("seq must be at least 1")
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME:
        bad("name must be 1 to %d characters" % _MAX_NAME)
    if not isinstance(desc, str) or len(desc) > _MAX_DESCRIPTION:
        bad("description is longer than %d characters" % _MAX_DESCRIPTION)
    if not isinstance(caps, list) or len(caps) > _MAX_CAPS:
        bad("more than %d capabilities" % _MAX_CAPS)
    if not isinstance(eps, list) or len(eps) > _MAX_ENDPOINTS:
        bad("more than %d endpoints" % _MAX_ENDPOINTS)
    if not isinstance(updated, int) or updated <= 0 or updated > now + _MAX_CARD_AHEAD:
        bad("updated must be a unix time, not in the future")
    if len(set(caps)) != len(caps):
        bad("a capability listed twice")
    for cap in caps:
        if not isinstance(cap, str) or not _CAP.match(cap):
            bad("capability %r: use 1 to %d of a-z 0-9 . - : /" % (cap, _MAX_CAP))
    for e in eps:
        if e.get("kind") not in ("a2a", "mcp", "http"):
            bad("endpoint kind: use a2a, mcp or http")
        try:
            u = urlparse(e.get("url") or "")
        except ValueError:
            bad("endpoint URL %r is not an http(s) or ws(s) URL" % e.get("url"))
        if u.scheme not in ("http", "https", "ws", "wss") or not u.netloc or len(e["url"]) > 512:
            bad("endpoint URL %r is not an http(s) or ws(s) URL" % e.get("url"))

# --- Audits --------------------------------------------------------------------------------


AUDIT_KIND = "surety.audit/1"
MAX_EVIDENCE_URI = 512


def audit_body(subject, score, evidence_hash, evidence_uri="", envelope_id="") -> dict:
    """An audit's envelope body (reputation.auditBody): kind, subject, [envelope], score,
    evidence {hash, [uri]}."""
    b = {"kind": AUDIT_KIND, "subject": str(subject)}
    if envelope_id:
        b["envelope"] = envelope_id
    b["score"] = float(score)
    ev = {"hash": evidence_hash if isinstance(evidence_hash, str) else "0x" + bytes(evidence_hash).hex()}
    if evidence_uri:
        ev["uri"] = evidence_uri
    b["evidence"] = ev
    return b


def sign_audit(key, subject, score, evidence_hash, *, bounty=None, envelope_id="", evidence_uri="", **kw) -> str:
    """An audit: an envelope whose body is an audit of subject's work on bounty
    ({"chain_id","escrow","id"}) or on the envelope envelope_id. POST /v1/audits takes it."""
    fields = dict(kw.pop("fields", {}) or {})
    if bounty is not None:
        fields["bounty"] = {"chain_id": int(bounty["chain_id"]), "escrow": bounty["escrow"], "id": int(bounty["id"])}
    body = audit_body(subject, score, evidence_hash, evidence_uri, envelope_id)
    return sign_compact(key, make_envelope(key, body, fields=fields, **kw), ENVELOPE_TYPE)


def parse_audit(envelope: dict) -> dict:
    """The audit in a verified envelope, checked as reputation.ParseAudit checks it; a
    VerifyError with slug audit-invalid says why not."""
    def bad(msg):
        raise VerifyError("audit-invalid", msg)
    b = envelope.get("body")
    if b is None:
        bad("the envelope has no body")
    if not isinstance(b, dict):
        bad("body: not an object")
    unknown = set(b) - {"kind", "subject", "envelope", "score", "evidence"}
    if unknown:
        bad("body: unknown field %r" % sorted(unknown)[0])
    for k in ("kind", "subject", "envelope"):
        if b.get(k) is not None and not isinstance(b[k], str):
            bad("body: %s is not a string" % k)
    if b.get("score") is not None and (isinstance(b["score"], bool) or not isinstance(b["score"], (int, float))):
        bad("body: score is not a number")
    if "evidence" in b and b["evidence"] is not None and not isinstance(b["evidence"], dict):
        bad("body: evidence is not an object")
    b = {k: v for k, v in b.items() if v is not None or k == "evidence"}
    if b.get("kind") != AUDIT_KIND:
        bad("body kind is %r, want %r" % (b.get("kind"), AUDIT_KIND))
    try:
        parse_did(b.get("subject") if isinstance(b.get("subject"), str) else "")
    except DIDError as e:
        bad("subject: %s" % e)
    if b["subject"] == envelope.get("sender"):
        bad("an auditor cannot audit itself")
    target_env = b.get("envelope") or ""
    bounty = envelope.get("bounty")
    if not isinstance(target_env, str):
        bad("body: envelope is not a string")
    if bounty is not None and target_env:
        bad("name a bounty or an envelope, not both")
    if bounty is None and not target_env:
        bad("name what was audited: the envelope's bounty, or an envelope id")
    if bounty is not None and not re.fullmatch(r"(0x|0X)?[0-9a-fA-F]{40}", str(bounty.get("escrow", ""))):
        bad("bounty escrow is not an address")
    if len(target_env) > 128:
        bad("envelope id longer than 128 characters")
    score = b.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
        bad("score must be a number from 0 to 1")
    if "evidence" not in b:
        bad("evidence is missing: give at least its hash")
    ev = b["evidence"] or {}
    if set(ev) - {"hash", "uri"} or any(ev.get(k) is not None and not isinstance(ev[k], str) for k in ("hash", "uri")):
        bad("evidence: not {hash, uri}")
    h = ev.get("hash") or ""
    if not re.fullmatch(r"0x[0-9a-fA-F]{64}", h):
        bad("evidence hash must be 0x and 32 bytes of hex")
    uri = ev.get("uri") or ""
    if uri:
        if len(uri) > MAX_EVIDENCE_URI:
            bad("evidence URI longer than %d characters" % MAX_EVIDENCE_URI)
        try:
            u = urlparse(uri)
        except ValueError:
            bad("evidence URI must be an http(s) URL")
        if u.scheme not in ("http", "https") or not u.netloc:
            bad("evidence URI must be an http(s) URL")
    out = {"auditor": envelope["sender"], "subject": b["subject"], "score": float(score),
           "evidence": {"hash": h.lower()}, "time": envelope["iat"]}
    if uri:
        out["evidence"]["uri"] = uri
    if bounty is not None:
        esc = str(bounty.get("escrow") or "")
        out["bounty"] = {"chain_id": bounty.get("chain_id") or 0, "escrow": secp256k1.checksum_address(esc[-40:]), "id": bounty.get("id") or 0}
    else:
        out["envelope"] = target_env
    return out

# --- Wallet bindings -------------------------------------------------------------------------


BINDING_TYPE = "surety-binding+jws"


def agent_id(did) -> bytes:
    """The id StakeRegistry keys an agent by: keccak256 of its DID."""
    return keccak256(str(did).encode())


def _u256(n):
    return int(n).to_bytes(32, "big")


def _addr32(a):
    return b"\x00" * 12 + bytes.fromhex(secp256k1.checksum_address(a)[2:])


_DOMAIN_TYPE = keccak256(b"EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
_BINDING_TYPEHASH = keccak256(b"AgentBinding(string did,bytes32 agentId,address wallet,uint256 issuedAt,string nonce)")


def binding_statement(did, wallet, chain_id, registry, issued_at=None, nonce=None) -> dict:
    """A binding statement (identity.BindingStatement) in its JSON field order."""
    return {"did": str(did), "wallet": address_json(wallet), "chainId": int(chain_id), "registry": address_json(registry),
            "iat": int(time.time()) if issued_at is None else int(issued_at), "nonce": new_nonce() if nonce is None else nonce}


def binding_digest(st: dict) -> bytes:
    """The EIP-712 digest the wallet signs: domain {name "Surety StakeRegistry", version "1",
    chainId, verifyingContract registry}, AgentBinding {did, agentId, wallet, issuedAt,
    nonce}."""
    domain = keccak256(_DOMAIN_TYPE + keccak256(b"Surety StakeRegistry") + keccak256(b"1") + _u256(st["chainId"]) + _addr32(st["registry"]))
    msg = keccak256(_BINDING_TYPEHASH + keccak256(st["did"].encode()) + agent_id(st["did"]) + _addr32(st["wallet"]) +
                    _u256(st["iat"]) + keccak256(st["nonce"].encode()))
    return keccak256(b"\x19\x01" + domain + msg)


def sign_binding(key, wallet_key, chain_id, registry, issued_at=None, nonce=None) -> dict:
    """A binding of key's DID to the wallet whose secp256k1 key is wallet_key (a
    secp256k1.PrivateKey): the agent's JWS over the statement and the wallet's EIP-712
    signature (r || s || v, v 27/28). The dict is POST /v1/bindings' body and, as JSON, the
    proof StakeRegistry.bind records."""
    st = binding_statement(key.did, wallet_key.address, chain_id, registry, issued_at, nonce)
    jws = sign_compact(key, go_json(st), BINDING_TYPE)
    r, s, v = wallet_key.sign_digest(binding_digest(st))
    sig = r.to_bytes(32, "big") + s.to_bytes(32, "big") + bytes([27 + v])
    b = {"statement": st, "agentJws": jws, "walletSignature": "0x" + sig.hex()}
    verify_binding(b)
    return b


def binding_proof(b: dict) -> bytes:
    """The binding as the bytes StakeRegistry.bind records (Go's json.Marshal of it)."""
    return go_json(b)


_ADDRESS = re.compile(r"0[xX][0-9a-fA-F]{40}")


def _statement_shape(st):
    """The statement as Go's json.Unmarshal reads it into BindingStatement (absent members
    zero), or None when a member has the wrong JSON type."""
    if not isinstance(st, dict):
        return None
    out = {"did": st.get("did") or "", "wallet": st.get("wallet") or "0x" + "00" * 20, "chainId": st.get("chainId") or 0,
           "registry": st.get("registry") or "0x" + "00" * 20, "iat": st.get("iat") or 0, "nonce": st.get("nonce") or ""}
    if not (isinstance(out["did"], str) and isinstance(out["nonce"], str) and _is_uint(out["chainId"]) and
            isinstance(out["iat"], int) and not isinstance(out["iat"], bool) and -(1 << 63) <= out["iat"] < 1 << 63 and
            isinstance(out["wallet"], str) and _ADDRESS.fullmatch(out["wallet"]) and
            isinstance(out["registry"], str) and _ADDRESS.fullmatch(out["registry"])):
        return None
    return out


def _statement_of(payload) -> dict:
    try:
        st = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    return _statement_shape(st)


def _same_statement(a, b) -> bool:
    try:
        return (a["did"] == b["did"] and a["wallet"].lower() == b["wallet"].lower() and int(a["chainId"]) == int(b["chainId"]) and
                a["registry"].lower() == b["registry"].lower() and int(a["iat"]) == int(b["iat"]) and a["nonce"] == b["nonce"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return False


def check_binding(b, chain_id: int, registry: str, revoked=()) -> dict:
    """verify_binding, then what a node checks before it records a binding: its chain and
    stake registry (wrong-registry) and that the chain has not closed the DID
    (envelope-revoked)."""
    st = verify_binding(b)
    if int(st["chainId"]) != int(chain_id) or st["registry"].lower() != address_json(registry):
        raise VerifyError("wrong-registry", "the binding is for chain %s, registry %s" % (st["chainId"], st["registry"]))
    if st["did"] in set(revoked):
        raise VerifyError("envelope-revoked", "%s was revoked on chain" % st["did"])
    return st


def verify_binding(b) -> dict:
    """Checks both halves of a binding (identity.Binding.Verify): the JWS by the statement's
    did:key over exactly the statement, and the EIP-712 signature by the statement's wallet.
    Returns the statement; VerifyError slug bad-proof (or invalid-did...) says why not."""
    if isinstance(b, (bytes, str)):
        try:
            b = json.loads(b)
        except ValueError:
            raise VerifyError("bad-proof", "not a binding") from None
    if not isinstance(b, dict) or not isinstance(b.get("statement"), dict):
        raise VerifyError("bad-proof", "not a binding")
    st = _statement_shape(b["statement"])
    if st is None or not (b.get("agentJws") is None or isinstance(b["agentJws"], str)) or \
            not (b.get("walletSignature") is None or isinstance(b["walletSignature"], str)):
        raise VerifyError("bad-proof", "not a binding: a member of the wrong type")
    try:
        did = parse_did(st.get("did", ""))
    except DIDError as e:
        raise VerifyError(e.slug, e.reason) from None
    if did.method != "key":
        raise VerifyError("bad-proof", "only a did:key agent signs a binding")
    try:
        payload, signer = verify_jws(b.get("agentJws") or "", BINDING_TYPE)
    except VerifyError as e:
        raise VerifyError("bad-proof", "agent JWS: %s" % e) from None
    if signer != did.text:
        raise VerifyError("bad-proof", "agent JWS is signed by %s, not %s" % (signer, did.text))
    signed = _statement_of(payload)
    if signed is None or not _same_statement(signed, st):
        raise VerifyError("bad-proof", "agent JWS does not sign this statement")
    ws = b.get("walletSignature") or ""
    try:
        sig = bytes.fromhex(ws[2:]) if ws.startswith("0x") else b""
    except ValueError:
        sig = b""
    if len(sig) != 65:
        raise VerifyError("bad-proof", "wallet signature is %d bytes, want 65" % len(sig))
    v = sig[64] - 27 if sig[64] >= 27 else sig[64]
    try:
        if st["iat"] < 0:
            raise ValueError("iat is negative: no uint256")
        pt = secp256k1.recover(binding_digest(st), int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:64], "big"), v)
    except (ValueError, KeyError, TypeError) as e:
        raise VerifyError("bad-proof", "wallet signature: %s" % e) from None
    got = secp256k1.address_of(pt)
    if got.lower() != st["wallet"].lower():
        raise VerifyError("bad-proof", "wallet signature is by %s, not %s" % (got, st["wallet"]))
    return st

# --- The audit log -------------------------------------------------------------------------


HEAD_TYPE = "surety-sth+jws"


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf hash: SHA-256(0x00 || data)."""
    return hashlib.sha256(b"\x00" + data).digest()


def envelope_leaf(envelope) -> bytes:
    """An audit's leaf in the log: the leaf hash of its envelope as filed, trimmed."""
    if isinstance(envelope, str):
        envelope = envelope.encode()
    return leaf_hash(envelope.strip())


def _node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_inclusion(leaf: bytes, index: int, size: int, path) -> bytes:
    """The root the RFC 9162 (2.1.3.2) inclusion path leads to from leaf at index of size
    leaves; ValueError when the path cannot be a proof for them."""
    if index < 0 or index >= size:
        raise ValueError("index %d is not below size %d" % (index, size))
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if len(p) != 32:
            raise ValueError("a path hash is 32 bytes")
        if sn == 0:
            raise ValueError("the path is too long")
        if fn & 1 or fn == sn:
            r = _node(p, r)
            if not fn & 1:
                while not (fn & 1 or fn == 0):
                    fn >>= 1
                    sn >>= 1
        else:
            r = _node(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ValueError("the path is too short")
    return r


def check_inclusion(leaf: bytes, index: int, size: int, path, root: bytes):
    """RFC 9162 inclusion check of leaf at index of size leaves under root: VerifyError
    proof-shape (a path of the wrong length, an impossible position) or proof-invalid."""
    try:
        got = root_from_inclusion(leaf, index, size, path)
    except ValueError as e:
        raise VerifyError("proof-shape", str(e)) from None
    if got != root:
        raise VerifyError("proof-invalid", "the path leads to another root")


def check_consistency(first: int, second: int, first_root: bytes, second_root: bytes, path):
    """RFC 9162 (2.1.4.2): the tree of first leaves (first_root) is a prefix of the tree of
    second leaves (second_root). VerifyError proof-shape or proof-invalid."""
    def shape(msg):
        return VerifyError("proof-shape", msg)
    if first > second:
        raise shape("from size %d to the smaller %d" % (first, second))
    if first == second:
        if path:
            raise shape("equal sizes take an empty proof")
        if first_root != second_root:
            raise VerifyError("proof-invalid", "equal sizes, different roots")
        return
    if first == 0:
        if path:
            raise shape("from the empty tree takes an empty proof")
        return
    if not path:
        raise shape("empty proof from %d to %d" % (first, second))
    path = list(path)
    if first & (first - 1) == 0:
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise shape("%d hashes, too many from %d to %d" % (len(path), first, second))
        if fn & 1 or fn == sn:
            fr, sr = _node(c, fr), _node(c, sr)
            while not (fn & 1 or fn == 0):
                fn >>= 1
                sn >>= 1
        else:
            sr = _node(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise shape("%d hashes, too few from %d to %d" % (len(path), first, second))
    if fr != first_root or sr != second_root:
        raise VerifyError("proof-invalid", "the path leads to other roots")


def verify_inclusion(leaf: bytes, proof: dict, size: int, root: bytes):
    """Checks a node's inclusion proof ({leaf, index, size, path}, hex hashes) of leaf in the
    tree of size leaves with root (from a head open_head verified). VerifyError slug
    proof-invalid otherwise."""
    def h(x):
        b = bytes.fromhex(x)
        if len(b) != 32:
            raise ValueError("not a hash")
        return b
    try:
        if proof.get("leaf") and h(proof["leaf"]) != leaf:
            raise VerifyError("proof-mismatch", "a proof of another leaf")
        if int(proof["size"]) != size:
            raise VerifyError("proof-mismatch", "a proof in the tree of size %s, not %d" % (proof["size"], size))
        index, path = int(proof["index"]), [h(p) for p in proof.get("path") or []]
    except (ValueError, KeyError, TypeError) as e:
        raise VerifyError("proof-shape", str(e)) from None
    check_inclusion(leaf, index, size, path, root)


def open_head(signed: str, node: str = "") -> dict:
    """The tree head a node signed ({size, root (bytes), epoch, closed, signer}): the compact
    JWS (typ surety-sth+jws) of GET /v1/log/head's "signed", by node's did:key when node is
    given (reputation/verify OpenHead). VerifyError slugs: wrong-type, wrong-signer,
    bad-signature, unsupported-key, malformed."""
    def bad(slug, msg):
        return VerifyError(slug, msg)
    if len(signed) > MAX_HEAD_SIZE:
        raise bad("malformed", "head larger than %d bytes" % MAX_HEAD_SIZE)
    parts = signed.strip().split(".")
    if len(parts) != 3:
        raise bad("malformed", "a compact JWS has three dot-separated parts")
    try:
        hdr = json.loads(b64url_decode(parts[0]))
        payload = b64url_decode(parts[1])
        sig = b64url_decode(parts[2])
    except (ValueError, UnicodeDecodeError):
        raise bad("malformed", "not base64url JSON") from None
    if not isinstance(hdr, dict):
        raise bad("malformed", "protected header is not an object")
    if hdr.get("crit") is not None or hdr.get("b64") is False:
        raise bad("malformed", "critical headers are not supported")
    if hdr.get("typ") != HEAD_TYPE:
        raise bad("wrong-type", "typ %r, want %r" % (hdr.get("typ"), HEAD_TYPE))
    kid = hdr.get("kid") if isinstance(hdr.get("kid"), str) else ""
    did, sep, frag = kid.partition("#")
    if not sep or frag != did[len("did:key:"):] or not did.startswith("did:key:"):
        raise bad("malformed", "kid %r is not a did:key URL" % kid[:80])
    if node and did != node:
        raise bad("wrong-signer", "the head is signed by %s, not %s" % (did[:80], node))
    try:
        key = parse_did(did)
    except DIDError as e:
        raise bad("unsupported-key" if e.slug == "unsupported-key-type" else "malformed", str(e)) from None
    if hdr.get("alg") != key.alg:
        raise bad("unsupported-key", "alg %r for a key that signs %s" % (hdr.get("alg"), key.alg))
    if not key.verify((parts[0] + "." + parts[1]).encode("ascii"), sig):
        raise bad("bad-signature", "head signed as %s" % did)
    try:
        body = json.loads(payload)
        size, root = body["size"], bytes.fromhex(body["root"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise bad("malformed", "head payload has no size or root") from None
    if not isinstance(size, int) or isinstance(size, bool) or size < 0 or len(root) != 32:
        raise bad("malformed", "head payload has no size or root")
    return {"size": size, "root": root, "epoch": body.get("epoch", 0), "closed": body.get("closed", 0), "signer": did}


MAX_HEAD_SIZE = 4 << 10

# --- Node-to-peer bindings -------------------------------------------------------------------

PEER_BINDING_TYPE = "surety-peer+jws"


def verify_peer_binding(raw: str, node: str = "", peer: str = "") -> dict:
    """The {did, peerId} a node's DID signed (GET /v1/info peer.binding), checked for node
    and peer when given. VerifyError slugs: peer-mismatch, bad-signature, unsupported-alg,
    malformed."""
    try:
        payload, signer = verify_jws(raw, PEER_BINDING_TYPE)
    except VerifyError as e:
        slug = {"envelope-bad-signature": "bad-signature", "envelope-unsupported-alg": "unsupported-alg"}.get(e.slug, "malformed")
        raise VerifyError(slug, e.detail) from None
    try:
        b = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        b = None
    if not isinstance(b, dict) or set(b) - {"did", "peerId"} or not isinstance(b.get("did"), str) or not isinstance(b.get("peerId"), str) \
            or not b["did"] or not b["peerId"]:
        raise VerifyError("malformed", "peer binding payload needs did and peerId, and nothing else")
    if b["did"] != signer:
        raise VerifyError("peer-mismatch", "it names %s but is signed by %s" % (b["did"][:120], signer))
    if node and signer != node:
        raise VerifyError("peer-mismatch", "signed by %s, not the node %s" % (signer, node[:120]))
    if peer and b["peerId"] != peer:
        raise VerifyError("peer-mismatch", "it names peer %s, not %s" % (b["peerId"][:80], peer[:80]))
    return b

# --- Checkpoints (C2SP tlog-checkpoint in a signed note) --------------------------------------

ED25519_NOTE_TYPE = b"\x01"
ES256K_NOTE_TYPE = b"\xffsurety-es256k"
MAX_CHECKPOINT_SIZE = 64 << 10
MAX_NOTE_SIGNATURES = 100


def checkpoint_origin(chain_id: int, anchor: str, node: str) -> str:
    """The origin line a node's checkpoints carry: surety.log/<chain>/<anchor lowercase>/<DID>."""
    return "surety.log/%d/%s/%s" % (chain_id, anchor.lower(), node)


def _note_key(node: str):
    """(note type, raw public key) of a node's did:key; malformed or unsupported-key."""
    try:
        d = parse_did(node)
    except DIDError as e:
        raise VerifyError("unsupported-key" if e.slug == "unsupported-key-type" else "malformed", str(e)) from None
    if d.method != "key":
        raise VerifyError("malformed", "%r is not a did:key" % node[:80])
    return (ED25519_NOTE_TYPE if d.key_type == "ed25519" else ES256K_NOTE_TYPE), d


def note_key_id(name: str, node: str) -> int:
    """The 4-byte key ID of node's key under name: SHA-256(name "\\n" type || key)."""
    typ, d = _note_key(node)
    return int.from_bytes(hashlib.sha256(name.encode() + b"\n" + typ + d.public_key).digest()[:4], "big")


def _valid_key_name(name: str) -> bool:
    return bool(name) and not any(c.isspace() or c == "+" or ord(c) < 0x20 for c in name)


def _note_bytes_ok(b: bytes):
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        raise VerifyError("malformed", "checkpoint: not UTF-8") from None
    if any(c < 0x20 and c != 0x0A for c in b):
        raise VerifyError("malformed", "checkpoint: a control character")


def parse_checkpoint(text: bytes) -> dict:
    """{origin, size, root (bytes), extensions} of a checkpoint's text (its note body)."""
    def bad(msg):
        raise VerifyError("malformed", "checkpoint: " + msg)
    _note_bytes_ok(text)
    if not text.endswith(b"\n"):
        bad("the text does not end in a newline")
    lines = text[:-1].decode().split("\n")
    if len(lines) < 3:
        bad("%d lines, want at least origin, size and root" % len(lines))
    origin, size = lines[0], lines[1]
    if not origin:
        bad("empty origin")
    if not size or not size.isdigit() or not size.isascii() or (size[0] == "0" and size != "0") or int(size) >= 1 << 64:
        bad("size %r is not a decimal without leading zeroes" % size[:30])
    try:
        root = base64.b64decode(lines[2], validate=True)
    except (ValueError, binascii.Error):
        root = b""
    if len(root) != 32 or base64.b64encode(root).decode() != lines[2]:
        bad("root %r is not 32 bytes of base64" % lines[2][:60])
    if any(e == "" for e in lines[3:]):
        bad("an empty extension line")
    return {"origin": origin, "size": int(size), "root": root, "extensions": lines[3:]}


def open_checkpoint(note, origin: str, node: str) -> dict:
    """The checkpoint a node signed (GET /v1/log/checkpoint): a signature line by node's key
    under origin must verify (reputation/verify OpenCheckpoint). VerifyError slugs:
    bad-signature, no-signature, wrong-origin, malformed, unsupported-key."""
    if isinstance(note, str):
        note = note.encode("utf-8", "surrogatepass")
    if len(note) > MAX_CHECKPOINT_SIZE:
        raise VerifyError("malformed", "checkpoint larger than %d bytes" % MAX_CHECKPOINT_SIZE)
    typ, d = _note_key(node)
    _note_bytes_ok(note)
    i = note.rfind(b"\n\n")
    if i < 0:
        raise VerifyError("malformed", "signed note: no blank line before the signatures")
    text, block = note[:i + 1], note[i + 2:]
    if not block.endswith(b"\n"):
        raise VerifyError("malformed", "signed note: no signature lines, or the last does not end in a newline")
    lines = block[:-1].decode().split("\n")
    if len(lines) > MAX_NOTE_SIGNATURES:
        raise VerifyError("malformed", "signed note: %d signatures" % len(lines))
    sigs = []
    for line in lines:
        if not line.startswith("\u2014 "):
            raise VerifyError("malformed", "signed note: a signature line does not start with an em dash and a space")
        name, sep, b64 = line[2:].partition(" ")
        if not sep or not _valid_key_name(name) or " " in b64:
            raise VerifyError("malformed", 'signed note: a signature line is not "\u2014 name signature"')
        try:
            raw = base64.b64decode(b64, validate=True)
        except (ValueError, binascii.Error):
            raw = b""
        if len(raw) < 5 or base64.b64encode(raw).decode() != b64:
            raise VerifyError("malformed", "signed note: a signature is not base64 of a key ID and a signature")
        sigs.append((name, int.from_bytes(raw[:4], "big"), raw[4:]))
    want = note_key_id(origin, node)
    verified = False
    for name, kid, sig in sigs:
        if name != origin or kid != want:
            continue
        if not d.verify(text, sig):
            raise VerifyError("bad-signature", "checkpoint signed as %s" % node)
        verified = True
    if not verified:
        raise VerifyError("no-signature", "none of %d signatures is %s's under %r" % (len(sigs), node, origin[:200]))
    c = parse_checkpoint(text)
    if c["origin"] != origin:
        raise VerifyError("wrong-origin", "origin %r, want %r" % (c["origin"][:200], origin[:200]))
    return c
