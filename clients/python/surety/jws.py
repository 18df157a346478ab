"""Compact JWS as Surety signs it, and envelopes (identity/envelope.go, identity/verify.go).

A protected header is {"alg","kid","typ"} in that order; the signature is Ed25519 (EdDSA) or
ES256K r || s with low S over SHA-256 of the signing input. Every refusal is a VerifyError
whose slug is the problem type the node answers for it (api/errors.go)."""

import json
import os
import time

from .encoding import b64url, b64url_decode, go_json, load_ijson
from .errors import DIDError, VerifyError
from .keys import parse_key_id

ENVELOPE_TYPE = "surety-envelope+jws"
MAX_ENVELOPE_SIZE = 256 << 10
MAX_SIGNERS = 16
DEFAULT_SKEW = 30
DEFAULT_MAX_LIFETIME = 600
# MAX_NONCES bounds the (sender, nonce) pairs a Verifier remembers at once: an expired
# envelope is refused for its time, so its nonce is dropped once the bound is reached.
MAX_NONCES = 1 << 16

# The envelope reasons the node sends beside each problem slug.
_REASONS = {
    "envelope-malformed": "malformed", "envelope-unsupported-alg": "unsupported-alg",
    "envelope-bad-signature": "bad-signature", "envelope-kid-not-sender": "kid-not-sender",
    "envelope-expired": "expired", "envelope-not-yet-valid": "not-yet-valid",
    "envelope-lifetime": "lifetime-too-long", "envelope-before-start": "issued-before-start",
    "envelope-replayed": "replayed", "envelope-revoked": "revoked", "envelope-rotated": "rotated",
    "envelope-wrong-audience": "wrong-audience", "envelope-wrong-chain": "wrong-chain",
}


def refuse(slug, detail="", kid=""):
    return VerifyError(slug, detail, _REASONS.get(slug, ""), kid)


def new_nonce() -> str:
    """16 random bytes in hex: a fresh envelope nonce or id."""
    return os.urandom(16).hex()


def protected_header(key, typ) -> str:
    return b64url(go_json({"alg": key.alg, "kid": key.did.key_id, "typ": typ}))


def sign_compact(key, payload: bytes, typ: str) -> str:
    """A compact JWS of payload (used as is) by key, of type typ."""
    signing_input = protected_header(key, typ) + "." + b64url(payload)
    return signing_input + "." + b64url(key.sign(signing_input.encode("ascii")))


class Signature:
    def __init__(self, header, signing_input, sig):
        self.header, self.input, self.sig = header, signing_input, sig


def _decode(seg, what):
    try:
        return b64url_decode(seg)
    except ValueError:
        raise refuse("envelope-malformed", "%s is not base64url" % what) from None


def _header(seg):
    raw = _decode(seg, "protected header")
    try:
        h = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        h = None
    if not isinstance(h, dict):
        raise refuse("envelope-malformed", "protected header is not JSON")
    for name in ("alg", "kid", "typ"):
        if name in h and h[name] is not None and not isinstance(h[name], str):
            raise refuse("envelope-malformed", "protected header is not JSON")
    return h


def parse_compact(raw: str):
    """([Signature], payload bytes) of a compact JWS."""
    parts = raw.strip().split(".")
    if len(parts) != 3:
        raise refuse("envelope-malformed", "a compact JWS has three dot-separated parts")
    h = _header(parts[0])
    payload = _decode(parts[1], "payload")
    sig = _decode(parts[2], "signature")
    return [Signature(h, (parts[0] + "." + parts[1]).encode("ascii"), sig)], payload


def parse_json_serialization(raw: str):
    try:
        j = json.loads(raw)
    except ValueError:
        j = None
    if not isinstance(j, dict):
        raise refuse("envelope-malformed", "not a compact or JSON JWS")
    entries = j.get("signatures") or []
    if not entries and j.get("signature"):
        entries = [{"protected": j.get("protected", ""), "signature": j["signature"]}]
    payload_seg = j.get("payload") or ""
    if not entries or not payload_seg or not isinstance(entries, list) or not isinstance(payload_seg, str):
        raise refuse("envelope-malformed", "JSON JWS needs a payload and at least one signature")
    if len(entries) > MAX_SIGNERS:
        raise refuse("envelope-malformed", "more than %d signatures" % MAX_SIGNERS)
    payload = _decode(payload_seg, "payload")
    sigs = []
    for e in entries:
        if not isinstance(e, dict) or not e.get("protected") or not isinstance(e["protected"], str):
            raise refuse("envelope-malformed", "every signature needs a protected header")
        h = _header(e["protected"])
        sig = _decode(e.get("signature") or "", "signature")
        sigs.append(Signature(h, (e["protected"] + "." + payload_seg).encode("ascii"), sig))
    return sigs, payload


def check_signature(s: Signature) -> str:
    """Verifies one signature against its kid's did:key; returns the signer's DID."""
    h = s.header
    kid = h.get("kid") or ""
    if h.get("crit") or h.get("b64") is False:
        raise refuse("envelope-malformed", "critical headers are not supported", kid)
    alg = h.get("alg")
    if alg not in ("EdDSA", "ES256K"):
        raise refuse("envelope-unsupported-alg", "alg %r (use EdDSA or ES256K)" % alg, kid)
    if not kid:
        raise refuse("envelope-malformed", "protected header has no kid")
    try:
        did, frag = parse_key_id(kid)
    except DIDError as e:
        raise refuse("envelope-malformed", "kid: %s" % e, kid) from None
    if did.method != "key":
        raise refuse("envelope-malformed", "kid: only did:key keys sign", kid)
    if frag != did.fragment:
        raise refuse("envelope-malformed", "kid: fragment is not this did:key's key", kid)
    if alg != did.alg:
        raise refuse("envelope-unsupported-alg", "alg %s does not fit a %s key" % (alg, did.key_type), kid)
    if not did.verify(s.input, s.sig):
        raise refuse("envelope-bad-signature", "", kid)
    return did.text


def verify_jws(raw: str, typ: str):
    """(payload, signer DID) of a compact JWS of type typ signed by a did:key, with no
    envelope semantics (cards, bindings, heads): identity.VerifyJWS."""
    if len(raw.encode()) > MAX_ENVELOPE_SIZE:
        raise refuse("envelope-malformed", "larger than %d bytes" % MAX_ENVELOPE_SIZE)
    sigs, payload = parse_compact(raw)
    if sigs[0].header.get("typ") != typ:
        raise refuse("envelope-malformed", "typ %r, want %r" % (sigs[0].header.get("typ"), typ), sigs[0].header.get("kid", ""))
    return payload, check_signature(sigs[0])


def make_envelope(key, body=None, *, aud=None, chain_id=None, now=None, ttl=300, fields=None) -> bytes:
    """The JSON payload of an envelope from key, Go's field order (identity.Envelope): id,
    [group_id], sender, [to], [aud], [chain_id], [state], [task_desc], [bounty], [body], iat,
    exp, nonce. fields holds the optional ones (group_id, to, state, task_desc, bounty)."""
    fields = dict(fields or {})
    now = int(time.time()) if now is None else int(now)
    env = {"id": fields.pop("id", new_nonce())}
    if fields.get("group_id"):
        env["group_id"] = fields.pop("group_id")
    env["sender"] = key.did.text
    if fields.get("to"):
        env["to"] = fields.pop("to")
    if aud:
        env["aud"] = aud
    if chain_id:
        env["chain_id"] = int(chain_id)
    for name in ("state", "task_desc", "bounty"):
        if fields.get(name):
            env[name] = fields.pop(name)
    if body is not None:
        env["body"] = body
    env["iat"] = fields.pop("iat", now)
    env["exp"] = fields.pop("exp", now + ttl)
    env["nonce"] = fields.pop("nonce", new_nonce())
    env.update(fields)  # unknown fields are kept and signed
    return go_json(env)


def sign_envelope(key, body=None, **kw) -> str:
    """A compact envelope JWS (typ surety-envelope+jws) by key. A write to a node names the
    node's DID (aud) and chain (chain_id); see make_envelope for the rest."""
    return sign_compact(key, make_envelope(key, body, **kw), ENVELOPE_TYPE)


def sign_json(payload: bytes, *keys, typ: str = ENVELOPE_TYPE) -> str:
    """The general JWS JSON serialization of payload, one signature per key (the sender's
    first), as identity.SignJSON makes it: an envelope several parties sign."""
    if not keys:
        raise ValueError("sign with at least one key")
    seg = b64url(payload)
    sigs = []
    for k in keys:
        h = protected_header(k, typ)
        sigs.append({"protected": h, "signature": b64url(k.sign((h + "." + seg).encode("ascii")))})
    return json.dumps({"payload": seg, "signatures": sigs}, separators=(",", ":"))


class Verified:
    """An envelope that passed every check: the payload as a dict, the exact payload bytes,
    and the signers' kids (the sender's first)."""

    def __init__(self, envelope, payload, signers):
        self.envelope, self.payload, self.signers = envelope, payload, signers

    @property
    def sender(self):
        return self.envelope["sender"]


class Verifier:
    """Checks envelopes as a Surety node does: signatures, kid, typ, times, the replay cache,
    the chain's word on the signers' keys, and (check_audience) aud and chain_id.

    now: a clock (a function, or a fixed unix time); started: envelopes issued before it are
    refused; revoked / rotated: sets of DIDs the chain closed; seen: (sender, nonce) pairs already
    acted on."""

    def __init__(self, now=None, started=None, skew=DEFAULT_SKEW, max_lifetime=DEFAULT_MAX_LIFETIME,
                 revoked=(), rotated=(), seen=()):
        if now is None:
            self._now = lambda: int(time.time())
        elif callable(now):
            self._now = now
        else:
            self._now = lambda: int(now)
        self.started = self._now() if started is None else int(started)
        self.skew, self.max_lifetime = skew, max_lifetime
        self.revoked, self.rotated = set(revoked), set(rotated)
        # (sender, nonce) -> until when it must be remembered (its exp plus the skew); None:
        # told by the caller, kept for good.
        self._seen = {k: None for k in seen}

    def remember(self, sender: str, nonce: str):
        """Marks (sender, nonce) as used: a later envelope with them is a replay."""
        self._seen[(sender, nonce)] = None

    def verify(self, raw, *, spend=True) -> Verified:
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        if len(raw.encode()) > MAX_ENVELOPE_SIZE:
            raise refuse("envelope-malformed", "larger than %d bytes" % MAX_ENVELOPE_SIZE)
        text = raw.strip()
        sigs, payload = parse_compact(text) if text and text[0] != "{" else parse_json_serialization(text)
        signers, dids = [], []
        for s in sigs:
            did = check_signature(s)
            if s.header.get("typ") != ENVELOPE_TYPE:
                raise refuse("envelope-malformed", "typ %r, want %r" % (s.header.get("typ"), ENVELOPE_TYPE), s.header.get("kid", ""))
            signers.append(s.header["kid"])
            dids.append(did)
        try:
            env = load_ijson(payload.decode("utf-8") if isinstance(payload, bytes) else payload)
        except (ValueError, UnicodeError, RecursionError) as e:
            raise refuse("envelope-malformed", "payload is not an envelope: %s" % str(e)[:120]) from None
        if not isinstance(env, dict) or not _envelope_shape(env):
            raise refuse("envelope-malformed", "payload is not an envelope")
        _exact_members(env, ENVELOPE_MEMBERS)
        if isinstance(env.get("bounty"), dict):
            _exact_members(env["bounty"], BOUNTY_MEMBERS)
        if not (env.get("sender") and env.get("nonce") and env.get("id") and env.get("iat") and env.get("exp")):
            raise refuse("envelope-malformed", "payload needs id, sender, iat, exp and nonce")
        if env["sender"] not in dids:
            raise refuse("envelope-kid-not-sender", "sender is %s" % env["sender"][:120], signers[0])
        at = dids.index(env["sender"])
        signers[0], signers[at] = signers[at], signers[0]
        self._check_times(env, signers[0])
        for d in dids:
            if d in self.revoked:
                raise refuse("envelope-revoked", "%s was revoked on chain" % d)
            if d in self.rotated:
                raise refuse("envelope-rotated", "%s was rotated on chain" % d)
        key = (env["sender"], env["nonce"])
        if key in self._seen:
            raise refuse("envelope-replayed", "nonce " + env["nonce"][:80], signers[0])
        if spend:
            self._remember(key, env["exp"] + self.skew)
        return Verified(env, payload, signers)

    def _remember(self, key, until):
        """Keeps key until its envelope has expired; past MAX_NONCES live ones it refuses, as
        a node's full replay cache does (replay-cache-full), rather than forget one early."""
        if len(self._seen) >= MAX_NONCES:
            n = self._now()
            self._seen = {k: u for k, u in self._seen.items() if u is None or u > n}
            if len(self._seen) >= MAX_NONCES:
                raise refuse("replay-cache-full", "%d live nonces remembered" % MAX_NONCES)
        self._seen[key] = until

    def _check_times(self, e, kid):
        n, iat, exp = self._now(), e["iat"], e["exp"]
        if exp <= iat:
            raise refuse("envelope-malformed", "exp %d is not after iat %d" % (exp, iat), kid)
        if iat > n + self.skew:
            raise refuse("envelope-not-yet-valid", "iat %d is %ds ahead" % (iat, iat - n), kid)
        if exp - iat > self.max_lifetime:
            raise refuse("envelope-lifetime", "exp - iat is %ds" % (exp - iat), kid)
        if exp + self.skew <= n:
            raise refuse("envelope-expired", "exp %d passed %ds ago" % (exp, n - exp), kid)
        if iat < self.started:
            raise refuse("envelope-before-start", "retry with a fresh envelope", kid)


def check_audience(envelope: dict, aud: str, chain_id: int):
    """Refuses an envelope that does not name aud (the receiving node's DID) and chain_id:
    what a node checks on every envelope that changes state."""
    if envelope.get("aud", "") != aud:
        raise refuse("envelope-wrong-audience", "aud is %s; this node is %s" % (envelope.get("aud") or "none", aud))
    if envelope.get("chain_id", 0) != chain_id:
        raise refuse("envelope-wrong-chain", "chain_id is %s; this node is on chain %d" % (envelope.get("chain_id", 0), chain_id))


_UINT64 = 1 << 64


# An envelope's members, and its bounty reference's, as the node's Go code names them.
ENVELOPE_MEMBERS = ("id", "group_id", "sender", "to", "aud", "chain_id", "state", "task_desc", "bounty", "body", "iat", "exp", "nonce")
BOUNTY_MEMBERS = ("chain_id", "escrow", "id")


def _exact_members(obj, names):
    """Refuses a member whose name is a case variant of one the envelope defines ("AUD" beside
    "aud", "ſender" for "sender"): the node's Go decoder matches names without regard to case,
    so it would read such a member where this client would not."""
    for k in obj:
        for n in names:
            if k != n and (k.lower() == n or k.upper() == n.upper()):
                raise refuse("envelope-malformed", "payload is not an envelope: member %r is a case variant of %r: names are exact" % (k[:40], n))



def _envelope_shape(e) -> bool:
    """Whether the payload decodes as Go's identity.Envelope: the known fields' JSON types
    (Go refuses the whole payload when one is off)."""
    def is_str(v):
        return v is None or isinstance(v, str)

    def is_int(v, signed=True):
        return v is None or (isinstance(v, int) and not isinstance(v, bool) and (-(1 << 63) <= v < (1 << 63) if signed else 0 <= v < _UINT64))
    for name in ("id", "group_id", "sender", "aud", "state", "task_desc", "nonce"):
        if not is_str(e.get(name)):
            return False
    if not is_int(e.get("iat")) or not is_int(e.get("exp")) or not is_int(e.get("chain_id"), False):
        return False
    to = e.get("to")
    if to is not None and (not isinstance(to, list) or not all(isinstance(x, str) for x in to)):
        return False
    b = e.get("bounty")
    if b is not None:
        if not isinstance(b, dict) or not is_int(b.get("chain_id"), False) or not is_str(b.get("escrow")) or not is_int(b.get("id"), False):
            return False
    return True
