"""Agent keys and their did:key DIDs (Ed25519: multicodec 0xed; secp256k1: 0xe7, the
compressed key), and key files in the Go CLI's format: a private JWK whose kid is the DID URL
(identity/keys.go MarshalKeyFile)."""

import json
import os

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.hazmat.primitives import serialization

from . import secp256k1
from .encoding import b64url, b64url_decode, multibase_decode, multibase_encode
from .errors import DIDError

ED25519 = "ed25519"
SECP256K1 = "secp256k1"
CODEC_ED25519 = 0xED
CODEC_SECP256K1 = 0xE7
MAX_DID_LENGTH = 512
# Other multicodec public key types: a did:key of one is well formed, just unsupported.
_OTHER_KEY_CODECS = {0xE8, 0xEB, 0xEC, 0x1200, 0x1201, 0x1202, 0x1203, 0x1204, 0x1205, 0x1206}
_RAW = serialization.Encoding.Raw


class DID:
    """A parsed did:key (key_type, public_key) or did:pkh:eip155 (chain_id, address)."""

    def __init__(self, text, method, key_type=None, public_key=None, chain_id=None, address=None):
        self.text, self.method = text, method
        self.key_type, self.public_key = key_type, public_key
        self.chain_id, self.address = chain_id, address

    def __str__(self):
        return self.text

    def __repr__(self):
        return "DID(%r)" % self.text

    def __eq__(self, other):
        return isinstance(other, DID) and other.text == self.text

    def __hash__(self):
        return hash(self.text)

    @property
    def fragment(self):
        return self.text[len("did:key:"):] if self.method == "key" else "blockchainAccountId"

    @property
    def key_id(self):
        """The DID URL of the DID's verification method: an envelope's kid."""
        return self.text + "#" + self.fragment

    @property
    def alg(self):
        return "ES256K" if self.key_type == SECP256K1 else "EdDSA"

    def jwk(self):
        """The public JWK (kty, crv, x[, y])."""
        if self.key_type == ED25519:
            return {"kty": "OKP", "crv": "Ed25519", "x": b64url(self.public_key)}
        if self.key_type == SECP256K1:
            raw = secp256k1.uncompressed(secp256k1.decompress(self.public_key))
            return {"kty": "EC", "crv": "secp256k1", "x": b64url(raw[1:33]), "y": b64url(raw[33:])}
        raise DIDError(self.text, "a did:pkh has no key", "unsupported-key-type")

    def verify(self, data: bytes, sig: bytes) -> bool:
        """Checks a JWS signature (EdDSA, or ES256K r || s) by this did:key over data."""
        if self.key_type == ED25519:
            try:
                ed25519.Ed25519PublicKey.from_public_bytes(self.public_key).verify(sig, data)
                return True
            except (InvalidSignature, ValueError):
                return False
        if self.key_type == SECP256K1:
            return secp256k1.es256k_verify(self.public_key, data, sig)
        return False


def parse_did(s: str) -> DID:
    """Parses a did:key (Ed25519 or secp256k1) or did:pkh:eip155 DID, as identity.ParseDID
    does; DIDError says what is wrong."""
    def bad(reason, kind="invalid-did"):
        raise DIDError(s, reason, kind)
    if not isinstance(s, str):
        bad("not a string")
    if len(s) > MAX_DID_LENGTH:
        bad("longer than %d characters" % MAX_DID_LENGTH)
    if not s.startswith("did:"):
        bad('must start with "did:"')
    method, sep, ident = s[4:].partition(":")
    if not sep or not method or not ident:
        bad("must be did:<method>:<id>")
    if any(not ("a" <= c <= "z" or "0" <= c <= "9") for c in method):
        bad("method %r must be lowercase letters and digits" % method)
    if any(c in ident for c in "#?/"):
        bad("a DID has no path, query or fragment (that is a DID URL)")
    if method == "key":
        try:
            codec, key = multibase_decode(ident)
        except ValueError as e:
            bad(str(e))
        if codec == CODEC_ED25519:
            if len(key) != 32:
                bad("Ed25519 key is %d bytes, want 32" % len(key))
            if not _ed25519_on_curve(key):
                bad("Ed25519 key is not a point on the curve")
            return DID(s, "key", ED25519, key)
        if codec == CODEC_SECP256K1:
            if len(key) != 33:
                bad("secp256k1 key is %d bytes, want 33 (compressed)" % len(key))
            try:
                secp256k1.decompress(key)
            except ValueError:
                bad("secp256k1 key is not a point on the curve")
            return DID(s, "key", SECP256K1, key)
        if codec in _OTHER_KEY_CODECS:
            bad("multicodec 0x%x is a key type Surety does not support" % codec, "unsupported-key-type")
        bad("multicodec 0x%x is not a public key type" % codec)
    if method == "pkh":
        parts = ident.split(":")
        if len(parts) != 3:
            bad("must be did:pkh:eip155:<chainId>:<address>")
        if parts[0] != "eip155":
            bad("namespace %r is not supported (use eip155)" % parts[0], "unsupported-did-method")
        if not parts[1].isdigit() or parts[1][0] == "0" or not parts[1].isascii():
            bad("chain id %r must be a positive decimal number" % parts[1])
        addr = parts[2]
        if len(addr) != 42 or not addr.startswith("0x") or any(c not in "0123456789abcdefABCDEF" for c in addr[2:]):
            bad("address %r must be 0x and 40 hex digits" % addr)
        if addr != addr.lower() and addr != secp256k1.checksum_address(addr):
            bad("address %r has a wrong EIP-55 checksum" % addr)
        return DID(s, "pkh", chain_id=int(parts[1]), address=secp256k1.checksum_address(addr))
    bad("method %r is not supported (use did:key or did:pkh)" % method, "unsupported-did-method")


def parse_key_id(kid: str):
    """(DID, fragment) of a DID URL such as an envelope's kid."""
    base, sep, frag = kid.partition("#")
    if not sep or not frag:
        raise DIDError(kid, "a key id is a DID URL with a #fragment")
    return parse_did(base), frag


def _ed25519_on_curve(key: bytes) -> bool:
    # RFC 8032 point decoding: y < p and x recoverable.
    p = 2 ** 255 - 19
    d = -121665 * pow(121666, -1, p) % p
    y = int.from_bytes(key, "little") & ((1 << 255) - 1)
    sign = key[31] >> 7
    if y >= p:
        return False
    u, v = (y * y - 1) % p, (d * y * y + 1) % p
    x2 = u * pow(v, -1, p) % p
    if x2 == 0:
        return sign == 0
    x = pow(x2, (p + 3) // 8, p)
    if (x * x - x2) % p:
        x = x * pow(2, (p - 1) // 4, p) % p
    return (x * x - x2) % p == 0


def key_did(key_type: str, pub: bytes) -> DID:
    """The did:key of a public key (Ed25519: 32 raw bytes; secp256k1: 33 or 65 bytes)."""
    if key_type == ED25519:
        return parse_did("did:key:" + multibase_encode(CODEC_ED25519, pub))
    if key_type == SECP256K1:
        return parse_did("did:key:" + multibase_encode(CODEC_SECP256K1, secp256k1.compress(secp256k1.decompress(pub))))
    raise DIDError(repr(key_type), "use ed25519 or secp256k1", "unsupported-key-type")


def pkh_did(chain_id: int, address: str) -> str:
    return "did:pkh:eip155:%d:%s" % (chain_id, secp256k1.checksum_address(address))


class Key:
    """An agent's private key and the did:key it controls."""

    def __init__(self, key_type: str, seed: bytes):
        if len(seed) != 32:
            raise ValueError("a seed is 32 bytes")
        self.type = key_type
        self.seed = bytes(seed)
        if key_type == ED25519:
            self._ed = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
            pub = self._ed.public_key().public_bytes(_RAW, serialization.PublicFormat.Raw)
        elif key_type == SECP256K1:
            self._k1 = secp256k1.PrivateKey(seed)
            pub = self._k1.public_compressed()
        else:
            raise ValueError("key type %r: use ed25519 or secp256k1" % key_type)
        self.did = key_did(key_type, pub)

    @classmethod
    def generate(cls, key_type: str = ED25519) -> "Key":
        while True:
            try:
                return cls(key_type, os.urandom(32))
            except ValueError:  # a secp256k1 scalar out of range: about 2^-128
                continue

    @property
    def alg(self):
        return self.did.alg

    def sign(self, data: bytes) -> bytes:
        """The JWS signature of data: Ed25519 (64 bytes) or ES256K r || s, low S."""
        if self.type == ED25519:
            return self._ed.sign(data)
        return secp256k1.es256k_sign(self._k1, data)

    def key_file(self) -> bytes:
        """The private JWK the Go CLI writes ('surety did new'): kty, crv, d, x, [y,] kid, as
        indented JSON with a final newline. Secret: write it with mode 0600."""
        jwk = self.did.jwk()
        out = {"kty": jwk["kty"], "crv": jwk["crv"], "d": b64url(self.seed), "x": jwk["x"]}
        if "y" in jwk:
            out["y"] = jwk["y"]
        out["kid"] = self.did.key_id
        return (json.dumps(out, indent=2) + "\n").encode()

    @classmethod
    def from_key_file(cls, data) -> "Key":
        """Reads a private JWK (the Go CLI's key file, or any Ed25519/secp256k1 private JWK);
        its public parts and kid, when present, must match."""
        try:
            f = json.loads(data)
        except ValueError as e:
            raise ValueError("bad key file: not a JSON Web Key: %s" % e) from None
        if not isinstance(f, dict):
            raise ValueError("bad key file: not a JSON Web Key")
        if f.get("kty") == "OKP" and f.get("crv") == "Ed25519":
            t = ED25519
        elif f.get("kty") == "EC" and f.get("crv") == "secp256k1":
            t = SECP256K1
        else:
            raise ValueError("bad key file: kty %r crv %r is not an Ed25519 or secp256k1 key" % (f.get("kty"), f.get("crv")))
        try:
            seed = b64url_decode(f.get("d", ""))
        except ValueError:
            seed = b""
        if len(seed) != 32:
            raise ValueError('bad key file: "d" must be 32 bytes of base64url')
        k = cls(t, seed)
        if f.get("x"):
            jwk = k.did.jwk()
            if jwk["x"] != f["x"] or jwk.get("y", "") != f.get("y", ""):
                raise ValueError("bad key file: public key does not match the private key")
        if f.get("kid") and f["kid"] not in (k.did.key_id, k.did.text):
            raise ValueError("bad key file: kid %r is not this key's DID" % f["kid"])
        return k

    @classmethod
    def load(cls, path) -> "Key":
        with open(path, "rb") as fh:
            return cls.from_key_file(fh.read())

    def save(self, path):
        """Writes the key file with mode 0600, never over an existing file."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(self.key_file())
