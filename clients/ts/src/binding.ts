// Wallet bindings (identity/binding.go): a statement that an agent DID and a wallet belong
// together for one stake registry on one chain, signed by both keys: the agent's did:key as a
// compact JWS of typ surety-binding+jws, and the wallet as EIP-712 typed data (viem). The
// wallet records it on chain with StakeRegistry.bind(keccak256(did), binding JSON).

import { type Account, type Hex, getAddress, keccak256, recoverTypedDataAddress, toBytes } from "viem";
import { goJSON } from "./encoding.js";
import { newNonce } from "./envelope.js";
import { VerifyError, signCompact, verifyJWS } from "./jws.js";
import { type Key } from "./keys.js";

/** BINDING_TYPE is the typ of the agent key's JWS over a binding statement. */
export const BINDING_TYPE = "surety-binding+jws";

/** BindingStatement says that an agent DID and a wallet belong together. */
export interface BindingStatement {
  did: string;
  wallet: string;
  chainId: number;
  registry: string;
  iat: number;
  nonce: string;
}

/** Binding is a statement with both signatures: the JSON StakeRegistry.bind records. */
export interface Binding {
  statement: BindingStatement;
  agentJws: string;
  /** The wallet's 65-byte EIP-712 signature, r || s || v with v 27 or 28, 0x hex. */
  walletSignature: Hex;
}

/** BindingError: a binding whose signatures do not verify (problem bad-proof). */
export class BindingError extends Error {
  readonly problem = "https://surety.dev/problems/bad-proof";
  constructor(readonly detail: string) {
    super(`binding does not verify: ${detail}`);
    this.name = "BindingError";
  }
}

/** agentId is the id StakeRegistry keys an agent by: keccak256 of its DID. */
export function agentId(did: string): Hex {
  return keccak256(toBytes(did));
}

/** typedData is the EIP-712 form of a statement, the one the wallet signs. */
export function typedData(s: BindingStatement) {
  return {
    domain: { name: "Surety StakeRegistry", version: "1", chainId: BigInt(s.chainId), verifyingContract: getAddress(s.registry) },
    types: {
      AgentBinding: [
        { name: "did", type: "string" },
        { name: "agentId", type: "bytes32" },
        { name: "wallet", type: "address" },
        { name: "issuedAt", type: "uint256" },
        { name: "nonce", type: "string" },
      ],
    },
    primaryType: "AgentBinding" as const,
    message: { did: s.did, agentId: agentId(s.did), wallet: getAddress(s.wallet), issuedAt: BigInt(s.iat), nonce: s.nonce },
  };
}

/** statementJSON is the statement's JSON as the Go code writes it (addresses lowercase). */
export function statementJSON(s: BindingStatement): string {
  return goJSON({ did: s.did, wallet: s.wallet.toLowerCase(), chainId: s.chainId, registry: s.registry.toLowerCase(), iat: s.iat, nonce: s.nonce });
}

/** bindingJSON is a binding's JSON as the Go code writes it: the bytes StakeRegistry.bind records. */
export function bindingJSON(b: Binding): string {
  return `{"statement":${statementJSON(b.statement)},"agentJws":${goJSON(b.agentJws)},"walletSignature":${goJSON(b.walletSignature.toLowerCase())}}`;
}

/** newStatement is a statement binding key's DID to wallet, issued now. */
export function newStatement(key: Key, wallet: string, chainId: number, registry: string): BindingStatement {
  return { did: key.did.did, wallet: getAddress(wallet), chainId, registry: getAddress(registry), iat: Math.floor(Date.now() / 1000), nonce: newNonce() };
}

/**
 * signBinding signs a statement with the agent key and the wallet (a viem account that signs
 * typed data: a local private key account, or a JSON-RPC account behind a wallet), and
 * verifies the result before returning it.
 */
export async function signBinding(s: BindingStatement, agent: Key, wallet: Account & { signTypedData?: unknown }): Promise<Binding> {
  if (s.did !== agent.did.did) throw new BindingError(`statement names ${s.did}, key is ${agent.did.did}`);
  if (getAddress(wallet.address) !== getAddress(s.wallet)) throw new BindingError(`statement names wallet ${s.wallet}, the account is ${wallet.address}`);
  if (typeof wallet.signTypedData !== "function") throw new BindingError("the wallet account cannot sign typed data");
  const agentJws = signCompact(agent, statementJSON(s), BINDING_TYPE);
  const sign = wallet.signTypedData as (d: ReturnType<typeof typedData>) => Promise<Hex>;
  const walletSignature = await sign(typedData(s));
  const b: Binding = { statement: s, agentJws, walletSignature };
  await verifyBinding(b);
  return b;
}

const sameStatement = (a: BindingStatement, b: Partial<BindingStatement>) =>
  a.did === b.did && typeof b.wallet === "string" && a.wallet.toLowerCase() === b.wallet.toLowerCase() && a.chainId === b.chainId &&
  typeof b.registry === "string" && a.registry.toLowerCase() === b.registry.toLowerCase() && a.iat === b.iat && a.nonce === b.nonce;

/**
 * verifyBinding checks both signatures as every node does (identity.Binding.Verify): the JWS
 * by the statement's did:key over exactly the statement, and the EIP-712 signature by the
 * statement's wallet; and, when want names them, that it is for that chain and registry. It
 * throws BindingError, or WrongRegistryError.
 */
export async function verifyBinding(b: Binding, want: { chainId?: number; registry?: string } = {}): Promise<void> {
  const s = b?.statement;
  if (!s || typeof s.did !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(String(s.wallet)) || !/^0x[0-9a-fA-F]{40}$/.test(String(s.registry))) {
    throw new BindingError("not a binding statement");
  }
  if (!s.did.startsWith("did:key:")) throw new BindingError("only a did:key agent signs a binding");
  let payload: Uint8Array;
  let signer: string;
  try {
    ({ payload, signer } = verifyJWS(String(b.agentJws ?? ""), BINDING_TYPE));
  } catch (e) {
    throw new BindingError(`agent JWS: ${e instanceof VerifyError ? e.message : String(e)}`);
  }
  if (signer !== s.did) throw new BindingError(`agent JWS is signed by ${signer}, not ${s.did}`);
  let signed: Partial<BindingStatement>;
  try {
    signed = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch {
    throw new BindingError("agent JWS does not sign this statement");
  }
  if (!sameStatement(s, signed)) throw new BindingError("agent JWS does not sign this statement");
  const sig = String(b.walletSignature ?? "");
  if (!/^0x[0-9a-fA-F]{130}$/.test(sig)) throw new BindingError(`wallet signature is ${Math.max(0, (sig.length - 2) / 2)} bytes, want 65`);
  let by: string;
  try {
    by = await recoverTypedDataAddress({ ...typedData(s), signature: sig as Hex });
  } catch (e) {
    throw new BindingError(`wallet signature: ${(e as Error).message}`);
  }
  if (getAddress(by) !== getAddress(s.wallet)) throw new BindingError(`wallet signature is by ${by}, not ${getAddress(s.wallet)}`);
  if ((want.chainId !== undefined && s.chainId !== want.chainId) || (want.registry !== undefined && getAddress(s.registry) !== getAddress(want.registry))) {
    throw new WrongRegistryError(`the binding is for chain ${s.chainId}, registry ${s.registry}; want chain ${want.chainId ?? "any"}, registry ${want.registry ?? "any"}`);
  }
}

/** WrongRegistryError: a binding for another chain or stake registry (problem wrong-registry). */
export class WrongRegistryError extends Error {
  readonly problem = "https://surety.dev/problems/wrong-registry";
  constructor(readonly detail: string) {
    super(detail);
    this.name = "WrongRegistryError";
  }
}
