"""The contract calls the client makes are the contracts' own: every signature in
surety.chain's tables is a function of contracts/artifacts with that selector."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from helpers import REPO  # noqa: E402
from surety import eth  # noqa: E402
from surety.chain import ESCROW_CALLS, POSTED_EVENT, REGISTRY_CALLS  # noqa: E402
from surety.keccak import keccak256  # noqa: E402


def _type(p):
    if p["type"].startswith("tuple"):
        return "(" + ",".join(_type(c) for c in p["components"]) + ")" + p["type"][5:]
    return p["type"]


def artifact(name):
    with open(os.path.join(REPO, "contracts", "artifacts", name + ".json")) as f:
        abi = json.load(f)["abi"]
    fns = {e["name"]: e["name"] + "(" + ",".join(_type(p) for p in e["inputs"]) + ")" for e in abi if e["type"] == "function"}
    events = {e["name"]: e["name"] + "(" + ",".join(_type(p) for p in e["inputs"]) + ")" for e in abi if e["type"] == "event"}
    return fns, events


class TestSelectorsMatchArtifacts(unittest.TestCase):
    def test_calls(self):
        for contract, calls in (("BountyEscrow", ESCROW_CALLS), ("StakeRegistry", REGISTRY_CALLS)):
            fns, _ = artifact(contract)
            for name, sig in calls.items():
                with self.subTest(contract=contract, call=name):
                    self.assertIn(name, fns, "%s has no function %s" % (contract, name))
                    self.assertEqual(eth.selector(sig), eth.selector(fns[name]), "%s: client %s, artifact %s" % (name, sig, fns[name]))

    def test_posted_event(self):
        _, events = artifact("BountyEscrow")
        self.assertEqual(keccak256(POSTED_EVENT.encode()), keccak256(events["Posted"].encode()))

    def test_errors(self):
        from surety.chain import ESCROW_ERRORS, REGISTRY_ERRORS, decode_revert
        for contract, table in (("BountyEscrow", ESCROW_ERRORS), ("StakeRegistry", REGISTRY_ERRORS)):
            with open(os.path.join(REPO, "contracts", "artifacts", contract + ".json")) as f:
                abi = json.load(f)["abi"]
            want = sorted(e["name"] + "(" + ",".join(_type(p) for p in e["inputs"]) + ")" for e in abi if e["type"] == "error")
            self.assertEqual(sorted(table), want, contract)
        data = eth.selector("NotPoster(uint256,address)") + eth.abi_encode(["uint256", "address"], [7, "0x" + "ab" * 20])
        self.assertEqual(decode_revert("0x" + data.hex()), "NotPoster(7, 0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB)")
        escrow_stake = eth.selector("InsufficientStake(bytes32,uint256,uint256)") + bytes(96)
        self.assertTrue(decode_revert(escrow_stake).startswith("InsufficientStake(0x000"))
        self.assertIsNone(decode_revert("0x08c379a0" + "00" * 32))  # Error(string) is none of ours
        self.assertIsNone(decode_revert(data[:-1]))

    def test_a_changed_signature_is_caught(self):
        # The check can fail: a Terms tuple with one field less is another selector.
        fns, _ = artifact("BountyEscrow")
        wrong = ESCROW_CALLS["claim"].replace("uint16,", "")
        self.assertNotEqual(eth.selector(wrong), eth.selector(fns["claim"]))


if __name__ == "__main__":
    unittest.main()
