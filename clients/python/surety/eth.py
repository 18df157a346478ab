"""Ethereum encoding for the transactions an agent sends itself: RLP, the contract ABI
(static types, tuples, bytes, string), and EIP-1559 (type 2) transactions signed with the
wallet's key (the signature's recovery id is found by recovering the key: secp256k1.py)."""

from . import secp256k1
from .keccak import keccak256

# --- RLP ---------------------------------------------------------------------------------


def rlp_encode(item) -> bytes:
    """RLP of bytes, a non-negative int (big-endian, no leading zeros) or a list of them."""
    if isinstance(item, int) and not isinstance(item, bool):
        if item < 0:
            raise ValueError("RLP has no negative integers")
        item = item.to_bytes((item.bit_length() + 7) // 8, "big") if item else b""
    if isinstance(item, (bytes, bytearray)):
        item = bytes(item)
        if len(item) == 1 and item[0] < 0x80:
            return item
        return _rlp_length(len(item), 0x80) + item
    if isinstance(item, (list, tuple)):
        body = b"".join(rlp_encode(x) for x in item)
        return _rlp_length(len(body), 0xC0) + body
    raise TypeError("RLP encodes bytes, ints and lists, not %r" % type(item))


def _rlp_length(n, offset):
    if n < 56:
        return bytes([offset + n])
    ln = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([offset + 55 + len(ln)]) + ln


def rlp_decode(data: bytes):
    """Bytes or nested lists of bytes; ValueError on anything not canonical RLP."""
    item, rest = _rlp_item(bytes(data))
    if rest:
        raise ValueError("RLP: trailing bytes")
    return item


def _rlp_item(d):
    if not d:
        raise ValueError("RLP: empty input")
    b = d[0]
    if b < 0x80:
        return d[:1], d[1:]
    if b < 0xC0:
        n, start = _rlp_len(d, 0x80)
        s = d[start:start + n]
        if n == 1 and s[0] < 0x80:
            raise ValueError("RLP: non-canonical single byte")
        return s, d[start + n:]
    n, start = _rlp_len(d, 0xC0)
    body, rest, out = d[start:start + n], d[start + n:], []
    while body:
        x, body = _rlp_item(body)
        out.append(x)
    return out, rest


def _rlp_len(d, offset):
    b = d[0] - offset
    if b < 56:
        n, start = b, 1
    else:
        ll = b - 55
        if len(d) < 1 + ll or d[1] == 0:
            raise ValueError("RLP: bad length")
        n, start = int.from_bytes(d[1:1 + ll], "big"), 1 + ll
        if n < 56:
            raise ValueError("RLP: non-canonical length")
    if len(d) < start + n:
        raise ValueError("RLP: input too short")
    return n, start

# --- ABI -----------------------------------------------------------------------------------


def selector(signature: str) -> bytes:
    """The 4-byte function selector of a canonical signature such as
    "stake(bytes32,uint256)"."""
    return keccak256(signature.encode())[:4]


def _split_types(s):
    out, depth, cur = [], 0, ""
    for c in s:
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += c == "("
        depth -= c == ")"
        cur += c
    if cur:
        out.append(cur)
    return out


def _is_dynamic(t):
    if t.startswith("("):
        return any(_is_dynamic(x) for x in _split_types(t[1:-1]))
    return t in ("bytes", "string") or t.endswith("[]")


def abi_encode(types, values) -> bytes:
    """ABI encoding of values as the tuple of types (uintN, intN, address, bool, bytesN,
    bytes, string, T[], and tuples written "(t1,t2,...)")."""
    if len(types) != len(values):
        raise ValueError("%d types, %d values" % (len(types), len(values)))
    heads, tails = [], []
    head_len = sum(32 if _is_dynamic(t) else _static_size(t) for t in types)
    for t, v in zip(types, values):
        if _is_dynamic(t):
            heads.append(_u256(head_len + sum(len(x) for x in tails)))
            tails.append(_encode_one(t, v))
        else:
            heads.append(_encode_one(t, v))
    return b"".join(heads) + b"".join(tails)


def _static_size(t):
    if t.startswith("("):
        return sum(_static_size(x) for x in _split_types(t[1:-1]))
    return 32


def _u256(n):
    return int(n).to_bytes(32, "big")


def _encode_one(t, v):
    if t.startswith("("):
        inner = _split_types(t[1:-1])
        return abi_encode(inner, list(v))
    if t.endswith("[]"):
        return _u256(len(v)) + abi_encode([t[:-2]] * len(v), list(v))
    if t == "address":
        return b"\x00" * 12 + bytes.fromhex(secp256k1.checksum_address(v)[2:])
    if t == "bool":
        return _u256(1 if v else 0)
    if t.startswith("uint"):
        bits = int(t[4:] or 256)
        v = int(v)
        if not 0 <= v < 1 << bits:
            raise ValueError("%d does not fit %s" % (v, t))
        return _u256(v)
    if t.startswith("int"):
        bits = int(t[3:] or 256)
        v = int(v)
        if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
            raise ValueError("%d does not fit %s" % (v, t))
        return (v % (1 << 256)).to_bytes(32, "big")
    if t in ("bytes", "string"):
        b = v.encode() if isinstance(v, str) and t == "string" else _bytes(v)
        return _u256(len(b)) + b + b"\x00" * (-len(b) % 32)
    if t.startswith("bytes"):
        n = int(t[5:])
        b = _bytes(v)
        if len(b) != n:
            raise ValueError("%s takes %d bytes, got %d" % (t, n, len(b)))
        return b + b"\x00" * (32 - n)
    raise ValueError("ABI type %r is not supported" % t)


def _bytes(v):
    if isinstance(v, str):
        return bytes.fromhex(v[2:] if v.startswith("0x") else v)
    return bytes(v)


def encode_call(signature: str, *args) -> bytes:
    """Call data: the selector of signature and its arguments ABI-encoded."""
    name, _, rest = signature.partition("(")
    types = _split_types(rest[:-1])
    return selector(signature) + abi_encode(types, list(args))


# --- EIP-1559 transactions -----------------------------------------------------------------


def _addr(a):
    return bytes.fromhex(secp256k1.checksum_address(a)[2:]) if a else b""


def tx_fields(chain_id, nonce, max_priority_fee, max_fee, gas, to, value, data, access_list=()):
    return [int(chain_id), int(nonce), int(max_priority_fee), int(max_fee), int(gas), _addr(to), int(value), bytes(data),
            [[_addr(a), [bytes(k) for k in keys]] for a, keys in access_list]]


def signing_hash(fields) -> bytes:
    """keccak256(0x02 || rlp(fields)): what the wallet signs."""
    return keccak256(b"\x02" + rlp_encode(fields))


def sign_tx(key, *, chain_id, nonce, max_priority_fee, max_fee, gas, to, value=0, data=b"") -> bytes:
    """A signed EIP-1559 transaction (0x02 || rlp([..., yParity, r, s])), as go-ethereum's
    types.SignTx with a London signer makes it for the same key and fields."""
    fields = tx_fields(chain_id, nonce, max_priority_fee, max_fee, gas, to, value, data)
    r, s, v = key.sign_digest(signing_hash(fields))
    return b"\x02" + rlp_encode(fields + [v, r, s])


def tx_hash(raw: bytes) -> str:
    return "0x" + keccak256(raw).hex()


def decode_tx(raw: bytes) -> dict:
    """The fields of a signed type-2 transaction and its sender (recovered)."""
    if not raw or raw[0] != 2:
        raise ValueError("not an EIP-1559 transaction")
    f = rlp_decode(raw[1:])
    if not isinstance(f, list) or len(f) != 12:
        raise ValueError("an EIP-1559 transaction has 12 fields")
    n = [int.from_bytes(x, "big") for x in f[:5]]
    v, r, s = (int.from_bytes(x, "big") for x in f[9:12])
    pt = secp256k1.recover(signing_hash(f[:9]), r, s, v)
    return {"chainId": n[0], "nonce": n[1], "maxPriorityFeePerGas": n[2], "maxFeePerGas": n[3], "gas": n[4],
            "to": secp256k1.checksum_address(f[5]) if f[5] else None, "value": int.from_bytes(f[6], "big"),
            "data": f[7], "v": v, "r": r, "s": s, "from": secp256k1.address_of(pt)}
