"""The client against what go-ethereum and Surety's Go code make from the same inputs
(tests/vectors, written by testnet/e2e TestPythonClientVectors), and published vectors."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from helpers import vectors  # noqa: E402
from surety import eth, objects, secp256k1  # noqa: E402
from surety.encoding import b58decode, b58encode, go_json  # noqa: E402
from surety.jws import ENVELOPE_TYPE, Verifier, sign_compact, verify_jws  # noqa: E402
from surety.keccak import keccak256  # noqa: E402
from surety.keys import Key, parse_did  # noqa: E402


class TestKeccak(unittest.TestCase):
    def test_published(self):
        # The Keccak team's / Ethereum's well-known digests.
        self.assertEqual(keccak256(b"").hex(), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
        self.assertEqual(keccak256(b"abc").hex(), "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45")
        self.assertEqual(eth.selector("transfer(address,uint256)").hex(), "a9059cbb")

    def test_go_ethereum(self):
        for v in vectors("keccak.json"):
            with self.subTest(n=len(v["input"]) // 2):
                self.assertEqual(keccak256(bytes.fromhex(v["input"])).hex(), v["keccak256"])


def _rlp_value(v):
    if "bytes" in v:
        return bytes.fromhex(v["bytes"])
    if "int" in v:
        return int(v["int"])
    return [_rlp_value(x) for x in v["list"]]


class TestRLP(unittest.TestCase):
    def test_go_ethereum(self):
        for v in vectors("rlp.json"):
            with self.subTest(v["name"]):
                self.assertEqual(eth.rlp_encode(_rlp_value(v["value"])).hex(), v["rlp"])

    def test_decode_round_trip_and_refusals(self):
        for v in vectors("rlp.json"):
            raw = bytes.fromhex(v["rlp"])
            self.assertEqual(eth.rlp_encode(eth.rlp_decode(raw)), raw)
        for bad in ["", "81", "8100", "b800", "c3", "820001ff"]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                eth.rlp_decode(bytes.fromhex(bad))


class TestKeys(unittest.TestCase):
    def test_did_key_and_key_files(self):
        for v in vectors("keys.json"):
            with self.subTest(did=v["did"]):
                k = Key(v["type"], bytes.fromhex(v["seed"]))
                self.assertEqual(k.did.text, v["did"])
                self.assertEqual(k.did.key_id, v["kid"])
                self.assertEqual(k.did.jwk(), v["jwk"])
                self.assertEqual(k.key_file().decode(), v["keyFile"], "the Go CLI's key file, byte for byte")
                self.assertEqual(Key.from_key_file(v["keyFile"]).did.text, v["did"])
                self.assertEqual("0x" + objects.agent_id(v["did"]).hex(), v["agentId"])
                if "address" in v:
                    self.assertEqual(secp256k1.PrivateKey(bytes.fromhex(v["seed"])).address, v["address"])

    def test_published_did_key(self):
        # did:key spec test vectors (w3c-ccg did-method-key): Ed25519 and secp256k1.
        d = parse_did("did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp")
        self.assertEqual(d.key_type, "ed25519")
        self.assertEqual(Key("ed25519", bytes(32)).did.text, d.text)
        d = parse_did("did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme")
        self.assertEqual(d.key_type, "secp256k1")

    def test_key_file_mismatch_refused(self):
        v = vectors("keys.json")[1]
        f = json.loads(v["keyFile"])
        f["x"] = vectors("keys.json")[3]["jwk"]["x"]
        with self.assertRaises(ValueError):
            Key.from_key_file(json.dumps(f))

    def test_base58(self):
        self.assertEqual(b58encode(b"hello world"), "StV1DL6CwTryKyV")
        self.assertEqual(b58decode("1112"), b"\x00\x00\x00\x01")
        with self.assertRaises(ValueError):
            b58decode("0OIl")


class TestJWS(unittest.TestCase):
    def test_same_bytes_as_go(self):
        # Ed25519 is deterministic and ES256K uses RFC 6979 nonces on both sides: the client
        # signs exactly what Go signs for the same payload.
        for v in vectors("jws.json"):
            with self.subTest(kind=v["kind"], type=v["type"]):
                k = Key(v["type"], bytes.fromhex(v["seed"]))
                typ = ENVELOPE_TYPE if v["kind"] == "envelope" else objects.CARD_TYPE
                self.assertEqual(sign_compact(k, v["payload"].encode(), typ), v["jws"])
                payload, signer = verify_jws(v["jws"], typ)
                self.assertEqual(signer, k.did.text)

    def test_payloads_built_like_go(self):
        env, card = [v for v in vectors("jws.json") if v["type"] == "ed25519"]
        k = Key("ed25519", bytes.fromhex(env["seed"]))
        e = json.loads(env["payload"])
        from surety.jws import make_envelope
        built = make_envelope(k, e["body"], aud=e["aud"], chain_id=e["chain_id"],
                              fields={"id": e["id"], "state": e["state"], "bounty": e["bounty"], "iat": e["iat"], "exp": e["exp"], "nonce": e["nonce"]})
        self.assertEqual(built.decode(), env["payload"])
        c = json.loads(card["payload"])
        self.assertEqual(objects.card_payload(c["did"], c["name"], c["wallet"], c["seq"], c["updated"], c["description"],
                                              c["capabilities"], c["endpoints"]).decode(), card["payload"])
        self.assertEqual(objects.verify_card(card["jws"], now=c["updated"])["name"], c["name"])

    def test_envelope_vectors_verify(self):
        for v in vectors("jws.json"):
            if v["kind"] != "envelope":
                continue
            got = Verifier(now=1764000100, started=0).verify(v["jws"])
            self.assertEqual(got.sender, json.loads(v["payload"])["sender"])


class TestBindings(unittest.TestCase):
    def test_same_as_go(self):
        for v in vectors("bindings.json"):
            with self.subTest(type=v["type"]):
                st = v["statement"]
                self.assertEqual("0x" + objects.binding_digest(st).hex(), v["digest"])
                k = Key(v["type"], bytes.fromhex(v["seed"]))
                w = secp256k1.PrivateKey(bytes.fromhex(v["walletKey"]))
                b = objects.sign_binding(k, w, st["chainId"], st["registry"], st["iat"], st["nonce"])
                self.assertEqual(objects.binding_proof(b).decode(), v["binding"])
                self.assertEqual(objects.verify_binding(v["binding"])["did"], k.did.text)
                data = eth.encode_call("bind(bytes32,bytes)", objects.agent_id(k.did), objects.binding_proof(b))
                self.assertEqual(data.hex(), v["bindCall"])


class TestTransactions(unittest.TestCase):
    def test_same_as_go_ethereum(self):
        for v in vectors("txs.json"):
            with self.subTest(nonce=v["nonce"]):
                key = secp256k1.PrivateKey(bytes.fromhex(v["key"]))
                self.assertEqual(key.address, v["from"])
                raw = eth.sign_tx(key, chain_id=v["chainId"], nonce=v["nonce"], max_priority_fee=int(v["maxPriorityFeePerGas"]),
                                  max_fee=int(v["maxFeePerGas"]), gas=v["gas"], to=v["to"], value=int(v["value"]),
                                  data=bytes.fromhex(v["data"]))
                self.assertEqual(raw.hex(), v["raw"])
                self.assertEqual(eth.tx_hash(raw), v["hash"].lower())
                self.assertEqual(eth.decode_tx(raw)["from"], v["from"])

    def test_eip155_published_example(self):
        # EIP-155's own example: key 0x4646...46, nonce 9, 20 gwei, 21000 gas, to
        # 0x3535...35, 1 ether, chain 1. It checks RLP, the signing and the recovery id (v 37)
        # against a published transaction (legacy: the type-2 ones are checked against
        # go-ethereum above).
        key = secp256k1.PrivateKey(bytes([0x46]) * 32)
        fields = [9, 20 * 10 ** 9, 21000, bytes([0x35]) * 20, 10 ** 18, b""]
        digest = keccak256(eth.rlp_encode(fields + [1, 0, 0]))
        self.assertEqual(digest.hex(), "daf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53")
        r, s, v = key.sign_digest(digest)
        raw = eth.rlp_encode(fields + [35 + 2 * 1 + v, r, s])
        self.assertEqual(raw.hex(), "f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025"
                                    "a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276"
                                    "a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83")


class TestABI(unittest.TestCase):
    def test_calls_same_as_abigen(self):
        v = vectors("abi.json")
        from surety.chain import ESCROW_CALLS, REGISTRY_CALLS
        spec_hash = keccak256(v["spec"].encode())
        terms = (v["poster"], "0x" + "00" * 20, int(v["amount"]), v["arbiter"], v["deadline"], v["reviewWindow"], v["feeBps"],
                 int(v["minStake"]), spec_hash)
        agent = bytes.fromhex(v["agentId"][2:])
        cases = {
            "post": eth.encode_call(ESCROW_CALLS["post"], "0x" + "00" * 20, int(v["amount"]), v["arbiter"], v["deadline"], v["reviewWindow"],
                                    int(v["minStake"]), spec_hash, bytes.fromhex(v["salt"])),
            "claim": eth.encode_call(ESCROW_CALLS["claim"], v["id"], terms, agent),
            "submit": eth.encode_call(ESCROW_CALLS["submit"], v["id"], terms, v["worker"], bytes.fromhex(v["resultHash"])),
            "accept": eth.encode_call(ESCROW_CALLS["accept"], v["id"], terms, v["worker"]),
            "stake": eth.encode_call(REGISTRY_CALLS["stake"], agent, 2 * 10 ** 18),
        }
        for name, data in cases.items():
            with self.subTest(name):
                self.assertEqual(data.hex(), v[name])


class TestMerkle(unittest.TestCase):
    def test_inclusion_like_go(self):
        m = vectors("merkle.json")
        for i, leaf in enumerate(m["leaves"]):
            self.assertEqual(objects.leaf_hash(("audit-%d" % i).encode()).hex(), leaf)
        for p in m["proofs"]:
            with self.subTest(index=p["index"], size=p["size"]):
                leaf = bytes.fromhex(m["leaves"][p["index"]])
                proof = {"leaf": leaf.hex(), "index": p["index"], "size": p["size"], "path": p["path"]}
                objects.verify_inclusion(leaf, proof, p["size"], bytes.fromhex(p["root"]))

    def test_tampered_proofs_fail(self):
        m = vectors("merkle.json")
        from surety.errors import VerifyError
        p = [x for x in m["proofs"] if x["size"] == 13 and x["index"] == 5][0]
        leaf, root = bytes.fromhex(m["leaves"][5]), bytes.fromhex(p["root"])
        root8 = bytes.fromhex([x for x in m["proofs"] if x["size"] == 8][0]["root"])
        bad_path = list(p["path"])
        bad_path[0] = "00" * 32
        for name, proof, size in [
            ("wrong index", {"index": 4, "size": 13, "path": p["path"]}, 13),
            ("changed hash", {"index": 5, "size": 13, "path": bad_path}, 13),
            ("short path", {"index": 5, "size": 13, "path": p["path"][:-1]}, 13),
            ("long path", {"index": 5, "size": 13, "path": p["path"] + ["00" * 32]}, 13),
            ("other size", {"index": 5, "size": 8, "path": p["path"]}, 8),
            ("index past size", {"index": 13, "size": 13, "path": p["path"]}, 13),
        ]:
            with self.subTest(name), self.assertRaises(VerifyError):
                objects.verify_inclusion(leaf, proof, size, root8 if size == 8 else root)


class TestGoJSON(unittest.TestCase):
    def test_escapes_and_floats(self):
        self.assertEqual(go_json({"a": "<&>", "b": 1.0, "c": 0.8, "d": 1e21, "e": 1e-7, "f": [None, True]}),
                         b'{"a":"\\u003c\\u0026\\u003e","b":1,"c":0.8,"d":1e+21,"e":1e-7,"f":[null,true]}')


if __name__ == "__main__":
    unittest.main()
