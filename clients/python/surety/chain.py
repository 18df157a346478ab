"""The agent's own wallet on the chain: it signs EIP-1559 transactions here and sends them
through the node's JSON-RPC relay (POST /v1/rpc, which takes calls to the escrow and the
stake registry) or any JSON-RPC URL; and the calls of Surety's contracts, ABI-encoded
(contracts/artifacts)."""

import json
import os
import time
import urllib.error
import urllib.request

from . import eth
from .errors import RPCError
from .keccak import keccak256
from .objects import agent_id, binding_proof
from .secp256k1 import PrivateKey, checksum_address
from .types import Receipt

# The calls the client makes, by their canonical signatures: TestSelectorsMatchArtifacts
# (tests/test_abi.py) holds them to contracts/artifacts.
TERMS = "(address,address,uint256,address,uint64,uint32,uint16,uint256,bytes32)"
ESCROW_CALLS = {
    "post": "post(address,uint256,address,uint64,uint32,uint256,bytes32,bytes32)",
    "claim": "claim(uint256,%s,bytes32)" % TERMS,
    "assign": "assign(uint256,%s,address)" % TERMS,
    "submit": "submit(uint256,%s,address,bytes32)" % TERMS,
    "accept": "accept(uint256,%s,address)" % TERMS,
    "reject": "reject(uint256,%s,address,bytes32)" % TERMS,
    "dispute": "dispute(uint256,%s,address,bytes32)" % TERMS,
    "release": "release(uint256,%s,address)" % TERMS,
    "refund": "refund(uint256,%s,address)" % TERMS,
    "cancel": "cancel(uint256,%s)" % TERMS,
    "withdraw": "withdraw(address)",
    "bountyId": "bountyId(address,bytes32)",
}
REGISTRY_CALLS = {
    "bind": "bind(bytes32,bytes)",
    "stake": "stake(bytes32,uint256)",
    "requestUnbond": "requestUnbond(bytes32,uint256)",
    "withdraw": "withdraw(bytes32)",
    "stakeOf": "stakeOf(bytes32,address)",
}
# The contracts' custom errors (contracts/artifacts; tests/test_abi.py holds the lists to them):
# decode_revert names the one a call reverted with.
ESCROW_ERRORS = [
    "AlreadyPosted(uint256)", "ArbiterIsParty(address)", "ArbiterTimeNotUp(uint256,uint256)",
    "ClaimWindowOpen(uint256,uint256)", "ClaimsNotOpen(uint256,uint256)", "DeadlineNotPassed(uint256,uint64)",
    "DeadlinePassed(uint256,uint64)", "FeeTooHigh(uint16,uint16)", "InsufficientStake(bytes32,uint256,uint256)",
    "InvalidAmount()", "InvalidDeadline(uint64)", "InvalidReviewWindow(uint32)", "InvalidSplit(uint16)",
    "InvalidValue(uint256,uint256)", "NotArbiter(uint256,address)", "NotOwner(address)", "NotParty(uint256,address)",
    "NotPendingOwner(address)", "NotPoster(uint256,address)", "NotSubmitted(uint256)", "NotTreasury(address)",
    "NotWorker(uint256,address)", "NothingToWithdraw(address,address)", "Reentrancy()",
    "ReviewWindowClosed(uint256,uint256)", "ReviewWindowOpen(uint256,uint256)",
    "SlashAboveLock(uint256,uint256,uint256)", "StakedClaim(uint256,uint256)", "TermsMismatch(uint256)",
    "TransferFailed(address,address,uint256)", "UnknownBounty(uint256)", "WrongStatus(uint256,uint8)",
    "ZeroAddress()",
]
REGISTRY_ERRORS = [
    "AmountTooLarge(uint256)", "InsufficientStake(uint256,uint256)", "InvalidAmount()", "InvalidSuccessor(bytes32)",
    "InvalidValue(uint256,uint256)", "LockExists(uint256)", "NotLocker(address)", "NothingToWithdraw()",
    "Reentrancy()", "SlashAboveLock(uint256,uint256)", "StakeLocked(bytes32,address,uint256)", "StillBonded(uint64)",
    "TransferFailed(address,address,uint256)", "UnknownLock(uint256)", "WrongStatus(bytes32,address,uint8)",
    "ZeroAddress()", "ZeroAgentId()",
]
POSTED_EVENT = "Posted(uint256,address,address,%s)" % TERMS
ZERO_ADDRESS = "0x" + "00" * 20
# The most tip a wallet takes from the chain's suggestion through the node's relay (the
# Go CLI's relayTipLimit): the node answers eth_maxPriorityFeePerGas, and a wallet pays it.
RELAY_TIP_LIMIT = 100 * 10 ** 9
GAS_MARGIN_PERCENT = 25
# How often a call the node's relay refused for its rate (429) is tried again.
RATE_RETRIES = 5
# How often a wallet asks for a receipt, in seconds.
RECEIPT_POLL = 0.25


def _error_table():
    table = {}
    for sig in ESCROW_ERRORS + REGISTRY_ERRORS:
        table.setdefault(eth.selector(sig), sig)  # the same signature in both: one entry
    return table


_ERRORS = _error_table()


def decode_revert(data):
    """The custom error a revert's data names, as "Name(arg, ...)" with its arguments
    (uints in decimal, addresses and bytes32 in hex); None for data no contract of Surety's
    reverts with. Two contracts share a name with other arguments (InsufficientStake,
    WrongStatus, ...): the selector tells them apart."""
    if isinstance(data, str):
        try:
            data = bytes.fromhex(data[2:] if data.startswith("0x") else data)
        except ValueError:
            return None
    if not data or len(data) < 4 or data[:4] not in _ERRORS:
        return None
    sig = _ERRORS[data[:4]]
    name, _, rest = sig.partition("(")
    types = [t for t in rest[:-1].split(",") if t]
    if len(data) != 4 + 32 * len(types):
        return None
    args = []
    for i, t in enumerate(types):
        word = data[4 + 32 * i:36 + 32 * i]
        if t == "address":
            args.append(checksum_address(word[12:]))
        elif t == "bytes32":
            args.append("0x" + word.hex())
        else:
            args.append(str(int.from_bytes(word, "big")))
    return "%s(%s)" % (name, ", ".join(args))


class RPC:
    """A JSON-RPC 2.0 endpoint: the node's relay (Client.rpc_url()) or a chain's URL."""

    def __init__(self, url: str, timeout: float = 60):
        self.url, self.timeout, self._id = url, timeout, 0

    def call(self, method, *params):
        self._id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": list(params)}).encode()
        for attempt in range(RATE_RETRIES + 1):
            req = urllib.request.Request(self.url, data=body, method="POST", headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    ans = json.loads(resp.read(8 << 20))
                break
            except urllib.error.HTTPError as e:
                # The node's relay bounds JSON-RPC calls per address (429 with Retry-After):
                # a wallet waiting for its receipt slows down rather than fails.
                if e.code == 429 and attempt < RATE_RETRIES:
                    time.sleep(min(float(e.headers.get("Retry-After") or 1), 10))
                    continue
                raise RPCError(e.code, e.read(2000).decode("utf-8", "replace")) from None
        if ans.get("error"):
            err = ans["error"]
            reason = decode_revert(err.get("data"))
            msg = err.get("message", "") + (": " + reason if reason else "")
            raise RPCError(err.get("code"), msg, err.get("data"), reason)
        return ans.get("result")

    def chain_id(self) -> int:
        return int(self.call("eth_chainId"), 16)

    def receipt(self, tx_hash: str):
        r = self.call("eth_getTransactionReceipt", tx_hash)
        return Receipt.from_json(r) if r else None


class Wallet:
    """A wallet the agent holds: it signs its transactions itself; the node never sees the
    key. rpc: an RPC (the node's relay, or a chain URL); relay=True caps the suggested tip
    as the Go CLI does through the node."""

    def __init__(self, key: PrivateKey, rpc: RPC, relay: bool = True, receipt_timeout: float = 120):
        self.key, self.rpc, self.relay = key, rpc, relay
        self.receipt_timeout = receipt_timeout
        self._chain_id = None

    @property
    def address(self) -> str:
        return self.key.address

    @property
    def chain_id(self) -> int:
        if self._chain_id is None:
            self._chain_id = self.rpc.chain_id()
        return self._chain_id

    def fees(self):
        """(tip, fee cap): the chain's suggested tip (capped through the relay) and the tip
        plus twice the latest base fee."""
        tip = int(self.rpc.call("eth_maxPriorityFeePerGas"), 16)
        if self.relay:
            tip = min(tip, RELAY_TIP_LIMIT)
        block = self.rpc.call("eth_getBlockByNumber", "latest", False)
        base = int(block.get("baseFeePerGas") or "0x0", 16)
        return tip, tip + 2 * base

    def send(self, to: str, data: bytes, value: int = 0, gas: int = None) -> str:
        """Signs and sends a call; returns its hash. The gas is estimated first, so a call
        the contract would refuse fails here (RPCError with the revert data) and costs
        nothing."""
        msg = {"from": self.address, "to": checksum_address(to), "data": "0x" + bytes(data).hex(), "value": hex(value)}
        if gas is None:
            est = int(self.rpc.call("eth_estimateGas", msg), 16)
            gas = est + est * GAS_MARGIN_PERCENT // 100
        nonce = int(self.rpc.call("eth_getTransactionCount", self.address, "pending"), 16)
        tip, cap = self.fees()
        raw = eth.sign_tx(self.key, chain_id=self.chain_id, nonce=nonce, max_priority_fee=tip, max_fee=cap, gas=gas,
                          to=to, value=value, data=data)
        got = self.rpc.call("eth_sendRawTransaction", "0x" + raw.hex())
        want = eth.tx_hash(raw)
        if got and got.lower() != want:
            raise RPCError(0, "the endpoint answered hash %s for transaction %s" % (got, want))
        return want

    def wait(self, tx_hash: str) -> Receipt:
        end = time.monotonic() + self.receipt_timeout
        while True:
            r = self.rpc.receipt(tx_hash)
            if r is not None:
                return r
            if time.monotonic() > end:
                raise TimeoutError("transaction %s was not mined in %ds" % (tx_hash, self.receipt_timeout))
            time.sleep(RECEIPT_POLL)

    def transact(self, to: str, data: bytes, value: int = 0) -> Receipt:
        """send, then wait for the receipt; RPCError when the transaction reverted."""
        r = self.wait(self.send(to, data, value))
        if not r.ok:
            raise RPCError(-1, "transaction %s reverted in block %d" % (r.transaction_hash, r.block))
        return r


class Contracts:
    """Surety's contracts as a node names them (/v1/info contracts), called from a wallet."""

    def __init__(self, escrow: str, registry: str):
        self.escrow, self.registry = checksum_address(escrow), checksum_address(registry)

    @classmethod
    def of(cls, info) -> "Contracts":
        return cls(info.contracts["BountyEscrow"], info.contracts["StakeRegistry"])

    # StakeRegistry

    def bind(self, wallet: Wallet, binding: dict) -> Receipt:
        """Records a binding (sign_binding) on chain: StakeRegistry.bind(agentId, proof)."""
        did = binding["statement"]["did"]
        return wallet.transact(self.registry, eth.encode_call(REGISTRY_CALLS["bind"], agent_id(did), binding_proof(binding)))

    def stake(self, wallet: Wallet, did: str, amount: int) -> Receipt:
        """Bonds amount wei for did from wallet (ETH stake: the value is the amount)."""
        return wallet.transact(self.registry, eth.encode_call(REGISTRY_CALLS["stake"], agent_id(did), amount), value=amount)

    # BountyEscrow

    def post(self, wallet: Wallet, *, amount: int, arbiter: str, deadline: int, review_window: int, min_stake: int = 0,
             spec: str = "", salt: bytes = None, token: str = ZERO_ADDRESS):
        """Posts a bounty (ETH when token is the zero address) and returns (bounty id, receipt).
        specHash is keccak256 of spec; salt makes the id (random when not given)."""
        salt = os.urandom(32) if salt is None else salt
        spec_hash = keccak256(spec.encode()) if spec else b"\x00" * 32
        data = eth.encode_call(ESCROW_CALLS["post"], token, amount, arbiter, deadline, review_window, min_stake, spec_hash, salt)
        r = wallet.transact(self.escrow, data, value=amount if int(token, 16) == 0 else 0)
        topic = "0x" + keccak256(POSTED_EVENT.encode()).hex()
        for log in r.logs:
            if log.get("address", "").lower() == self.escrow.lower() and log.get("topics") and log["topics"][0] == topic:
                return int(log["topics"][1], 16), r
        raise RPCError(-1, "transaction %s records no bounty" % r.transaction_hash)

    def act(self, wallet: Wallet, action: str, bounty, *extra) -> Receipt:
        """A bounty call after post with the terms the node's index holds (bounty: a
        types.Bounty): claim(agentId), submit(resultHash), accept(), reject(reasonHash), ...
        The worker argument is filled in from the bounty."""
        sig = ESCROW_CALLS[action]
        args = [int(bounty.id), bounty.terms()]
        if action not in ("claim", "assign", "cancel"):
            args.append(bounty.worker or ZERO_ADDRESS)
        args.extend(extra)
        return wallet.transact(self.escrow, eth.encode_call(sig, *args))
