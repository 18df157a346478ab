"""W3C VC 2.0 credentials secured with JOSE (typ vc+jwt, cty vc, EdDSA by the issuing node's
Ed25519 did:key) and Bitstring Status Lists, checked as identity/vc2.go and
identity/statuslist.go check them. Refusals are VerifyError with the node's problem slugs:
credential-malformed, -bad-signature, -wrong-issuer, -expired, -not-yet-valid, -revoked,
-status."""

import base64
import binascii
import gzip
import json
import time
import zlib
from datetime import datetime

from .errors import DIDError, VerifyError
from .keys import parse_did

VC_JWT_TYPE = "vc+jwt"
VC_CONTENT_TYPE = "vc"
CREDENTIALS_V2 = "https://www.w3.org/ns/credentials/v2"
MAX_CREDENTIAL_SIZE = 64 << 10
STATUS_LIST_BITS = 1 << 17
MAX_STATUS_LIST_BYTES = 1 << 20
SKEW = 30


def _bad(slug, msg):
    return VerifyError("credential-" + slug, msg)


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _b64(seg, what):
    """base64url without padding, as Go's RawURLEncoding reads it (unused trailing bits
    allowed, any other character refused)."""
    if len(seg) % 4 == 1 or not set(seg) <= _B64URL:
        raise _bad("malformed", "%s is not base64url" % what)
    return base64.urlsafe_b64decode(seg + "=" * (-len(seg) % 4))


def _time(s, what):
    try:
        if not isinstance(s, str) or not s.endswith(("Z", "z")) and "+" not in s[10:] and "-" not in s[10:]:
            raise ValueError(s)
        return int(datetime.fromisoformat(s.replace("Z", "+00:00").replace("z", "+00:00")).timestamp())
    except ValueError:
        raise _bad("malformed", "%s: %r is not an RFC 3339 time" % (what, s)) from None


def verify_credential(raw: str, issuer: str = "", now=None, skip_window=False) -> dict:
    """The credential (its JSON) of a vc+jwt that verifies, issued by issuer when given, valid
    at now (30 s of skew)."""
    if len(raw) > MAX_CREDENTIAL_SIZE:
        raise _bad("malformed", "over %d bytes" % MAX_CREDENTIAL_SIZE)
    parts = raw.strip().split(".")
    if len(parts) != 3:
        raise _bad("malformed", "not a compact JWS (want header.payload.signature)")
    try:
        h = json.loads(_b64(parts[0], "header"))
    except (ValueError, UnicodeDecodeError):
        h = None
    if not isinstance(h, dict) or any(h.get(k) is not None and not isinstance(h[k], str) for k in ("typ", "cty", "alg", "kid")):
        raise _bad("malformed", "header is not a JOSE header")
    if h.get("typ") != VC_JWT_TYPE:
        raise _bad("malformed", "typ is %r, want %r" % (h.get("typ"), VC_JWT_TYPE))
    if h.get("cty") and h["cty"] != VC_CONTENT_TYPE:
        raise _bad("malformed", "cty is %r, want %r" % (h["cty"], VC_CONTENT_TYPE))
    if h.get("alg") != "EdDSA":
        raise _bad("malformed", "alg is %r; Surety credentials are EdDSA" % h.get("alg"))
    if h.get("crit"):
        raise _bad("malformed", "crit names extensions this verifier does not know")
    payload, sig = _b64(parts[1], "payload"), _b64(parts[2], "signature")
    try:
        c = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        c = None
    if not isinstance(c, dict) or not _shape(c):
        raise _bad("malformed", "payload is not a credential")
    ctx, types = c.get("@context") or [], c.get("type") or []
    if not ctx or ctx[0] != CREDENTIALS_V2:
        raise _bad("malformed", "@context must start with %s" % CREDENTIALS_V2)
    if "VerifiableCredential" not in types:
        raise _bad("malformed", "type must include VerifiableCredential")
    if not c.get("validFrom"):
        raise _bad("malformed", "validFrom is required")
    if not isinstance(c.get("credentialSubject"), dict):
        raise _bad("malformed", "credentialSubject must be an object")
    try:
        iss = parse_did(c.get("issuer") or "")
    except DIDError:
        iss = None
    if iss is None or iss.method != "key" or iss.key_type != "ed25519":
        raise _bad("malformed", "issuer %r is not an Ed25519 did:key" % str(c.get("issuer"))[:120])
    if h.get("kid") != iss.key_id:
        raise _bad("malformed", "kid %r is not the issuer's key" % str(h.get("kid"))[:140])
    if not iss.verify((parts[0] + "." + parts[1]).encode("ascii"), sig):
        raise _bad("bad-signature", "the signature does not verify with %s" % iss.key_id)
    if issuer and c["issuer"] != issuer:
        raise _bad("wrong-issuer", "issued by %s, want %s" % (c["issuer"], issuer))
    valid_from = _time(c["validFrom"], "validFrom")
    valid_until = None
    if c.get("validUntil"):
        valid_until = _time(c["validUntil"], "validUntil")
        if valid_until < valid_from:
            raise _bad("malformed", "validUntil is before validFrom")
    subject_id = c["credentialSubject"].get("id") if isinstance(c["credentialSubject"].get("id"), str) else ""
    if c.get("iss") and c["iss"] != c["issuer"]:
        raise _bad("malformed", "iss disagrees with issuer")
    if c.get("sub") and c["sub"] != subject_id:
        raise _bad("malformed", "sub disagrees with credentialSubject.id")
    if c.get("nbf") and c["nbf"] != valid_from:
        raise _bad("malformed", "nbf disagrees with validFrom")
    if c.get("exp") and (valid_until is None or c["exp"] != valid_until):
        raise _bad("malformed", "exp disagrees with validUntil")
    if not skip_window:
        n = int(time.time()) if now is None else int(now)
        if n + SKEW < valid_from:
            raise _bad("not-yet-valid", "validFrom %s" % c["validFrom"])
        if valid_until is not None and n - SKEW > valid_until:
            raise _bad("expired", "validUntil %s" % c["validUntil"])
    return c


def _shape(c) -> bool:
    """Whether Go's json.Unmarshal reads the payload into identity.Credential."""
    def strs(v):
        return v is None or (isinstance(v, list) and all(isinstance(x, str) for x in v))

    def int64(v):
        return v is None or (isinstance(v, int) and not isinstance(v, bool))
    st = c.get("credentialStatus")
    return (strs(c.get("@context")) and strs(c.get("type")) and all(c.get(k) is None or isinstance(c[k], str) for k in
            ("id", "issuer", "validFrom", "validUntil", "iss", "sub")) and int64(c.get("nbf")) and int64(c.get("exp")) and
            int64(c.get("iat")) and (st is None or (isinstance(st, dict) and all(st.get(k) is None or isinstance(st[k], str) for k in st))))


def decode_status_list(enc) -> bytes:
    """The bitstring of an encodedList: multibase u, base64url, gzip, at least 131072 bits."""
    if not isinstance(enc, str) or len(enc) > MAX_CREDENTIAL_SIZE:
        raise _bad("status", "encodedList is not a string under the size limit")
    if not enc.startswith("u"):
        raise _bad("status", "encodedList must start with the multibase prefix u (base64url)")
    try:
        if len(enc[1:]) % 4 == 1 or not set(enc[1:]) <= _B64URL:
            raise ValueError("not base64url")
        z = base64.urlsafe_b64decode(enc[1:] + "=" * (-len(enc[1:]) % 4))
        d = zlib.decompressobj(wbits=31)  # one gzip member
        bits = d.decompress(z, MAX_STATUS_LIST_BYTES + 1)
        if not d.eof and len(bits) <= MAX_STATUS_LIST_BYTES:
            raise ValueError("truncated gzip")
    except (ValueError, binascii.Error, zlib.error, EOFError, gzip.BadGzipFile) as e:
        raise _bad("status", "encodedList: %s" % e) from None
    if len(bits) > MAX_STATUS_LIST_BYTES:
        raise _bad("status", "the bitstring is over %d bytes" % MAX_STATUS_LIST_BYTES)
    if len(bits) < STATUS_LIST_BITS // 8:
        raise _bad("status", "the bitstring is %d bytes; at least %d" % (len(bits), STATUS_LIST_BITS // 8))
    return bits


def status_bit(bits: bytes, index: int) -> bool:
    return 0 <= index < len(bits) * 8 and bool(bits[index // 8] & (0x80 >> (index % 8)))


def verify_status_list(raw: str, issuer: str = "", now=None) -> dict:
    """{id, statusPurpose, bits (the bitstring), issuer} of a BitstringStatusListCredential."""
    c = verify_credential(raw, issuer, now)
    if "BitstringStatusListCredential" not in (c.get("type") or []):
        raise _bad("malformed", "not a BitstringStatusListCredential")
    s = c["credentialSubject"]
    return {"id": c.get("id") or "", "statusPurpose": s.get("statusPurpose"), "type": s.get("type"),
            "bits": decode_status_list(s.get("encodedList")), "issuer": c["issuer"]}


def check_status(cred: dict, status_list_jwt: str, now=None) -> str:
    """"none" for a credential without a status entry, "active" when its bit is clear in the
    list (which must verify, by the credential's issuer, at the URL it names);
    credential-revoked when set, credential-status when the list is unusable."""
    st = cred.get("credentialStatus")
    if st is None:
        return "none"
    if st.get("type") != "BitstringStatusListEntry" or st.get("statusPurpose") != "revocation":
        raise _bad("status", "credentialStatus is not a revocation BitstringStatusListEntry")
    idx = st.get("statusListIndex") or ""
    if not (isinstance(idx, str) and idx.isdigit() and idx.isascii()):
        raise _bad("status", "statusListIndex %r is not a non-negative integer" % idx)
    if not status_list_jwt:
        raise _bad("status", "no status list")
    try:
        lst = verify_credential(status_list_jwt, cred["issuer"], now)
    except VerifyError as e:
        raise _bad("status", str(e)) from None
    if "BitstringStatusListCredential" not in (lst.get("type") or []):
        raise _bad("status", "the status list is not a BitstringStatusListCredential")
    if lst.get("id") != st.get("statusListCredential"):
        raise _bad("status", "the status list is %s; the credential names %s" % (lst.get("id"), st.get("statusListCredential")))
    if lst["issuer"] != cred["issuer"]:
        raise _bad("status", "the status list is issued by another DID")
    s = lst["credentialSubject"]
    if s.get("type") != "BitstringStatusList" or s.get("statusPurpose") != "revocation":
        raise _bad("status", "the status list is not a revocation BitstringStatusList")
    bits = decode_status_list(s.get("encodedList"))
    index = int(idx)
    if index >= len(bits) * 8:
        raise _bad("status", "statusListIndex %d is past the list's %d bits" % (index, len(bits) * 8))
    if status_bit(bits, index):
        raise _bad("revoked", "bit %d of %s is set" % (index, st.get("statusListCredential")))
    return "active"
