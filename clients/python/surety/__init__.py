"""Surety's Python client: did:key identities, the signed objects a Surety node verifies
(envelopes, Agent Cards, audits, wallet bindings, log heads and proofs), a typed client of
the node's HTTP API, and the agent's own wallet, which signs its EIP-1559 transactions here.

Standard library plus `cryptography`; keccak-256, RLP, the ABI, base58 and the secp256k1
recovery id are written here (tests/vectors: checked against go-ethereum's output)."""

from .client import Client
from .chain import RPC, Contracts, Wallet
from .errors import DIDError, ProblemError, RPCError, SuretyError, VerifyError
from .jws import Verifier, check_audience, sign_envelope, verify_jws
from .keys import DID, ED25519, SECP256K1, Key, parse_did
from .objects import (agent_id, envelope_leaf, open_head, sign_audit, sign_binding, sign_card,
                      verify_binding, verify_card, verify_inclusion)
from .secp256k1 import PrivateKey

__all__ = ["Client", "RPC", "Contracts", "Wallet", "DIDError", "ProblemError", "RPCError", "SuretyError",
           "VerifyError", "Verifier", "check_audience", "sign_envelope", "verify_jws", "DID", "ED25519", "SECP256K1",
           "Key", "parse_did", "agent_id", "envelope_leaf", "open_head", "sign_audit", "sign_binding", "sign_card",
           "verify_binding", "verify_card", "verify_inclusion", "PrivateKey"]
