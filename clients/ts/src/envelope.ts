// Envelopes: a compact (or JSON-serialized) JWS of typ surety-envelope+jws whose payload
// names its sender, audience, chain, lifetime and nonce (identity/envelope.go), signed and
// checked by the same rules as the node's verifier (identity/verify.go).

import { randomBytes } from "node:crypto";
import { MAX_ENVELOPE_SIZE, VerifyError, checkSignature, parseCompact, parseJSONSerialization, signCompact } from "./jws.js";
import { goJSON } from "./encoding.js";
import { type Key } from "./keys.js";

/** ENVELOPE_TYPE is the typ of an envelope's protected header. */
export const ENVELOPE_TYPE = "surety-envelope+jws";

/** Clock skew tolerated on iat and exp, and the longest lifetime a node takes (seconds). */
export const DEFAULT_SKEW = 30;
export const DEFAULT_MAX_LIFETIME = 600;
/** The lifetime the client gives the envelopes it signs (seconds). */
export const DEFAULT_TTL = 300;

/** Envelope states. */
export type State = "discussion" | "task_assignment" | "execution" | "conclusion";

/** BountyRef points at a bounty in an escrow contract. */
export interface BountyRef {
  chain_id: number;
  escrow: string;
  id: number;
}

/** Envelope is an envelope's JSON payload; fields this version does not know are kept. */
export interface Envelope {
  id: string;
  group_id?: string;
  sender: string;
  to?: string[];
  aud?: string;
  chain_id?: number;
  state?: State | string;
  task_desc?: string;
  bounty?: BountyRef;
  body?: unknown;
  iat: number;
  exp: number;
  nonce: string;
  [field: string]: unknown;
}

/** newNonce is 16 random bytes in hex: a fresh nonce or id. */
export function newNonce(): string {
  return randomBytes(16).toString("hex");
}

/** Options of fillEnvelope and signEnvelope. */
export interface FillOptions {
  /** The time the envelope is issued, unix seconds; default now. */
  now?: number;
  /** Its lifetime in seconds when exp is missing; default 300 (nodes take at most 600). */
  ttl?: number;
}

/**
 * fillEnvelope completes a payload for signing by key, as identity.FillEnvelope does: it sets
 * sender, iat, exp, nonce and id where missing and keeps every other field. A sender that is
 * set must be key's DID. Keys are written sorted, as Go writes a map.
 */
export function fillEnvelope(payload: Record<string, unknown>, key: Key, opts: FillOptions = {}): Record<string, unknown> {
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) throw new TypeError("payload is not a JSON object");
  if ("sender" in payload && payload.sender !== key.did.did) {
    throw new VerifyError("kid-not-sender", `sender ${JSON.stringify(payload.sender)} is not the signing key's DID ${key.did.did}`);
  }
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const m: Record<string, unknown> = { ...payload };
  m.sender ??= key.did.did;
  m.iat ??= now;
  m.exp ??= now + (opts.ttl ?? DEFAULT_TTL);
  m.nonce ??= newNonce();
  m.id ??= newNonce();
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(m).sort()) if (m[k] !== undefined) out[k] = m[k];
  return out;
}

/** signEnvelope fills payload (fillEnvelope) and signs it with key: a compact JWS. */
export function signEnvelope(key: Key, payload: Record<string, unknown>, opts: FillOptions = {}): string {
  return signCompact(key, goJSON(fillEnvelope(payload, key, opts)), ENVELOPE_TYPE);
}

/** What a verifier is told besides the envelope. */
export interface VerifyContext {
  /** The time, unix seconds; default now. */
  now?: number;
  /** Clock skew tolerated, seconds; default 30. */
  skew?: number;
  /** Longest exp - iat, seconds; default 600. */
  maxLifetime?: number;
  /** When the verifier started (unix seconds): envelopes issued before are refused. */
  started?: number;
  /** For a state-changing envelope: the receiving node's DID and chain, both required. */
  aud?: string;
  chainId?: number;
  /** DIDs revoked on chain, and DIDs rotated away. */
  revoked?: Iterable<string>;
  rotated?: Iterable<string>;
  /** Nonces the sender already used in envelopes the verifier accepted: a replay. */
  seen?: Iterable<string>;
}

/** Verified is an envelope that passed every check. */
export interface Verified {
  envelope: Envelope;
  /** The payload exactly as signed. */
  payload: Uint8Array;
  /** The kids of the signatures, the sender's first. */
  signers: string[];
}

const isInt = (v: unknown) => typeof v === "number" && Number.isInteger(v);

/**
 * verifyEnvelope checks an envelope as the node does: every signature, typ, the sender among
 * the signers, the time window, the chain's word on the signers' keys, the nonce, and (when
 * context names them) aud and chain_id. It throws VerifyError, whose problem is the type the
 * node answers with.
 */
export function verifyEnvelope(raw: string | Uint8Array, ctx: VerifyContext = {}): Verified {
  const text = typeof raw === "string" ? raw : Buffer.from(raw).toString("utf8");
  if (Buffer.byteLength(text) > MAX_ENVELOPE_SIZE) throw new VerifyError("malformed", `larger than ${MAX_ENVELOPE_SIZE} bytes`);
  const trimmed = text.trim();
  const { sigs, payload } = trimmed.length > 0 && trimmed[0] !== "{" ? parseCompact(trimmed) : parseJSONSerialization(text);
  const signers: string[] = [];
  const signerDIDs: string[] = [];
  for (const s of sigs) {
    const did = checkSignature(s);
    if (s.header.typ !== ENVELOPE_TYPE) {
      throw new VerifyError("malformed", `typ ${JSON.stringify(String(s.header.typ ?? "")).slice(0, 42)}, want ${JSON.stringify(ENVELOPE_TYPE)}`, String(s.header.kid));
    }
    signers.push(String(s.header.kid));
    signerDIDs.push(did.did);
  }
  let e: Envelope;
  try {
    e = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch (err) {
    throw new VerifyError("malformed", `payload is not an envelope: ${(err as Error).message}`);
  }
  if (e === null || typeof e !== "object" || Array.isArray(e)) throw new VerifyError("malformed", "payload is not an envelope");
  const typed: [string, (v: unknown) => boolean][] = [
    ["id", (v) => typeof v === "string"], ["sender", (v) => typeof v === "string"], ["nonce", (v) => typeof v === "string"],
    ["iat", isInt], ["exp", isInt], ["aud", (v) => typeof v === "string"], ["chain_id", (v) => isInt(v) && (v as number) >= 0],
    ["group_id", (v) => typeof v === "string"], ["state", (v) => typeof v === "string"], ["task_desc", (v) => typeof v === "string"],
    ["to", (v) => Array.isArray(v) && v.every((x) => typeof x === "string")], ["bounty", (v) => typeof v === "object"],
  ];
  for (const [name, ok] of typed) {
    const v = (e as Record<string, unknown>)[name];
    if (v !== undefined && v !== null && !ok(v)) throw new VerifyError("malformed", `payload is not an envelope: ${name} has the wrong type`);
  }
  if (!e.sender || !e.nonce || !e.id || !e.iat || !e.exp) throw new VerifyError("malformed", "payload needs id, sender, iat, exp and nonce");
  const at = signerDIDs.indexOf(e.sender);
  if (at < 0) throw new VerifyError("kid-not-sender", `sender is ${e.sender.slice(0, 120)}`, signers[0]);
  if (at > 0) [signers[0], signers[at]] = [signers[at], signers[0]];
  const now = ctx.now ?? Math.floor(Date.now() / 1000);
  const skew = ctx.skew ?? DEFAULT_SKEW;
  const maxLife = ctx.maxLifetime ?? DEFAULT_MAX_LIFETIME;
  const kid = signers[0];
  if (e.exp <= e.iat) throw new VerifyError("malformed", `exp ${e.exp} is not after iat ${e.iat}`, kid);
  if (e.iat > now + skew) throw new VerifyError("not-yet-valid", `iat ${e.iat} is ${e.iat - now}s ahead of this clock`, kid);
  if (e.exp - e.iat > maxLife) throw new VerifyError("lifetime-too-long", `exp - iat is ${e.exp - e.iat}s, at most ${maxLife}s`, kid);
  if (e.exp + skew <= now) throw new VerifyError("expired", `exp ${e.exp} passed ${now - e.exp}s ago`, kid);
  if (ctx.started !== undefined && e.iat < ctx.started) throw new VerifyError("issued-before-start", "retry with a fresh envelope", kid);
  const revoked = new Set(ctx.revoked ?? []);
  const rotated = new Set(ctx.rotated ?? []);
  for (const d of signerDIDs) {
    if (revoked.has(d)) throw new VerifyError("revoked", `${d} was revoked on chain`);
    if (rotated.has(d)) throw new VerifyError("rotated", `${d} was rotated on chain`);
  }
  const seen = new Set(ctx.seen ?? []);
  if (seen.has(e.nonce)) throw new VerifyError("replayed", `nonce ${e.nonce.slice(0, 80)}`, kid);
  // Each is checked when the context names it (a node names both on state-changing routes).
  if (ctx.aud !== undefined && (e.aud ?? "") !== ctx.aud) throw new VerifyError("wrong-audience", `aud is ${(e.aud || "none").slice(0, 140)}; this node is ${ctx.aud}`);
  if (ctx.chainId !== undefined && (e.chain_id ?? 0) !== ctx.chainId) throw new VerifyError("wrong-chain", `chain_id is ${e.chain_id ?? 0}; this node is on chain ${ctx.chainId}`);
  return { envelope: e, payload, signers };
}

/**
 * checkAudience refuses an envelope that does not name aud as its audience and chainId as
 * its chain (what a node checks on every state-changing envelope).
 */
export function checkAudience(e: Envelope, aud: string, chainId: number): void {
  if ((e.aud ?? "") !== aud) throw new VerifyError("wrong-audience", `aud is ${(e.aud || "none").slice(0, 140)}; this node is ${aud}`);
  if ((e.chain_id ?? 0) !== chainId) throw new VerifyError("wrong-chain", `chain_id is ${e.chain_id ?? 0}; this node is on chain ${chainId}`);
}
