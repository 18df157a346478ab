#!/usr/bin/env python3
"""The marketplace day's money path, done by two Python agents with only the `surety`
package: each binds a wallet it holds, stakes and registers its card; one posts a bounty,
the other claims it and submits; the poster accepts and audits the worker; both read the
worker's reputation and check its proof (the node's signed log head and an RFC 6962
inclusion proof) themselves.

Environment:
  SURETY_NODE_URL     the node (http://127.0.0.1:7746)
  SURETY_POSTER_KEY   the poster's wallet: a funded hex private key the node does not hold
  SURETY_WORKER_KEY   the worker's wallet, likewise
  SURETY_ARBITER      the bounty's arbiter address (neither of the two)
  SURETY_RPC_URL      optional: send transactions to this JSON-RPC URL instead of the node's
                      relay (POST /v1/rpc)
Prints one line per step, and a last JSON line with what it did; exits 1 on the first
failure."""

import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from surety import a2a, credentials, groups  # noqa: E402
from surety.jws import Verifier  # noqa: E402
from surety.objects import check_consistency, checkpoint_origin, open_checkpoint  # noqa: E402
from surety import (ED25519, RPC, SECP256K1, Client, Contracts, Key, PrivateKey,  # noqa: E402
                    RPCError, Wallet, agent_id, envelope_leaf, open_head, sign_audit, sign_binding,
                    sign_card, verify_card, verify_inclusion)

STAKE = 10 ** 18          # 1 ETH each
BOUNTY = 10 ** 16         # 0.01 ETH
MIN_STAKE = 10 ** 17      # the claim locks 0.1 ETH of the worker's stake
LOG_WAIT = 90             # seconds to wait for the audit's epoch to close into the log


def say(msg):
    print("money-path: " + msg, flush=True)


class Agent:
    def __init__(self, name, key_type, wallet_hex, node, rpc_url):
        self.name = name
        self.key = Key.generate(key_type)
        self.node = node
        relay = not rpc_url
        self.wallet = Wallet(PrivateKey.from_hex(wallet_hex), RPC(rpc_url or node.rpc_url()), relay=relay)
        self.did = self.key.did.text

    def bind(self, info, contracts):
        binding = sign_binding(self.key, self.wallet.key, info.chain.id, contracts.registry)
        ans = self.node.add_binding(binding)  # the node checks both signatures first
        if ans.on_chain:
            raise SystemExit("%s: the node says %s is bound already" % (self.name, self.did))
        # The node answers the call for a wallet it does not hold: it must be ours, byte for byte.
        from surety import eth
        from surety.chain import REGISTRY_CALLS
        from surety.objects import binding_proof
        ours = eth.encode_call(REGISTRY_CALLS["bind"], agent_id(self.did), binding_proof(binding))
        if ans.data != "0x" + ours.hex() or ans.to.lower() != contracts.registry.lower():
            raise SystemExit("%s: the node's bind call differs from the client's" % self.name)
        r = contracts.bind(self.wallet, binding)
        self.node.wait_indexed(r.block)
        h = self.node.stake_of(self.did, self.wallet.address)
        if h.status != "bound":
            raise SystemExit("%s: after the bind the node says %s" % (self.name, h.status))
        say("%s bound %s to its wallet %s (tx %s, block %d)" % (self.name, self.did, self.wallet.address, r.transaction_hash, r.block))

    def stake(self, contracts, amount):
        r = contracts.stake(self.wallet, self.did, amount)
        self.node.wait_indexed(r.block)
        h = self.node.stake_of(self.did, self.wallet.address)
        if int(h.staked) != amount:
            raise SystemExit("%s: staked %s, want %d" % (self.name, h.staked, amount))
        say("%s staked %d wei (tx %s)" % (self.name, amount, r.transaction_hash))

    def register(self, capabilities):
        card = sign_card(self.key, "python " + self.name, self.wallet.address, 1, description="a Python agent",
                         capabilities=capabilities, endpoints=[{"kind": "http", "url": "https://%s.example/agent" % self.name}])
        verify_card(card)
        a = self.node.register_agent(card)
        got = self.node.agent(self.did)
        if got.jws != card or not a.staked:
            raise SystemExit("%s: the node holds another card, or counts no stake (staked=%s)" % (self.name, a.staked))
        say("%s registered its card (stake %s, staked %s)" % (self.name, a.stake, a.staked))


def main():
    node = Client(os.environ["SURETY_NODE_URL"])
    rpc_url = os.environ.get("SURETY_RPC_URL", "")
    info = node.info()
    contracts = Contracts.of(info)
    say("node %s on chain %d (%s), escrow %s, registry %s, sending %s" % (
        info.node_did, info.chain.id, info.chain.kind, contracts.escrow, contracts.registry,
        "to " + rpc_url if rpc_url else "through the node's relay /v1/rpc"))
    poster = Agent("poster", ED25519, os.environ["SURETY_POSTER_KEY"], node, rpc_url)
    worker = Agent("worker", SECP256K1, os.environ["SURETY_WORKER_KEY"], node, rpc_url)
    arbiter = os.environ["SURETY_ARBITER"]
    if poster.wallet.chain_id != info.chain.id:
        raise SystemExit("the RPC is chain %d, the node settles on %d" % (poster.wallet.chain_id, info.chain.id))

    for a in (poster, worker):
        issued = node.register_self(a.key)  # proof of possession of the DID's key
        if issued["did"] != a.did or issued["kind"] != "registered":
            raise SystemExit("%s: the node registered %s" % (a.name, issued))
        a.bind(info, contracts)
        a.stake(contracts, STAKE)
    # The worker's VC 2.0 credentials from the node: registration and stake, each verified here
    # (vc+jwt by the node's DID) with its status bit read from the node's status list.
    for kind, jwt in (("registration", node.registration_credential(worker.did)),
                      ("stake", node.stake_credential(worker.did, worker.wallet.address))):
        cred = credentials.verify_credential(jwt, info.node_did)
        entry = cred.get("credentialStatus") or {}
        status = credentials.check_status(cred, node.status_list(entry["statusListCredential"]) if entry else "")
        subject = cred["credentialSubject"]
        if subject.get("id") != worker.did or status != "active":
            raise SystemExit("the %s credential is %s, status %s" % (kind, cred, status))
        if kind == "stake" and (subject.get("amount") != str(STAKE) or subject.get("wallet", "").lower() != worker.wallet.address.lower()):
            raise SystemExit("the stake credential says %s" % subject)
    say("worker's registration and stake credentials (VC 2.0) verify, and their status bits are clear")
    poster.register(["marketplace"])
    worker.register(["translate", "summarize"])
    # The worker's card again, as an A2A v1.0 AgentCard it signs itself (A2A §8.4, the trust
    # extension carrying its DID and wallet): it replaces the JWS card (seq 2).
    a2a_card = a2a.sign_card(worker.key, a2a.card_from_surety(worker.did, "python worker", worker.wallet.address, 2,
                                                              description="a Python agent, in A2A", capabilities=["translate", "summarize"],
                                                              endpoints=[{"kind": "a2a", "url": "https://worker.example/a2a"}]))
    got = node.register_a2a_card(a2a.card_text(a2a_card))
    if got.seq != 2 or not got.staked:
        raise SystemExit("the node took the A2A card as %s" % got.raw)
    own = a2a.verify_registered(node.a2a_card_text(worker.did, form="registered"))
    served = a2a.verify_served(node.a2a_card_text(worker.did), info.node_did)
    params = a2a.trust_params(served["card"])
    if own["signer"] != worker.did or served["did"] != worker.did or params.get("stake") != str(STAKE):
        raise SystemExit("the node serves the A2A card as %s / %s" % (own, params))
    node_card = a2a.verify_served(node.a2a_card_text(), info.node_did)
    say("worker registered an A2A card (seq 2); the node serves it signed by %s with stake %s, and its own card signed by itself" % (
        served["signer"][:24] + "…", params.get("stake")))
    found = [a.did for a in node.search_agents(capability="translate")]
    if worker.did not in found:
        raise SystemExit("search for translate does not find the worker: %s" % found)
    # Search takes a sentence, ranked by words and meaning (the node's default), or by the
    # words alone (mode="keyword").
    for mode in ("hybrid", "keyword"):
        found = [a.did for a in node.search_agents(q="I need someone who can translate my documents", mode=mode)]
        if worker.did not in found:
            raise SystemExit("a sentence (mode %s) does not find the worker: %s" % (mode, found))

    # A group thread: the poster (bound) creates it naming the worker, who posts to it.
    team = "py-" + os.urandom(6).hex()
    node.set_group_members(groups.sign_membership(poster.key, team, [worker.did]))
    node.post_to_group(groups.sign_post(worker.key, team, {"text": "ready to translate"}))
    page = node.group_envelopes(team)
    thread = Verifier(started=0)
    if [thread.verify(e["envelope"]).sender for e in page["envelopes"]] != [worker.did]:
        raise SystemExit("the thread holds %s" % page)
    say("poster made the group %s; the worker's post is in its thread, verified here" % team)

    # Post, with the deadline in the chain's time.
    now = int(poster.wallet.rpc.call("eth_getBlockByNumber", "latest", False)["timestamp"], 16)
    spec = "Translate 'surety bond' into French."
    bounty_id, r = contracts.post(poster.wallet, amount=BOUNTY, arbiter=arbiter, deadline=now + 3600, review_window=600,
                                  min_stake=MIN_STAKE, spec=spec)
    node.wait_indexed(r.block)
    node.put_bounty_spec(bounty_id, spec)
    b = node.bounty(bounty_id)
    if b.status != "open" or b.spec != spec or int(b.amount) != BOUNTY:
        raise SystemExit("after the post the node shows %s" % b.raw)
    say("poster posted bounty %d for %d wei (tx %s)" % (bounty_id, BOUNTY, r.transaction_hash))

    r = contracts.act(worker.wallet, "claim", b, agent_id(worker.did))
    node.wait_indexed(r.block)
    b = node.bounty(bounty_id)
    if b.status != "assigned" or b.worker.lower() != worker.wallet.address.lower():
        raise SystemExit("after the claim the node shows %s" % b.raw)
    if int(node.stake_of(worker.did, worker.wallet.address).locked) != MIN_STAKE:
        raise SystemExit("the claim locked no stake")
    say("worker claimed it, locking %d wei of its stake (tx %s)" % (MIN_STAKE, r.transaction_hash))

    result = hashlib.sha256(b"une caution").digest()
    r = contracts.act(worker.wallet, "submit", b, result)
    node.wait_indexed(r.block)
    b = node.bounty(bounty_id)
    if b.status != "submitted":
        raise SystemExit("after the submit the node shows %s" % b.raw)
    say("worker submitted its result (tx %s)" % r.transaction_hash)

    # Only the poster accepts: the worker's try is refused when its gas is estimated, before
    # anything is signed or sent, and the client names the contract's error.
    nonce = worker.wallet.rpc.call("eth_getTransactionCount", worker.wallet.address, "pending")
    try:
        contracts.act(worker.wallet, "accept", b)
        raise SystemExit("the worker accepted its own work")
    except RPCError as e:
        if not (e.revert or "").startswith("NotPoster(%d, " % bounty_id):
            raise SystemExit("the worker's accept was refused with %s, want NotPoster" % e)
        if worker.wallet.rpc.call("eth_getTransactionCount", worker.wallet.address, "pending") != nonce:
            raise SystemExit("the refused accept was sent")
        say("worker's own accept refused before sending: %s" % e.revert)

    balance_before = int(worker.wallet.rpc.call("eth_getBalance", worker.wallet.address, "latest"), 16)
    r = contracts.act(poster.wallet, "accept", b)
    node.wait_indexed(r.block)
    b = node.bounty(bounty_id)
    balance_after = int(worker.wallet.rpc.call("eth_getBalance", worker.wallet.address, "latest"), 16)
    if b.status != "accepted" or balance_after - balance_before != int(b.payout) or int(b.payout) <= 0:
        raise SystemExit("after the accept the node shows %s; the worker got %d" % (b.raw, balance_after - balance_before))
    say("poster accepted: the worker was paid %s wei (fee %s; tx %s)" % (b.payout, b.fee, r.transaction_hash))

    # The poster audits the worker's work on the settled bounty.
    audit = sign_audit(poster.key, worker.did, 0.9, "0x" + result.hex(), evidence_uri="https://poster.example/review/%d" % bounty_id,
                       bounty={"chain_id": info.chain.id, "escrow": contracts.escrow, "id": bounty_id},
                       aud=info.node_did, chain_id=info.chain.id)
    sub = node.submit_audit(audit)
    leaf = envelope_leaf(audit)
    if sub.audit.leaf != leaf.hex():
        raise SystemExit("the node logs the audit as leaf %s, the client computes %s" % (sub.audit.leaf, leaf.hex()))
    say("poster filed an audit of the worker: backed %s, weight %s (%s)" % (sub.audit.backed, sub.counted.weight, sub.counted.why))

    # Read the reputation, and check its proof against the node's signed head.
    end = time.monotonic() + LOG_WAIT
    while True:
        rep = node.reputation(worker.did)
        head = node.log_head()
        if any(f.leaf == leaf.hex() for f in rep.feeding) and head.size > 0:
            try:
                proof = node.inclusion_proof(leaf.hex(), head.size)
                break
            except Exception as e:  # not-logged until the audit's epoch closes
                if getattr(e, "slug", "") != "not-logged":
                    raise
        if time.monotonic() > end:
            raise SystemExit("the audit was not in the log within %ds (head size %d)" % (LOG_WAIT, head.size))
        time.sleep(0.5)
    signed = open_head(head.signed, info.node_did)
    if signed["size"] != head.size or signed["root"].hex() != head.root:
        raise SystemExit("the head's fields differ from what the node signed")
    verify_inclusion(leaf, proof.raw, signed["size"], signed["root"])
    say("reputation of the worker: score %.3f from %d audit(s); its audit is leaf %d of %d under the root %s the node %s signed: proof checked" % (
        rep.score, rep.audits, proof.index, signed["size"], signed["root"].hex()[:16], info.node_did[:24] + "…"))
    # The same head as a C2SP checkpoint, signed under an origin naming this chain, the
    # RootAnchor and the node: the same root, or one the head's tree is a prefix of.
    if info.contracts.get("RootAnchor"):
        origin = checkpoint_origin(info.chain.id, info.contracts["RootAnchor"], info.node_did)
        cp = open_checkpoint(node.checkpoint(), origin, info.node_did)
        if cp["size"] == signed["size"]:
            if cp["root"] != signed["root"]:
                raise SystemExit("the checkpoint and the head disagree at size %d" % cp["size"])
        else:
            p = node.consistency_proof(signed["size"], cp["size"])
            check_consistency(signed["size"], cp["size"], signed["root"], cp["root"], [bytes.fromhex(x) for x in p.get("path") or []])
        say("the node's checkpoint (%s, size %d) verifies and extends the head" % (origin[:40] + "…", cp["size"]))
    if rep.score <= 0 or rep.audits < 1:
        raise SystemExit("the worker's reputation counts nothing: %s" % rep.raw)
    print(json.dumps({"ok": True, "bounty": bounty_id, "poster": poster.did, "worker": worker.did, "payout": b.payout,
                      "score": rep.score, "leaf": leaf.hex(), "logSize": signed["size"]}))


if __name__ == "__main__":
    main()
