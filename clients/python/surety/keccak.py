"""Keccak-256 as Ethereum uses it (the original Keccak padding 0x01, not SHA3-256's 0x06).

Pure Python: the standard library has only SHA3, whose padding differs, and no third-party
package can be installed where this client must run.
"""

_RC = [
    0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
    0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
    0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
]
# Rotation offsets r[x][y], indexed as lane x + 5*y.
_ROT = [
    0, 1, 62, 28, 27,
    36, 44, 6, 55, 20,
    3, 10, 43, 25, 39,
    41, 45, 15, 21, 8,
    18, 2, 61, 56, 14,
]
_MASK = (1 << 64) - 1
_RATE = 136  # bytes: 1600 bits less twice the 256-bit output


def _rotl(v, n):
    return ((v << n) | (v >> (64 - n))) & _MASK if n else v


def _permute(a):
    for rc in _RC:
        # theta
        c = [a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] for x in range(5)]
        d = [c[(x - 1) % 5] ^ _rotl(c[(x + 1) % 5], 1) for x in range(5)]
        a = [a[i] ^ d[i % 5] for i in range(25)]
        # rho and pi: B[y, 2x+3y] = rot(A[x, y], r[x, y])
        b = [0] * 25
        for x in range(5):
            for y in range(5):
                b[y + 5 * ((2 * x + 3 * y) % 5)] = _rotl(a[x + 5 * y], _ROT[x + 5 * y])
        # chi
        a = [b[i] ^ ((~b[(i % 5 + 1) % 5 + 5 * (i // 5)]) & b[(i % 5 + 2) % 5 + 5 * (i // 5)]) for i in range(25)]
        # iota
        a[0] ^= rc
    return a


def keccak256(data: bytes) -> bytes:
    """The 32-byte Keccak-256 digest of data."""
    data = bytes(data)
    pad = _RATE - len(data) % _RATE
    padded = data + (b"\x01" + b"\x00" * (pad - 2) + b"\x80" if pad > 1 else b"\x81")
    state = [0] * 25
    for off in range(0, len(padded), _RATE):
        block = padded[off:off + _RATE]
        for i in range(_RATE // 8):
            state[i] ^= int.from_bytes(block[8 * i:8 * i + 8], "little")
        state = _permute(state)
    return b"".join(state[i].to_bytes(8, "little") for i in range(4))
