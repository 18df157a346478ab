"""A2A v1.0 Agent Cards as Surety signs and reads them (docs/a2a.md): the card normalized as
A2A's SDK reads it, in RFC 8785 (JCS) form, signed per A2A §8.4 (a flattened JWS with a
detached payload, protected header {alg, kid, typ "JOSE"}), with Surety's trust extension
https://surety.dev/ext/trust/v1 carrying the agent's did, wallet, seq and updated."""

import json
import time

from .encoding import IJSONError, b64url, go_float, load_ijson
from .errors import VerifyError
from .jws import check_signature, parse_compact
from .objects import address_json

TRUST_EXTENSION = "https://surety.dev/ext/trust/v1"
SIGNATURE_TYPE = "JOSE"
MAX_SIGNATURES = 4
MODES = ["text/plain", "application/json"]
_BINDINGS = {"a2a": ("JSONRPC", "1.0"), "mcp": ("MCP", ""), "http": ("HTTP", "")}

_S, _B, _STRS, _OBJ, _NESTED, _NESTEDS, _REFUSED = range(7)
_INTERFACE = {"url": (_S,), "protocolBinding": (_S,), "tenant": (_S,), "protocolVersion": (_S,),
              "protocol_binding": (_REFUSED,), "protocol_version": (_REFUSED,)}
_PROVIDER = {"url": (_S,), "organization": (_S,)}
_EXTENSION = {"uri": (_S,), "description": (_S,), "required": (_B,), "params": (_OBJ,)}
_CAPS = {"streaming": (_B,), "pushNotifications": (_B,), "extensions": (_NESTEDS, _EXTENSION), "extendedAgentCard": (_B,),
         "push_notifications": (_REFUSED,), "extended_agent_card": (_REFUSED,)}
_SKILL = {"id": (_S,), "name": (_S,), "description": (_S,), "tags": (_STRS,), "examples": (_STRS,), "inputModes": (_STRS,),
          "outputModes": (_STRS,), "securityRequirements": (_REFUSED,), "security_requirements": (_REFUSED,),
          "input_modes": (_REFUSED,), "output_modes": (_REFUSED,)}
_SIGNATURE = {"protected": (_S,), "signature": (_S,), "header": (_OBJ,)}
_CARD = {"name": (_S,), "description": (_S,), "supportedInterfaces": (_NESTEDS, _INTERFACE), "provider": (_NESTED, _PROVIDER),
         "version": (_S,), "documentationUrl": (_S,), "capabilities": (_NESTED, _CAPS), "defaultInputModes": (_STRS,),
         "defaultOutputModes": (_STRS,), "skills": (_NESTEDS, _SKILL), "signatures": (_NESTEDS, _SIGNATURE), "iconUrl": (_S,)}
for _refused in ("securitySchemes", "securityRequirements", "security_schemes", "security_requirements", "supported_interfaces",
                 "documentation_url", "default_input_modes", "default_output_modes", "icon_url"):
    _CARD[_refused] = (_REFUSED,)


def _malformed(msg):
    return VerifyError("card-malformed", msg)


def normalize(obj: dict, schema=_CARD, path="") -> dict:
    """The members A2A's SDK reads, empty ones dropped (a2a/canonical.go normalize)."""
    out = {}
    for name, v in obj.items():
        m = schema.get(name)
        if m is None or v is None:
            continue
        at, kind = path + name, m[0]
        if kind == _REFUSED:
            raise _malformed("%s is not supported in a card Surety signs or verifies" % at)
        if kind == _S:
            if not isinstance(v, str):
                raise _malformed("%s must be a string" % at)
            if v:
                out[name] = v
        elif kind == _B:
            if not isinstance(v, bool):
                raise _malformed("%s must be true or false" % at)
            if not (name == "required" and not v):
                out[name] = v
        elif kind == _STRS:
            if not isinstance(v, list) or not all(isinstance(e, str) for e in v):
                raise _malformed("%s must be a list of strings" % at)
            kept = [e for e in v if e]
            if kept:
                out[name] = kept
        elif kind == _OBJ:
            if not isinstance(v, dict):
                raise _malformed("%s must be an object" % at)
            c = _clean(v)
            if c is not None:
                out[name] = c
        elif kind == _NESTED:
            if not isinstance(v, dict):
                raise _malformed("%s must be an object" % at)
            n = normalize(v, m[1], at + ".")
            if n:
                out[name] = n
        else:
            if not isinstance(v, list):
                raise _malformed("%s must be a list" % at)
            kept = []
            for i, e in enumerate(v):
                if not isinstance(e, dict):
                    raise _malformed("%s[%d] must be an object" % (at, i))
                n = normalize(e, m[1], "%s[%d]." % (at, i))
                if n:
                    kept.append(n)
            if kept:
                out[name] = kept
    return out


def _clean(v):
    if v is None or v == "":
        return None
    if isinstance(v, list):
        out = [c for c in (_clean(e) for e in v) if c is not None]
        return out or None
    if isinstance(v, dict):
        out = {k: c for k, c in ((k, _clean(e)) for k, e in v.items()) if c is not None}
        return out or None
    return v


def jcs(v) -> bytes:
    """RFC 8785: members sorted by UTF-16 code units, no white space, ECMAScript numbers."""
    return _jcs(v).encode("utf-8")


def _jcs(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        if abs(v) > 2 ** 53:
            raise _malformed("integer %d is beyond what a JSON number (a double) holds exactly" % v)
        return str(v)
    if isinstance(v, float):
        return go_float(v)  # Go's shortest form is ECMAScript's for doubles
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(_jcs(e) for e in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _jcs(v[k]) for k in sorted(v, key=lambda k: k.encode("utf-16-be"))) + "}"
    raise TypeError("not JSON: %r" % (v,))


def canonical(card: dict) -> bytes:
    """The bytes a card's signatures sign: normalized, without signatures, in JCS form."""
    n = normalize(card)
    n.pop("signatures", None)
    return jcs(n)


def card_from_surety(did, name, wallet, seq, updated=None, description="", capabilities=(), endpoints=()) -> dict:
    """A Surety card as an A2A v1.0 AgentCard (docs/a2a.md's mapping), with the trust
    extension's agent params (did, wallet, seq, updated). Unsigned: sign_card signs it."""
    updated = int(time.time()) if updated is None else int(updated)
    skills = []
    for cap in capabilities:
        parts = cap.split("/")
        tags = [cap] + ["/".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]
        skills.append({"id": cap, "name": cap, "description": "Capability " + cap, "tags": tags})
    interfaces = []
    for e in endpoints:
        binding, version = _BINDINGS[e["kind"]]
        iface = {"url": e["url"], "protocolBinding": binding}
        if version:
            iface["protocolVersion"] = version
        interfaces.append(iface)
    return {
        "name": name,
        "description": description or "An agent registered with Surety as %s" % did,
        "supportedInterfaces": interfaces,
        "version": str(seq),
        "capabilities": {"extensions": [{"uri": TRUST_EXTENSION, "params": {
            "did": str(did), "wallet": address_json(wallet), "seq": int(seq), "updated": updated}}]},
        "defaultInputModes": list(MODES),
        "defaultOutputModes": list(MODES),
        "skills": skills,
    }


def sign_card(key, card: dict) -> dict:
    """card with key's A2A §8.4 signature appended (alg EdDSA or ES256K, kid its DID URL,
    typ JOSE, the payload the card's canonical form, detached)."""
    protected = b64url(json.dumps({"alg": key.alg, "kid": key.did.key_id, "typ": SIGNATURE_TYPE}, separators=(",", ":")).encode())
    signing_input = protected + "." + b64url(canonical(card))
    out = dict(card)
    out["signatures"] = list(card.get("signatures") or []) + [{"protected": protected, "signature": b64url(key.sign(signing_input.encode()))}]
    return out


def card_text(card: dict) -> str:
    """The card as POST /v1/agents takes it (JCS text, signatures included)."""
    return jcs(card).decode()


def trust_params(card: dict) -> dict:
    """The trust extension's params (the one entry with Surety's URI)."""
    exts = [e for e in ((card.get("capabilities") or {}).get("extensions") or []) if isinstance(e, dict) and e.get("uri") == TRUST_EXTENSION]
    if len(exts) != 1:
        raise _malformed("%d trust extensions, want one" % len(exts))
    return exts[0].get("params") or {}


AGENT_PARAMS = ("did", "wallet", "seq", "updated")
MAX_CARD_SIZE = 16 << 10


def parse_ijson(text: str):
    """The JSON value of text read as I-JSON (RFC 7493: encoding.load_ijson); card-malformed
    otherwise."""
    try:
        return load_ijson(text)
    except IJSONError as e:
        raise _malformed(str(e)) from None
    except (ValueError, RecursionError) as e:
        raise _malformed("not JSON: %s" % e) from None


def _whole(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or v > 2 ** 53 or v != int(v):
        return None
    return int(v)


_REQUIRED = ("name", "description", "version", "supportedInterfaces", "capabilities", "defaultInputModes", "defaultOutputModes")


def verify_registered(text: str, now=None) -> dict:
    """An A2A card an agent registers (POST /v1/agents with its JSON), checked as
    registry.parseA2A checks it; returns the Surety card it maps to ({did, name, description,
    wallet, seq, updated, capabilities, endpoints}) and "signer". VerifyError slugs:
    card-malformed, card-wrong-did, card-forged, card-too-large."""
    from .objects import _validate_card
    if len(text.encode("utf-8", "surrogatepass")) > MAX_CARD_SIZE:
        raise VerifyError("card-too-large", "at most %d bytes" % MAX_CARD_SIZE)
    raw = parse_ijson(text)
    if not isinstance(raw, dict):
        raise _malformed("a card is a JSON object")
    card = normalize(raw)
    for name in _REQUIRED:
        if name not in card and not (name == "capabilities" and isinstance(raw.get("capabilities"), dict)):
            raise _malformed("%s is required" % name)
    for i, iface in enumerate(card["supportedInterfaces"]):
        if not iface.get("url") or not iface.get("protocolBinding"):
            raise _malformed("supportedInterfaces[%d] needs url and protocolBinding" % i)
    for i, s in enumerate(card.get("skills") or []):
        if not (s.get("id") and s.get("name") and s.get("description") and s.get("tags")):
            raise _malformed("skills[%d] needs id, name, description and tags" % i)
    params = trust_params(card)
    # Nor a look-alike or any other extension under Surety's namespace (registry.FromA2A).
    for e in ((card.get("capabilities") or {}).get("extensions") or []):
        uri = str(e.get("uri", "")) if isinstance(e, dict) else ""
        if uri != TRUST_EXTENSION and uri.lower().startswith(("https://surety.dev", "http://surety.dev")):
            raise _malformed("extension %r: an agent's card may name only %s under surety.dev" % (uri[:80], TRUST_EXTENSION))
    extra = [k for k in params if k not in AGENT_PARAMS]
    if extra:
        raise _malformed("trust extension param %r: an agent signs only %s" % (extra[0][:40], ", ".join(AGENT_PARAMS)))
    did, wallet = params.get("did"), params.get("wallet")
    if not isinstance(did, str) or not did:
        raise _malformed("the trust extension names no did")
    if not isinstance(wallet, str) or not (len(wallet) in (40, 42) and all(c in "0123456789abcdefABCDEF" for c in wallet[-40:]) and
                                           (len(wallet) == 40 or wallet[:2] in ("0x", "0X"))):
        raise _malformed("the trust extension's wallet is not an address")
    seq, updated = _whole(params.get("seq")), _whole(params.get("updated"))
    if seq is None:
        raise _malformed("the trust extension's seq must be a whole number up to 2^53")
    if updated is None:
        raise _malformed("the trust extension's updated must be a unix time")
    from urllib.parse import urlparse
    for name, link in (("documentationUrl", card.get("documentationUrl")), ("iconUrl", card.get("iconUrl")),
                       ("provider.url", (card.get("provider") or {}).get("url"))):
        if link:
            u = urlparse(link)
            if u.scheme not in ("http", "https") or not u.netloc or len(link) > 512:
                raise _malformed("%s %r is not an http(s) URL" % (name, link[:80]))
    signer = _verify_by(card, did)
    out = {"did": did, "name": card.get("name", ""), "description": card.get("description", ""), "wallet": address_json(wallet[-40:]),
           "seq": seq, "updated": updated, "capabilities": [s.get("id", "") for s in card.get("skills") or []],
           "endpoints": [{"kind": {"MCP": "mcp", "HTTP": "http"}.get(i["protocolBinding"], "a2a"), "url": i["url"]}
                         for i in card["supportedInterfaces"]]}
    _validate_card(dict(out), int(time.time()) if now is None else int(now))
    out["signer"] = signer
    return out


def _verify_by(card, did) -> str:
    """registry's VerifyBy with its error mapping: the last failure decides."""
    sigs = card.get("signatures") or []
    if not sigs:
        raise _malformed("the card carries no signature")
    if len(sigs) > MAX_SIGNATURES:
        raise _malformed("more than %d signatures" % MAX_SIGNATURES)
    canon = canonical(card)
    last = VerifyError("card-malformed", "no signature by %s" % did)
    for s in sigs:
        compact = s.get("protected", "") + "." + b64url(canon) + "." + s.get("signature", "")
        try:
            (sig,), _ = parse_compact(compact)
            got = check_signature(sig)
            if sig.header.get("typ") != SIGNATURE_TYPE:
                raise VerifyError("envelope-malformed", "typ %r, want JOSE" % sig.header.get("typ"))
        except VerifyError as e:
            last = VerifyError("card-forged" if e.slug == "envelope-bad-signature" else "card-malformed", str(e))
            continue
        if got == did:
            return got
        last = VerifyError("card-wrong-did", "signed by %s" % got)
    raise last


def verify_served(text: str, node: str) -> dict:
    """A card a node serves (GET /v1/agents/{did}/agent-card.json, or its own card): valid
    when a signature by node's DID verifies over it. Returns {signer, did (the trust
    extension's, when there is one), card}."""
    raw = parse_ijson(text)
    if not isinstance(raw, dict):
        raise _malformed("a card is a JSON object")
    card = normalize(raw)
    signer = _verify_by(card, node)
    try:
        did = trust_params(card).get("did", "")
    except VerifyError:
        did = ""
    return {"signer": signer, "did": did, "card": card}
