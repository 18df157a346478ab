"""Every parser of untrusted input, fed seeded mutations of valid objects: it accepts or
refuses with the client's own error (VerifyError, DIDError, ValueError for the encodings),
never crashes with another exception. Deterministic: a fixed seed, SURETY_FUZZ_N rounds
(default 300 per parser)."""

import json
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from helpers import vectors  # noqa: E402
from surety import eth, objects  # noqa: E402
from surety.encoding import b58decode, b64url_decode, multibase_decode  # noqa: E402
from surety.errors import DIDError, VerifyError  # noqa: E402
from surety.jws import Verifier  # noqa: E402
from surety.keys import Key, parse_did  # noqa: E402

ROUNDS = int(os.environ.get("SURETY_FUZZ_N", "300"))
ALPHABET = "ABCxyz019-_.{}[]\":,#z\x00\u00e9 "


def mutate(rng, s: str) -> str:
    s = list(s)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        i = rng.randrange(len(s) + 1)
        if op == 0 and s:
            del s[min(i, len(s) - 1)]
        elif op == 1:
            s.insert(i, rng.choice(ALPHABET))
        elif op == 2 and s:
            s[min(i, len(s) - 1)] = rng.choice(ALPHABET)
        else:
            j = rng.randrange(len(s) + 1)
            s[i:i] = s[j:j + rng.randint(1, 8)]
    return "".join(s)


def mutate_segment(rng, jws: str) -> str:
    """A compact JWS whose header or payload JSON is mutated, then re-encoded: it reaches the
    JSON and shape checks, not only base64's."""
    from surety.encoding import b64url
    parts = jws.split(".")
    i = rng.randrange(2)
    try:
        text = b64url_decode(parts[i]).decode()
    except (ValueError, UnicodeDecodeError):
        return jws
    parts[i] = b64url(mutate(rng, text).encode())
    return ".".join(parts)


ODD_VALUES = [None, True, 0, -1, 1.5, 2 ** 64, "", "x", "0x" + "ab" * 20, [], [{}], [1, "a"], {}, {"a": [None]},
              "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"]


def mutate_json(rng, value):
    """value with one member somewhere replaced by a value of another JSON type, or dropped."""
    if isinstance(value, dict) and value:
        k = rng.choice(sorted(value))
        out = dict(value)
        r = rng.random()
        if r < 0.15:
            del out[k]
        elif r < 0.5 and isinstance(value[k], (dict, list)):
            out[k] = mutate_json(rng, value[k])
        else:
            out[k] = rng.choice(ODD_VALUES)
        return out
    if isinstance(value, list) and value:
        out = list(value)
        i = rng.randrange(len(out))
        out[i] = mutate_json(rng, out[i]) if isinstance(out[i], (dict, list)) and rng.random() < 0.5 else rng.choice(ODD_VALUES)
        return out
    return rng.choice(ODD_VALUES)


class TestSignedShapesNeverCrash(unittest.TestCase):
    """Payloads of the right signer with members of the wrong JSON type: signed again, so
    they pass the signature and reach the shape checks."""

    def run_signed(self, name, key, payload, typ, parse):
        from surety.encoding import go_json
        from surety.jws import sign_compact
        rng = random.Random("surety-fuzz-shape-" + name)
        base = json.loads(payload)
        for _ in range(ROUNDS):
            doc = mutate_json(rng, base)
            raw = sign_compact(key, go_json(doc), typ)
            try:
                parse(raw)
            except (VerifyError, DIDError):
                pass
            except Exception as e:  # noqa: BLE001 - the point of the test
                self.fail("%s crashed on %s: %s: %s" % (name, json.dumps(doc)[:300], type(e).__name__, e))

    def test_shapes(self):
        from surety.jws import ENVELOPE_TYPE
        for v in vectors("jws.json"):
            key = Key(v["type"], bytes.fromhex(v["seed"]))
            if v["kind"] == "envelope":
                def parse_env(s):
                    got = Verifier(now=1764000100, started=0).verify(s)
                    objects.parse_audit(got.envelope)
                self.run_signed("envelope-" + v["type"], key, v["payload"], ENVELOPE_TYPE, parse_env)
            else:
                self.run_signed("card-" + v["type"], key, v["payload"], objects.CARD_TYPE, lambda s: objects.verify_card(s, now=1764000000))
        for v in vectors("bindings.json"):
            key = Key(v["type"], bytes.fromhex(v["seed"]))
            b = json.loads(v["binding"])

            def parse_binding(s, b=b):
                from surety.encoding import b64url_decode as dec
                st = json.loads(dec(s.split(".")[1]))
                objects.verify_binding(dict(b, statement=st, agentJws=s))
            self.run_signed("binding-" + v["type"], key, json.dumps(b["statement"]), objects.BINDING_TYPE, parse_binding)


class TestA2AShapesNeverCrash(unittest.TestCase):
    def test_shapes(self):
        from surety import a2a
        k = Key("secp256k1", bytes([3]) * 32)
        base = a2a.card_from_surety(k.did, "a", "0x" + "11" * 20, 1, updated=1764000000, capabilities=["x/y", "z"],
                                    endpoints=[{"kind": "a2a", "url": "https://a.example/a2a"}])
        rng = random.Random("surety-fuzz-a2a-shapes")
        for _ in range(ROUNDS):
            doc = mutate_json(rng, base)
            try:
                text = a2a.card_text(a2a.sign_card(k, doc))
            except VerifyError:
                continue  # the signer refuses what it cannot canonicalize
            try:
                a2a.verify_registered(text, now=1764000000)
                a2a.verify_served(text, k.did.text)
            except (VerifyError, DIDError):
                pass
            except Exception as e:  # noqa: BLE001 - the point of the test
                self.fail("a2a crashed on %s: %s: %s" % (json.dumps(doc)[:300], type(e).__name__, e))


class TestParsersNeverCrash(unittest.TestCase):
    def run_parser(self, name, seeds, parse, allowed=(VerifyError, DIDError)):
        rng = random.Random("surety-fuzz-" + name)
        for n in range(ROUNDS):
            seed = rng.choice(seeds)
            inp = mutate(rng, seed) if rng.random() < 0.5 or "." not in seed else mutate_segment(rng, seed)
            try:
                parse(inp)
            except allowed:
                pass
            except Exception as e:  # noqa: BLE001 - the point of the test
                self.fail("%s crashed on %r: %s: %s" % (name, inp[:300], type(e).__name__, e))

    def test_envelopes(self):
        seeds = [v["jws"] for v in vectors("jws.json") if v["kind"] == "envelope"]
        k = Key("ed25519", bytes(32))
        from surety.jws import sign_envelope, protected_header
        seeds.append(json.dumps({"payload": seeds[0].split(".")[1], "signatures": [{"protected": protected_header(k, "surety-envelope+jws"), "signature": "AA"}]}))
        self.run_parser("envelope", seeds, lambda s: Verifier(now=1764000100, started=0).verify(s))
        self.run_parser("audit", [sign_envelope(k, objects.audit_body("did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme", 0.5, "0x" + "ab" * 32, envelope_id="e"), now=1764000000)],
                        lambda s: objects.parse_audit(Verifier(now=1764000100, started=0).verify(s).envelope))

    def test_cards(self):
        self.run_parser("card", [v["jws"] for v in vectors("jws.json") if v["kind"] == "card"], lambda s: objects.verify_card(s, now=1764000000))

    def test_bindings(self):
        self.run_parser("binding", [v["binding"] for v in vectors("bindings.json")], objects.verify_binding)

    def test_dids(self):
        self.run_parser("did", [v["did"] for v in vectors("keys.json")] + ["did:pkh:eip155:1:0x70997970C51812dc3A010C7d01b50e0d17dc79C8"], parse_did)

    def test_heads_and_peer_bindings(self):
        k = Key("ed25519", bytes(32))
        from surety.jws import sign_compact
        head = sign_compact(k, b'{"size":4,"root":"' + b"ab" * 32 + b'","epoch":1,"closed":2}', objects.HEAD_TYPE)
        self.run_parser("head", [head], lambda s: objects.open_head(s, k.did.text))
        peer = sign_compact(k, ('{"did":"%s","peerId":"12D3KooW"}' % k.did.text).encode(), objects.PEER_BINDING_TYPE)
        self.run_parser("peer-binding", [peer], lambda s: objects.verify_peer_binding(s, k.did.text, "12D3KooW"))

    def test_a2a_cards(self):
        from surety import a2a
        k = Key("ed25519", bytes(32))
        card = a2a.card_text(a2a.sign_card(k, a2a.card_from_surety(k.did, "a", "0x" + "11" * 20, 1, updated=1764000000,
                                                                    capabilities=["x/y"], endpoints=[{"kind": "mcp", "url": "https://a.example/mcp"}])))
        self.assertEqual(a2a.verify_registered(card, now=1764000000)["did"], k.did.text)
        self.run_parser("a2a-card", [card], lambda s: a2a.verify_registered(s, now=1764000000))
        self.run_parser("a2a-served", [card], lambda s: a2a.verify_served(s, k.did.text))

    def test_checkpoints(self):
        import glob
        from helpers import REPO
        notes = []
        for f in sorted(glob.glob(os.path.join(REPO, "testdata", "conformance", "checkpoint", "*.json"))):
            with open(f) as fh:
                v = json.load(fh)
            notes.append((v["input"], v["context"]["origin"], v["context"]["node"]))
        if not notes:
            self.skipTest("no checkpoint vectors to start from")
        for note, origin, node in notes[:3]:
            self.run_parser("checkpoint", [note], lambda s, o=origin, n=node: objects.open_checkpoint(s, o, n))

    def test_credentials(self):
        import glob
        from helpers import REPO
        from surety import credentials
        seeds = []
        for f in sorted(glob.glob(os.path.join(REPO, "testdata", "conformance", "credential", "valid-*.json"))):
            with open(f) as fh:
                v = json.load(fh)
            seeds.append((v["input"], v["context"].get("status_list", "")))
        if not seeds:
            self.skipTest("no credential vectors to start from")

        def check(s, lst):
            c = credentials.verify_credential(s, now=1764000000)
            credentials.check_status(c, lst, now=1764000000)
        for cred, lst in seeds:
            self.run_parser("credential", [cred], lambda s, lst=lst: check(s, lst))
            if lst:
                self.run_parser("status-list", [lst], lambda s, cred=cred: check(cred, s))

    def test_key_files(self):
        self.run_parser("key file", [v["keyFile"] for v in vectors("keys.json")], Key.from_key_file, (ValueError,))

    def test_encodings(self):
        self.run_parser("base58", ["z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"], b58decode, (ValueError,))
        self.run_parser("multibase", ["z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"], multibase_decode, (ValueError,))
        self.run_parser("base64url", ["eyJhbGciOiJFZERTQSJ9", "AQ"], b64url_decode, (ValueError,))
        txs = [v["raw"] for v in vectors("txs.json")]
        self.run_parser("rlp", [v["rlp"] for v in vectors("rlp.json")] + txs, lambda s: eth.rlp_decode(bytes.fromhex(s)), (ValueError,))
        self.run_parser("tx", txs, lambda s: eth.decode_tx(bytes.fromhex(s)), (ValueError,))


if __name__ == "__main__":
    unittest.main()
