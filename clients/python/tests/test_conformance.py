"""Every vector of testdata/conformance (the shared suite the Go node and the TypeScript
client run too) of every kind this client implements. SURETY_CONFORMANCE_DIR points the
runner at another copy of the suite."""

import base64
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from helpers import REPO  # noqa: E402
from surety import objects, secp256k1  # noqa: E402
from surety.errors import DIDError, VerifyError  # noqa: E402
from surety.jws import Verifier, check_audience  # noqa: E402
from surety.keys import Key, parse_did  # noqa: E402

SUITE = os.environ.get("SURETY_CONFORMANCE_DIR") or os.path.join(REPO, "testdata", "conformance")
PROBLEM = "https://surety.dev/problems/"


def _key(v):
    k = Key(v["input"]["type"], bytes.fromhex(v["input"]["seed"]))
    facts = {"did": k.did.text, "kid": k.did.key_id, "publicKeyMultibase": k.did.fragment, "publicKey": k.did.public_key.hex(),
             "jwk": k.did.jwk(), "alg": k.alg}
    if k.type == "secp256k1":
        facts["address"] = secp256k1.PrivateKey(k.seed).address
    return facts


def _did(v):
    d = parse_did(v["input"])
    if d.method == "key":
        return {"method": "key", "keyType": d.key_type, "publicKey": d.public_key.hex()}
    return {"method": "pkh", "chainId": d.chain_id, "address": d.address}


def _verifier(v):
    c = v.get("context") or {}
    ver = Verifier(now=c.get("now"), started=0, revoked=c.get("revoked") or ())
    if c.get("seen"):
        # The nonces the input's sender used before: its sender is read from the payload
        # (unverified: it only names whose nonces they are).
        inp = v["input"]
        seg = inp.split(".")[1] if isinstance(inp, str) else inp["payload"]
        sender = json.loads(base64.urlsafe_b64decode(seg + "=" * (-len(seg) % 4)))["sender"]
        for n in c["seen"]:
            ver.remember(sender, n)
    return ver


def _raw(v):
    return v["input"] if isinstance(v["input"], str) else json.dumps(v["input"])


def _envelope(v):
    c = v.get("context") or {}
    got = _verifier(v).verify(_raw(v))
    if c.get("aud"):
        check_audience(got.envelope, c["aud"], c.get("chain_id", 0))
    return {"sender": got.sender, "id": got.envelope["id"], "signers": got.signers}


def _audit(v):
    got = _verifier(v).verify(_raw(v))
    a = objects.parse_audit(got.envelope)
    if "bounty" in a:
        target = "bounty:%d:%s:%d" % (a["bounty"]["chain_id"], a["bounty"]["escrow"].lower(), a["bounty"]["id"])
    else:
        target = "envelope:" + a["envelope"]
    return {"auditor": a["auditor"], "subject": a["subject"], "score": a["score"], "target": target, "time": a["time"]}


def _binding(v):
    c = v.get("context") or {}
    st = objects.check_binding(v["input"], c.get("chain_id", 0), c.get("registry", "0x" + "00" * 20), c.get("revoked") or ())
    return {"did": st["did"], "wallet": secp256k1.checksum_address(st["wallet"]), "agentId": "0x" + objects.agent_id(st["did"]).hex(),
            "digest": "0x" + objects.binding_digest(st).hex()}


def _card(v):
    c = objects.verify_card(v["input"], now=(v.get("context") or {}).get("now"))
    return {"did": c["did"], "name": c["name"], "seq": c["seq"], "wallet": secp256k1.checksum_address(c["wallet"]),
            "capabilities": c.get("capabilities") or []}


def _head(v):
    h = objects.open_head(v["input"], (v.get("context") or {}).get("node", ""))
    return {"size": h["size"], "root": h["root"].hex(), "epoch": h["epoch"], "closed": h["closed"], "signer": h["signer"]}


def _peer(v):
    c = v.get("context") or {}
    b = objects.verify_peer_binding(v["input"], c.get("node", ""), c.get("peer", ""))
    return {"did": b["did"], "peerId": b["peerId"]}


def _log_proof(v):
    p = v["input"]
    h = bytes.fromhex
    if p["type"] == "inclusion":
        objects.check_inclusion(h(p["leaf"]), p.get("index", 0), p.get("size", 0), [h(x) for x in p.get("path") or []], h(p["root"]))
    else:
        objects.check_consistency(p.get("from", 0), p.get("to", 0), h(p["fromRoot"]), h(p["toRoot"]), [h(x) for x in p.get("path") or []])
    return {}


def _a2a_card(v):
    from surety import a2a
    c = v.get("context") or {}
    if c.get("node"):
        got = a2a.verify_served(v["input"], c["node"])
        return {"signer": got["signer"], "did": got["did"]}
    got = a2a.verify_registered(v["input"], now=c.get("now"))
    return {"did": got["did"], "name": got["name"], "seq": got["seq"], "wallet": secp256k1.checksum_address(got["wallet"]),
            "capabilities": got["capabilities"], "signer": got["signer"]}


def _checkpoint(v):
    c = v.get("context") or {}
    got = objects.open_checkpoint(v["input"], c.get("origin", ""), c.get("node", ""))
    return {"origin": got["origin"], "size": got["size"], "root": got["root"].hex()}


def _credential(v):
    from surety import credentials
    c = v.get("context") or {}
    cred = credentials.verify_credential(v["input"], c.get("node", ""), now=c.get("now"))
    status = credentials.check_status(cred, c.get("status_list", ""), now=c.get("now"))
    subj = cred["credentialSubject"]
    facts = {"issuer": cred["issuer"], "subject": subj.get("id", ""), "type": [t for t in cred["type"] if t != "VerifiableCredential"][-1],
             "validFrom": cred["validFrom"], "validUntil": cred.get("validUntil", ""), "status": status}
    if "SuretyStakeCredential" in cred["type"]:
        facts.update({"wallet": subj.get("wallet"), "amount": subj.get("amount"), "chainId": subj.get("chainId"), "block": subj.get("blockNumber")})
    return facts


def _status_list(v):
    from surety import credentials
    c = v.get("context") or {}
    lst = credentials.verify_status_list(v["input"], c.get("node", ""), now=c.get("now"))
    bits = lst["bits"]
    return {"id": lst["id"], "statusPurpose": lst["statusPurpose"], "bits": len(bits) * 8,
            "set": [i for i in range(len(bits) * 8) if bits[i // 8] and credentials.status_bit(bits, i)]}


def _group(v):
    from surety.groups import Thread
    c = v.get("context") or {}
    t = Thread(Verifier(now=c.get("now"), started=0), bound=c.get("bound") or ())
    for raw in c.get("accepted") or []:
        t.accept(raw)
    return t.accept(v["input"])


# The kinds this client checks; the problem types refused vectors name (problem) or the
# reason slugs of the client-only kinds (reason).
CHECKERS = {"key": _key, "did": _did, "envelope": _envelope, "audit": _audit, "binding": _binding, "card": _card,
            "log-head": _head, "peer-binding": _peer, "log-proof": _log_proof, "a2a-card": _a2a_card, "checkpoint": _checkpoint, "credential": _credential,
            "status-list": _status_list, "group": _group}


def verdict(v):
    """(valid, facts or the refusal's problem type / reason slug) of one vector."""
    try:
        return True, CHECKERS[v["kind"]](v)
    except DIDError as e:
        return False, e.slug
    except VerifyError as e:
        return False, e.slug


class TestConformance(unittest.TestCase):
    def test_every_vector(self):
        if not os.path.isdir(SUITE):
            self.skipTest("no conformance suite at %s yet (it comes with the protocol work on main)" % SUITE)
        ran, skipped = 0, {}
        for kind in sorted(os.listdir(SUITE)):
            d = os.path.join(SUITE, kind)
            if not os.path.isdir(d):
                continue
            for name in sorted(os.listdir(d)):
                if not name.endswith(".json"):
                    continue
                with open(os.path.join(d, name)) as f:
                    v = json.load(f)
                if v["kind"] not in CHECKERS:
                    skipped[v["kind"]] = skipped.get(v["kind"], 0) + 1
                    continue
                with self.subTest(vector="%s/%s" % (kind, name)):
                    self.assertEqual(v["kind"], kind, "a vector's kind is its directory's name")
                    ok, got = verdict(v)
                    want = v["expect"]
                    if want["valid"]:
                        self.assertTrue(ok, "%s: refused (%s): %s" % (name, got, v["description"]))
                        for fact, value in want.items():
                            if fact != "valid":
                                self.assertEqual(got.get(fact), value, "%s: fact %s" % (name, fact))
                    else:
                        self.assertFalse(ok, "%s: accepted, want %s: %s" % (name, want, v["description"]))
                        self.assertEqual(got, want.get("reason") or want["problem"][len(PROBLEM):], "%s: %s" % (name, v["description"]))
                    ran += 1
        self.assertGreater(ran, 0, "the suite at %s holds no vector this client knows" % SUITE)
        sys.stderr.write("\nconformance: %d vectors run; kinds not implemented here: %s\n" % (
            ran, ", ".join("%s (%d)" % kv for kv in sorted(skipped.items())) or "none"))


if __name__ == "__main__":
    unittest.main()
