"""The HTTP client and the wallet against a small local server (offline): problem+json
becomes a typed ProblemError, answers decode into the wire types, the relay's 429 is waited
out, and a wallet's transaction is what it signed."""

import json
import os
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, HTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from surety import eth, secp256k1  # noqa: E402
from surety.chain import RPC, Wallet  # noqa: E402
from surety.client import Client  # noqa: E402
from surety.errors import ProblemError, RPCError  # noqa: E402


class Node(BaseHTTPRequestHandler):
    """Answers a few routes as a node would; records what it was sent."""
    sent = []
    rpc_limit = 0  # how many JSON-RPC calls get 429 first

    def log_message(self, *a):
        pass

    def answer(self, status, body, ctype="application/json", headers=()):
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):
        if self.path == "/v1/info":
            return self.answer(200, {"version": "t", "chain": {"id": 31337, "kind": "anvil", "indexedBlock": 9, "confirmations": 0},
                                     "contracts": {"BountyEscrow": "0x" + "11" * 20, "StakeRegistry": "0x" + "22" * 20},
                                     "nodeDid": "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp", "future": {"x": 1}})
        if self.path.startswith("/v1/bounties/7"):
            return self.answer(200, {"id": 7, "status": "open", "poster": "0x" + "33" * 20, "token": "0x" + "00" * 20, "amount": "5",
                                     "arbiter": "0x" + "44" * 20, "deadline": 99, "reviewWindow": 60, "feeBps": 100, "minStake": "0",
                                     "specHash": "0x" + "55" * 32, "payout": "0", "fee": "0", "posterRefund": "0", "postedBlock": 3, "updatedBlock": 3})
        self.answer(404, {"type": "https://surety.dev/problems/unknown-agent", "title": "No card for this DID", "status": 404,
                          "detail": "did:key:zz", "instance": self.path}, "application/problem+json")

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Node.sent.append((self.path, self.headers.get("Content-Type"), body))
        if self.path == "/v1/audits":
            return self.answer(401, {"type": "https://surety.dev/problems/envelope-bad-signature", "title": "Envelope refused: bad signature",
                                     "status": 401, "reason": "bad-signature"}, "application/problem+json")
        if self.path == "/v1/rpc":
            if Node.rpc_limit > 0:
                Node.rpc_limit -= 1
                return self.answer(429, {"type": "https://surety.dev/problems/too-many-requests", "status": 429}, "application/problem+json",
                                   [("Retry-After", "0")])
            req = json.loads(body)
            result = {"eth_chainId": "0x7a69", "eth_estimateGas": "0x5208", "eth_getTransactionCount": "0x3",
                      "eth_maxPriorityFeePerGas": "0x" + format(200 * 10 ** 9, "x"),
                      "eth_getBlockByNumber": {"baseFeePerGas": "0x10", "timestamp": "0x1"}}.get(req["method"])
            if req["method"] == "eth_sendRawTransaction":
                result = eth.tx_hash(bytes.fromhex(req["params"][0][2:]))
            if req["method"] == "eth_call":
                return self.answer(200, {"jsonrpc": "2.0", "id": req["id"], "error": {"code": 3, "message": "execution reverted", "data": "0xdeadbeef"}})
            return self.answer(200, {"jsonrpc": "2.0", "id": req["id"], "result": result})
        self.answer(201, {"did": "x", "name": "n", "capabilities": [], "wallet": "0x" + "00" * 20, "seq": 1, "updated": 1, "jws": body.decode(),
                          "stake": "0", "staked": False})


class TestClient(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = HTTPServer(("127.0.0.1", 0), Node)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.url = "http://127.0.0.1:%d" % cls.server.server_port

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def test_typed_answers(self):
        c = Client(self.url)
        info = c.info()
        self.assertEqual((info.chain.id, info.chain.indexed_block, info.node_did), (31337, 9, "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"))
        self.assertEqual(info.raw["future"], {"x": 1}, "a field the client does not know is kept")
        b = c.bounty(7)
        self.assertEqual(b.terms()[2], 5)
        self.assertEqual(b.review_window, 60)
        a = c.register_agent("a.b.c")
        self.assertEqual(a.jws, "a.b.c")
        self.assertEqual(Node.sent[-1][:2], ("/v1/agents", "application/jose"))

    def test_signed_writes_name_the_node(self):
        from surety import Key, Verifier, check_audience
        c = Client(self.url)
        k = Key("ed25519", bytes([4]) * 32)
        c.act_on_bounty(k, 7, "claim", {"wallet": "0x" + "11" * 20, "agentId": "0x" + "22" * 32})
        path, ctype, body = Node.sent[-1]
        self.assertEqual((path, ctype), ("/v1/bounties/7/claim", "application/jose"))
        got = Verifier(started=0).verify(body.decode())
        check_audience(got.envelope, "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp", 31337)
        self.assertEqual(got.envelope["bounty"], {"chain_id": 31337, "escrow": "0x" + "11" * 20, "id": 7})
        from surety.groups import sign_post
        c.post_to_group(sign_post(k, "team-1", {"text": "hi"}))
        self.assertEqual(Node.sent[-1][0], "/v1/groups/team-1/envelopes")

    def test_problems(self):
        c = Client(self.url)
        with self.assertRaises(ProblemError) as cm:
            c.agent("did:key:zz")
        p = cm.exception
        self.assertEqual((p.status, p.slug, p.detail), (404, "unknown-agent", "did:key:zz"))
        with self.assertRaises(ProblemError) as cm:
            c.submit_audit("x.y.z")
        self.assertEqual((cm.exception.status, cm.exception.reason, cm.exception.type),
                         (401, "bad-signature", "https://surety.dev/problems/envelope-bad-signature"))

    def test_wallet_signs_what_it_sends(self):
        Node.rpc_limit = 2  # the relay's rate: waited out
        key = secp256k1.PrivateKey(bytes([5]) * 32)
        w = Wallet(key, RPC(self.url + "/v1/rpc"))
        h = w.send("0x" + "22" * 20, b"\x01\x02", value=9)
        raw = [json.loads(b) for p, _, b in Node.sent if p == "/v1/rpc" and json.loads(b)["method"] == "eth_sendRawTransaction"][-1]
        tx = eth.decode_tx(bytes.fromhex(raw["params"][0][2:]))
        self.assertEqual(h, eth.tx_hash(bytes.fromhex(raw["params"][0][2:])))
        self.assertEqual((tx["from"], tx["nonce"], tx["chainId"], tx["value"], tx["data"]), (key.address, 3, 31337, 9, b"\x01\x02"))
        self.assertEqual(tx["gas"], 21000 + 21000 // 4)
        self.assertEqual(tx["maxPriorityFeePerGas"], 100 * 10 ** 9, "the relay's suggested tip is capped")
        self.assertEqual(tx["maxFeePerGas"], 100 * 10 ** 9 + 2 * 16)

    def test_rpc_errors_keep_revert_data(self):
        with self.assertRaises(RPCError) as cm:
            RPC(self.url + "/v1/rpc").call("eth_call", {"to": "0x" + "11" * 20})
        self.assertEqual((cm.exception.code, cm.exception.data), (3, "0xdeadbeef"))


if __name__ == "__main__":
    unittest.main()
