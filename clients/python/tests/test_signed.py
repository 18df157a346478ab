"""The attacks on each signed object, as tests: a forged signature, a tampered byte, the
wrong audience or chain, a replay, an expired or revoked signer, the wrong typ, size limits.
Each names the problem type the node answers for it."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from surety import objects, secp256k1  # noqa: E402
from surety.encoding import b64url, b64url_decode, go_json  # noqa: E402
from surety.errors import VerifyError  # noqa: E402
from surety.jws import ENVELOPE_TYPE, Verifier, check_audience, sign_compact, sign_envelope  # noqa: E402
from surety.keys import ED25519, SECP256K1, Key, parse_did  # noqa: E402

NOW = 1764000000
NODE = "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"
ALICE = Key(ED25519, bytes(range(32)))
BOB = Key(SECP256K1, bytes(range(1, 33)))


def refused(test, slug, fn, *args, **kw):
    with test.assertRaises(VerifyError) as cm:
        fn(*args, **kw)
    test.assertEqual(cm.exception.slug, slug, str(cm.exception))
    return cm.exception


def flip(jws, part, index=-3):
    """jws with one character of a segment changed (a tampered byte)."""
    segs = jws.split(".")
    raw = bytearray(b64url_decode(segs[part]))
    raw[index] ^= 1
    segs[part] = b64url(bytes(raw))
    return ".".join(segs)


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def noncanonical(jws):
    """jws with its signature's last character changed in the bits base64url leaves over
    (a 64-byte signature has 4): the same bytes under a lax decoder, refused by a strict one."""
    last = jws[-1]
    return jws[:-1] + _B64[_B64.index(last) ^ 1]


class TestEnvelopes(unittest.TestCase):
    def env(self, key=ALICE, **kw):
        kw.setdefault("aud", NODE)
        kw.setdefault("chain_id", 31337)
        kw.setdefault("now", NOW - 10)
        return sign_envelope(key, {"text": "hello"}, **kw)

    def verifier(self, **kw):
        return Verifier(now=NOW, started=0, **kw)

    def test_valid_both_algorithms(self):
        for k in (ALICE, BOB):
            got = self.verifier().verify(self.env(k))
            check_audience(got.envelope, NODE, 31337)
            self.assertEqual(got.sender, k.did.text)
            self.assertEqual(got.signers, [k.did.key_id])

    def test_attacks(self):
        v = self.verifier
        good = self.env()
        other = Key(ED25519, bytes([9]) * 32)
        cases = [
            ("tampered payload", "envelope-bad-signature", lambda: v().verify(flip(good, 1))),
            ("forged signature", "envelope-bad-signature", lambda: v().verify(flip(good, 2))),
            ("forged ES256K", "envelope-bad-signature", lambda: v().verify(flip(self.env(BOB), 2))),
            ("expired", "envelope-expired", lambda: v().verify(self.env(now=NOW - 400))),
            ("not yet valid", "envelope-not-yet-valid", lambda: v().verify(self.env(now=NOW + 60))),
            ("too long", "envelope-lifetime", lambda: v().verify(self.env(ttl=601))),
            ("before start", "envelope-before-start", lambda: Verifier(now=NOW, started=NOW).verify(good)),
            ("revoked signer", "envelope-revoked", lambda: v(revoked=[ALICE.did.text]).verify(good)),
            ("rotated signer", "envelope-rotated", lambda: v(rotated=[ALICE.did.text]).verify(good)),
            ("wrong typ", "envelope-malformed", lambda: v().verify(sign_compact(ALICE, b64url_decode(good.split(".")[1]), "surety-card+jws"))),
            ("kid not sender", "envelope-kid-not-sender", lambda: v().verify(sign_compact(other, b64url_decode(good.split(".")[1]), ENVELOPE_TYPE))),
            ("too large", "envelope-malformed", lambda: v().verify("a" * ((256 << 10) + 1))),
            ("unsupported alg", "envelope-unsupported-alg", lambda: v().verify(self.with_header(good, alg="HS256"))),
            ("alg of the other curve", "envelope-unsupported-alg", lambda: v().verify(self.with_header(good, alg="ES256K"))),
            ("crit header", "envelope-malformed", lambda: v().verify(self.with_header(good, crit=["b64"]))),
            ("two dots only", "envelope-malformed", lambda: v().verify(good + ".x")),
            ("non-canonical base64", "envelope-malformed", lambda: v().verify(noncanonical(good))),
        ]
        for name, slug, fn in cases:
            with self.subTest(name):
                refused(self, slug, fn)

    def with_header(self, jws, **changes):
        h = json.loads(b64url_decode(jws.split(".")[0]))
        h.update(changes)
        return b64url(go_json(h)) + "." + ".".join(jws.split(".")[1:])

    def test_replay(self):
        v = self.verifier()
        good = self.env()
        v.verify(good)
        e = refused(self, "envelope-replayed", v.verify, good)
        self.assertEqual(e.reason, "replayed")
        # check without spending: the nonce stays usable.
        v2 = self.verifier()
        v2.verify(good, spend=False)
        v2.verify(good)

    def test_replay_cache_is_bounded(self):
        from surety import jws
        clock = [NOW]
        v = Verifier(now=lambda: clock[0], started=0)
        old = jws.MAX_NONCES
        jws.MAX_NONCES = 3
        try:
            for i in range(3):
                v.verify(self.env(now=NOW - 10, fields={"nonce": "n%d" % i}))
            refused(self, "replay-cache-full", v.verify, self.env(now=NOW - 10, fields={"nonce": "n3"}))
            clock[0] = NOW + 400  # the three have expired: forgotten, and a fresh one is taken
            v.verify(self.env(now=NOW + 390, fields={"nonce": "n4"}))
            refused(self, "envelope-replayed", v.verify, self.env(now=NOW + 390, fields={"nonce": "n4"}))
        finally:
            jws.MAX_NONCES = old

    def test_audience_and_chain(self):
        for name, slug, kw in [("other node", "envelope-wrong-audience", {"aud": "did:key:z6MksEkH9ze4yGNuZbLHTRBtWU37FmXf9Me4R9DQMMvAiQsF"}),
                               ("no audience", "envelope-wrong-audience", {"aud": None}),
                               ("other chain", "envelope-wrong-chain", {"chain_id": 1}),
                               ("no chain", "envelope-wrong-chain", {"chain_id": None})]:
            with self.subTest(name):
                got = self.verifier().verify(self.env(**kw))
                refused(self, slug, check_audience, got.envelope, NODE, 31337)

    def test_high_s_accepted(self):
        # Another library may sign with high S: the Go node takes its low-S twin, so does this.
        good = self.env(BOB)
        segs = good.split(".")
        sig = b64url_decode(segs[2])
        s = int.from_bytes(sig[32:], "big")
        high = sig[:32] + (secp256k1.N - s).to_bytes(32, "big")
        self.assertGreater(secp256k1.N - s, secp256k1.HALF_N)
        self.verifier().verify(".".join(segs[:2] + [b64url(high)]))

    def test_json_serialization_two_signers(self):
        from surety.jws import sign_json
        payload = go_json({"id": "x", "sender": BOB.did.text, "iat": NOW - 5, "exp": NOW + 60, "nonce": "n"})
        raw = sign_json(payload, ALICE, BOB)
        got = self.verifier().verify(raw)
        self.assertEqual(got.signers, [BOB.did.key_id, ALICE.did.key_id], "the sender's kid first")
        j = json.loads(raw)
        j["signatures"][0]["signature"] = j["signatures"][1]["signature"]
        refused(self, "envelope-bad-signature", self.verifier().verify, json.dumps(j))
        j = json.loads(raw)
        j["signatures"] = j["signatures"][:1]  # only alice's: the sender (bob) did not sign
        refused(self, "envelope-kid-not-sender", self.verifier().verify, json.dumps(j))


class TestCards(unittest.TestCase):
    def card(self, key=ALICE, **kw):
        kw.setdefault("updated", NOW)
        return objects.sign_card(key, "alice", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", 1, capabilities=["translate"], **kw)

    def test_attacks(self):
        good = self.card()
        c = objects.verify_card(good, now=NOW)
        self.assertEqual((c["did"], c["seq"]), (ALICE.did.text, 1))
        payload = b64url_decode(good.split(".")[1])
        cases = [
            ("tampered", "card-forged", flip(good, 1)),
            ("forged", "card-forged", flip(good, 2)),
            ("signed by another DID", "card-wrong-did", sign_compact(BOB, payload, objects.CARD_TYPE)),
            ("wrong typ", "card-malformed", sign_compact(ALICE, payload, ENVELOPE_TYPE)),
            ("in the future", "card-malformed", self.card(updated=NOW + 3600)),
            ("bad capability", "card-malformed", objects.sign_card(ALICE, "a", "0x" + "11" * 20, 1, updated=NOW, capabilities=["Bad Cap"])),
            ("seq zero", "card-malformed", objects.sign_card(ALICE, "a", "0x" + "11" * 20, 0, updated=NOW)),
            ("too large", "card-too-large", objects.sign_card(ALICE, "a", "0x" + "11" * 20, 1, updated=NOW, description="x" * (17 << 10))),
        ]
        for name, slug, raw in cases:
            with self.subTest(name):
                refused(self, slug, objects.verify_card, raw, now=NOW)


class TestBindings(unittest.TestCase):
    REGISTRY = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"

    def test_attacks(self):
        wallet = secp256k1.PrivateKey(bytes([7]) * 32)
        thief = secp256k1.PrivateKey(bytes([8]) * 32)
        for key in (ALICE, BOB):
            b = objects.sign_binding(key, wallet, 31337, self.REGISTRY, NOW, "n1")
            self.assertEqual(objects.check_binding(b, 31337, self.REGISTRY)["did"], key.did.text)
            other_wallet = dict(b, walletSignature=objects.sign_binding(key, thief, 31337, self.REGISTRY, NOW, "n1")["walletSignature"])
            other_did = objects.sign_binding(BOB if key is ALICE else ALICE, wallet, 31337, self.REGISTRY, NOW, "n1")
            cases = [
                ("wallet signature by another wallet", "bad-proof", other_wallet),
                ("statement changed", "bad-proof", dict(b, statement=dict(b["statement"], nonce="n2"))),
                ("agent JWS of another DID", "bad-proof", dict(b, agentJws=other_did["agentJws"])),
                ("agent JWS forged", "bad-proof", dict(b, agentJws=flip(b["agentJws"], 2))),
                ("short wallet signature", "bad-proof", dict(b, walletSignature=b["walletSignature"][:-2])),
            ]
            for name, slug, bad in cases:
                with self.subTest(name, key=key.type):
                    refused(self, slug, objects.check_binding, bad, 31337, self.REGISTRY)
            with self.subTest("wrong chain and registry", key=key.type):
                refused(self, "wrong-registry", objects.check_binding, b, 1, self.REGISTRY)
                refused(self, "wrong-registry", objects.check_binding, b, 31337, "0x" + "aa" * 20)
                refused(self, "envelope-revoked", objects.check_binding, b, 31337, self.REGISTRY, [key.did.text])


class TestAudits(unittest.TestCase):
    def test_parse(self):
        raw = objects.sign_audit(ALICE, BOB.did.text, 0.75, "0x" + "ab" * 32, bounty={"chain_id": 31337, "escrow": "0x" + "cd" * 20, "id": 7},
                                 now=NOW - 5)
        got = objects.parse_audit(Verifier(now=NOW, started=0).verify(raw).envelope)
        self.assertEqual((got["auditor"], got["subject"], got["score"], got["bounty"]["id"]), (ALICE.did.text, BOB.did.text, 0.75, 7))
        for name, body in [("self audit", {"subject": ALICE.did.text}), ("score above one", {"score": 1.5}),
                           ("short evidence", {"evidence": {"hash": "0xab"}}), ("unknown field", {"extra": 1}),
                           ("other kind", {"kind": "surety.audit/2"}), ("bad uri", {"evidence": {"hash": "0x" + "ab" * 32, "uri": "ftp://x"}})]:
            with self.subTest(name):
                env = {"sender": ALICE.did.text, "iat": NOW, "envelope_id": None, "body": dict(objects.audit_body(BOB.did.text, 0.5, "0x" + "ab" * 32, envelope_id="e1"), **body)}
                refused(self, "audit-invalid", objects.parse_audit, env)


class TestKeyFiles(unittest.TestCase):
    def test_saved_secret_and_never_overwritten(self):
        import stat
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "agent.key.json")
            BOB.save(path)
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
            self.assertEqual(Key.load(path).did, BOB.did)
            with self.assertRaises(FileExistsError):
                ALICE.save(path)
            self.assertEqual(Key.load(path).did, BOB.did)


class TestDIDs(unittest.TestCase):
    def test_pkh(self):
        from surety.keys import pkh_did
        d = parse_did(pkh_did(31337, "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"))
        self.assertEqual((d.method, d.chain_id, d.address), ("pkh", 31337, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"))

    def test_refusals(self):
        from surety.errors import DIDError
        for s, slug in [("did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooW", "invalid-did"),
                        ("did:key:zDnaeQRy3dcKsKa1zmKtVKsTy3m2HYoQnFnfKuxD6HfSTQgYf", "unsupported-key-type"),
                        ("did:web:example.com", "unsupported-did-method"), ("did:KEY:x", "invalid-did"),
                        ("did:key:" + NODE[8:] + "#frag", "invalid-did"), ("did:pkh:eip155:0:0x" + "11" * 20, "invalid-did"),
                        ("did:pkh:eip155:1:0x70997970c51812dc3A010C7d01b50e0d17dc79C8", "invalid-did"), ("x" * 600, "invalid-did")]:
            with self.subTest(s[:40]):
                with self.assertRaises(DIDError) as cm:
                    parse_did(s)
                self.assertEqual(cm.exception.slug, slug)


if __name__ == "__main__":
    unittest.main()
