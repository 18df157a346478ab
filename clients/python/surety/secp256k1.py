"""secp256k1 for Ethereum: signatures with their recovery id, public key recovery, point
compression. Signing and verifying run in `cryptography` (OpenSSL, RFC 6979 deterministic
nonces, so a signature here is byte for byte the one go-ethereum's crypto.Sign makes);
`cryptography` gives no recovery id, so the point arithmetic that finds it is here, small
and in pure Python (only public values go through it)."""

import hashlib

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    Prehashed, decode_dss_signature, encode_dss_signature)
from cryptography.hazmat.primitives import hashes

from .keccak import keccak256

P = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
HALF_N = N >> 1
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def _add(p1, p2):
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    (x1, y1), (x2, y2) = p1, p2
    if x1 == x2:
        if (y1 + y2) % P == 0:
            return None
        lam = 3 * x1 * x1 * pow(2 * y1, -1, P) % P
    else:
        lam = (y2 - y1) * pow(x2 - x1, -1, P) % P
    x3 = (lam * lam - x1 - x2) % P
    return x3, (lam * (x1 - x3) - y1) % P


def _jdouble(p):
    x, y, z = p
    if y == 0 or z == 0:
        return (0, 1, 0)
    ysq = y * y % P
    s = 4 * x * ysq % P
    m = 3 * x * x % P  # a = 0
    nx = (m * m - 2 * s) % P
    ny = (m * (s - nx) - 8 * ysq * ysq) % P
    return nx, ny, 2 * y * z % P


def _jadd(p, q):
    if p[2] == 0:
        return q
    if q[2] == 0:
        return p
    x1, y1, z1 = p
    x2, y2, z2 = q
    z1s, z2s = z1 * z1 % P, z2 * z2 % P
    u1, u2 = x1 * z2s % P, x2 * z1s % P
    s1, s2 = y1 * z2s * z2 % P, y2 * z1s * z1 % P
    if u1 == u2:
        return _jdouble(p) if s1 == s2 else (0, 1, 0)
    h, r = (u2 - u1) % P, (s2 - s1) % P
    h2 = h * h % P
    h3 = h * h2 % P
    u1h2 = u1 * h2 % P
    nx = (r * r - h3 - 2 * u1h2) % P
    ny = (r * (u1h2 - nx) - s1 * h3) % P
    return nx, ny, h * z1 * z2 % P


def _mul(k, pt):
    """k * pt in Jacobian coordinates (one inversion at the end); None for infinity."""
    if pt is None or k % N == 0:
        return None
    acc, add = (0, 1, 0), (pt[0], pt[1], 1)
    for bit in bin(k % N)[2:]:
        acc = _jdouble(acc)
        if bit == "1":
            acc = _jadd(acc, add)
    if acc[2] == 0:
        return None
    zi = pow(acc[2], -1, P)
    zi2 = zi * zi % P
    return acc[0] * zi2 % P, acc[1] * zi2 * zi % P


def decompress(pub: bytes):
    """(x, y) of a 33-byte compressed or 65-byte uncompressed key; ValueError if it is not a
    point on the curve."""
    if len(pub) == 65 and pub[0] == 4:
        x, y = int.from_bytes(pub[1:33], "big"), int.from_bytes(pub[33:], "big")
    elif len(pub) == 33 and pub[0] in (2, 3):
        x = int.from_bytes(pub[1:], "big")
        if x >= P:
            raise ValueError("secp256k1 key is not a point on the curve")
        y = pow((x * x * x + 7) % P, (P + 1) // 4, P)
        if y & 1 != pub[0] & 1:
            y = P - y
    else:
        raise ValueError("secp256k1 key must be 33 (compressed) or 65 bytes")
    if x >= P or y >= P or (y * y - x * x * x - 7) % P:
        raise ValueError("secp256k1 key is not a point on the curve")
    return x, y


def compress(pt) -> bytes:
    x, y = pt
    return bytes([2 | (y & 1)]) + x.to_bytes(32, "big")


def uncompressed(pt) -> bytes:
    x, y = pt
    return b"\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big")


def address_of(pt) -> str:
    """The EIP-55 checksummed Ethereum address of a public point."""
    return checksum_address(keccak256(uncompressed(pt)[1:])[12:])


def checksum_address(addr) -> str:
    """EIP-55 mixed-case text of a 20-byte address (bytes, or hex text)."""
    if isinstance(addr, str):
        h = addr[2:] if addr[:2].lower() == "0x" else addr
        if len(h) != 40:
            raise ValueError("an address is 40 hex digits")
        addr = bytes.fromhex(h)
    if len(addr) != 20:
        raise ValueError("an address is 20 bytes")
    h = addr.hex()
    digest = keccak256(h.encode("ascii")).hex()
    return "0x" + "".join(c.upper() if c.isalpha() and int(digest[i], 16) >= 8 else c for i, c in enumerate(h))


def recover(digest: bytes, r: int, s: int, v: int):
    """The public point that signed digest with (r, s) and recovery id v (0 or 1); ValueError
    when there is none."""
    if not (0 < r < N and 0 < s < N) or v not in (0, 1):
        raise ValueError("signature out of range")
    x = r
    y = pow((x * x * x + 7) % P, (P + 1) // 4, P)
    if (y * y - x * x * x - 7) % P:
        raise ValueError("r is not an x coordinate on the curve")
    if y & 1 != v:
        y = P - y
    e = int.from_bytes(digest, "big") % N
    rinv = pow(r, -1, N)
    q = _add(_mul(s * rinv % N, (x, y)), _mul((-e * rinv) % N, G))
    if q is None:
        raise ValueError("no key recovers")
    return q


class PrivateKey:
    """A secp256k1 private key: 32 bytes, 0 < d < N."""

    def __init__(self, secret: bytes):
        if len(secret) != 32:
            raise ValueError("a secp256k1 private key is 32 bytes")
        d = int.from_bytes(secret, "big")
        if not 0 < d < N:
            raise ValueError("secp256k1 private key out of range")
        self.secret = bytes(secret)
        self._key = ec.derive_private_key(d, ec.SECP256K1())
        nums = self._key.public_key().public_numbers()
        self.point = (nums.x, nums.y)

    @classmethod
    def from_hex(cls, text: str) -> "PrivateKey":
        text = text.strip()
        return cls(bytes.fromhex(text[2:] if text[:2].lower() == "0x" else text))

    @property
    def address(self) -> str:
        return address_of(self.point)

    def public_compressed(self) -> bytes:
        return compress(self.point)

    def sign_rs(self, digest: bytes):
        """(r, s): a signature of a 32-byte digest, low S; RFC 6979 nonces where OpenSSL has
        them (3.2+), as go-ethereum's, so the same key and digest give the same bytes."""
        if len(digest) != 32:
            raise ValueError("sign a 32-byte digest")
        try:
            der = self._key.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256()), deterministic_signing=True))
        except UnsupportedAlgorithm:  # an older OpenSSL: random nonces, as valid
            der = self._key.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256())))
        r, s = decode_dss_signature(der)
        return r, (N - s if s > HALF_N else s)

    def sign_digest(self, digest: bytes):
        """(r, s, v): sign_rs with its recovery id (found by recovering the key)."""
        r, s = self.sign_rs(digest)
        for v in (0, 1):
            try:
                if recover(digest, r, s, v) == self.point:
                    return r, s, v
            except ValueError:
                continue
        raise ValueError("no recovery id fits the signature")  # cannot happen for a valid signature

    def sign_recoverable(self, digest: bytes) -> bytes:
        """r || s || v (65 bytes, v 0 or 1), as go-ethereum's crypto.Sign."""
        r, s, v = self.sign_digest(digest)
        return r.to_bytes(32, "big") + s.to_bytes(32, "big") + bytes([v])


def verify_digest(pub: bytes, digest: bytes, sig64: bytes) -> bool:
    """Checks r || s over a 32-byte digest under a compressed or uncompressed key. A high-S
    signature is taken as its low-S twin, as Surety's Go verifier takes it."""
    if len(sig64) != 64:
        return False
    r, s = int.from_bytes(sig64[:32], "big"), int.from_bytes(sig64[32:], "big")
    if not (0 < r < N and 0 < s < N):
        return False
    if s > HALF_N:
        s = N - s
    try:
        x, y = decompress(pub)
        key = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256K1()).public_key()
        key.verify(encode_dss_signature(r, s), digest, ec.ECDSA(Prehashed(hashes.SHA256())))
        return True
    except (ValueError, InvalidSignature):
        return False


def es256k_sign(key: PrivateKey, data: bytes) -> bytes:
    """ES256K (RFC 8812): r || s, low S, over SHA-256 of data (no recovery id needed)."""
    r, s = key.sign_rs(hashlib.sha256(data).digest())
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def es256k_verify(pub: bytes, data: bytes, sig: bytes) -> bool:
    return verify_digest(pub, hashlib.sha256(data).digest(), sig)
