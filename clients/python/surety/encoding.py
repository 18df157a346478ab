"""Encodings Surety's signed objects use: base58btc and multibase, unsigned varints,
base64url without padding (decoded strictly, as the Go verifier does), and JSON written
byte for byte as Go's encoding/json writes it (so that a payload signed here is the payload
Go would sign for the same object)."""

import base64
import binascii
import json

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(_B58)}


def b58encode(data: bytes) -> str:
    """Bitcoin's base58 alphabet; each leading zero byte becomes a '1'."""
    zeros = len(data) - len(data.lstrip(b"\x00"))
    n = int.from_bytes(data, "big")
    out = []
    while n:
        n, r = divmod(n, 58)
        out.append(_B58[r])
    return "1" * zeros + "".join(reversed(out))


def b58decode(s: str) -> bytes:
    """Inverse of b58encode; ValueError on a character outside the alphabet."""
    if not s:
        raise ValueError("empty base58")
    n = 0
    for c in s:
        if c not in _B58_INDEX:
            raise ValueError("not base58btc: %r" % c)
        n = n * 58 + _B58_INDEX[c]
    zeros = len(s) - len(s.lstrip("1"))
    body = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    return b"\x00" * zeros + body


def uvarint_encode(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def uvarint_decode(data: bytes):
    """(value, bytes read); ValueError when data holds no complete varint of 64 bits."""
    value = 0
    for i, b in enumerate(data[:10]):
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            if value >= 1 << 64:
                break
            return value, i + 1
    raise ValueError("no multicodec varint")


def multibase_encode(codec: int, key: bytes) -> str:
    """The base58btc multibase ('z') text of key under a multicodec prefix."""
    return "z" + b58encode(uvarint_encode(codec) + key)


def multibase_decode(mb: str):
    """(codec, key) of a base58btc multibase multicodec key."""
    if not mb or mb[0] != "z":
        raise ValueError("multibase must be base58btc ('z')")
    raw = b58decode(mb[1:])
    codec, n = uvarint_decode(raw)
    return codec, raw[n:]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(s) -> bytes:
    """Strict base64url without padding: a changed trailing character that would decode to
    the same bytes is refused, as Go's RawURLEncoding.Strict() refuses it."""
    if isinstance(s, bytes):
        s = s.decode("ascii")
    if "=" in s or len(s) % 4 == 1:
        raise ValueError("not base64url")
    for c in s:
        if not (c.isascii() and (c.isalnum() or c in "-_")):
            raise ValueError("not base64url")
    try:
        raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    except (binascii.Error, ValueError) as e:
        raise ValueError("not base64url") from e
    if b64url(raw) != s:
        raise ValueError("not base64url (non-canonical trailing bits)")
    return raw


def go_json(value) -> bytes:
    """JSON as Go's json.Marshal writes it: no spaces, UTF-8 kept, <, >, &, U+2028 and U+2029
    escaped, floats in Go's shortest form. Keys keep the order given (Go writes struct fields
    in declaration order: build dicts in that order)."""
    return _go(value).encode("utf-8")


def _go(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, str):
        s = json.dumps(v, ensure_ascii=False)
        for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
            s = s.replace(ch, esc)
        return s
    if isinstance(v, dict):
        return "{" + ",".join(_go(str(k)) + ":" + _go(x) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_go(x) for x in v) + "]"
    raise TypeError("not JSON: %r" % (v,))


def go_float(f: float) -> str:
    """A float64 as Go's encoding/json writes it."""
    if f != f or f in (float("inf"), float("-inf")):
        raise ValueError("JSON has no NaN or infinity")
    if f == 0:
        return "0"
    a = abs(f)
    r = repr(f)
    if a < 1e-6 or a >= 1e21:
        mant, _, exp = r.partition("e")
        if not exp:  # repr chose plain digits: redo in exponent form
            mant, _, exp = format(f, ".16e").partition("e")
            mant = repr(float(mant))
        if mant.endswith(".0"):
            mant = mant[:-2]
        e = int(exp)
        # Go writes e+21 and e-7 (encoding/json trims e-07's zero).
        return "%se-%d" % (mant, -e) if e < 0 else "%se+%02d" % (mant, e)
    if "e" in r:  # a small or large plain number repr wrote with an exponent
        mant, _, exp = r.partition("e")
        sign = "-" if mant.startswith("-") else ""
        mant = mant.lstrip("-")
        intpart, _, frac = mant.partition(".")
        ds = intpart + frac
        e = int(exp) - len(frac)
        if e >= 0:
            return sign + ds + "0" * e
        point = len(ds) + e
        if point > 0:
            return sign + ds[:point] + "." + ds[point:]
        return sign + "0." + "0" * (-point) + ds
    if r.endswith(".0"):
        return r[:-2]
    return r


# I-JSON (RFC 7493), as the node reads signed payloads (internal/jcs.Parse).
IJSON_MAX_DEPTH = 64


class IJSONError(ValueError):
    """A JSON text that is not I-JSON: a duplicate member, a lone surrogate, NaN or Infinity,
    nesting deeper than IJSON_MAX_DEPTH."""


def load_ijson(text: str):
    """The JSON value of text read as I-JSON: json takes the last of two members of one name
    where another reader may take the first, so a duplicate is refused, and so is a lone
    surrogate, NaN or Infinity, and nesting deeper than IJSON_MAX_DEPTH. Raises IJSONError for
    those, and json's ValueError (or RecursionError) for text that is not JSON."""
    def pairs(items):
        seen = {}
        for k, v in items:
            if k in seen:
                raise IJSONError("duplicate member %r" % k[:40])
            seen[k] = v
        return seen

    def no_constant(name):
        raise IJSONError("%s is not JSON" % name)

    v = json.loads(text, object_pairs_hook=pairs, parse_constant=no_constant)
    _check_ijson(v, 0)
    return v


def _check_ijson(v, depth):
    if depth > IJSON_MAX_DEPTH:
        raise IJSONError("nested deeper than %d" % IJSON_MAX_DEPTH)
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise IJSONError("a lone surrogate in a string") from None
    elif isinstance(v, list):
        for e in v:
            _check_ijson(e, depth + 1)
    elif isinstance(v, dict):
        for k, e in v.items():
            _check_ijson(k, depth + 1)
            _check_ijson(e, depth + 1)
