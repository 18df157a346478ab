// Compact JWSs signed by a did:key, as Surety signs and checks them (identity/envelope.go
// SignDocument, identity/verify.go VerifyJWS): protected header {alg, kid, typ}, kid the
// signer's DID URL, alg EdDSA or ES256K as the key's type says.

import { type KeyDID, parseKeyId, fragment } from "./did.js";
import { b64url, unb64url, utf8 } from "./encoding.js";
import { type Key, verifySignature } from "./keys.js";

/** MAX_ENVELOPE_SIZE bounds a JWS the node reads (identity/limits.go MaxEnvelopeSize). */
export const MAX_ENVELOPE_SIZE = 256 << 10;

/** Why a JWS was refused: the node's envelope reasons (api/errors.go). */
export type Reason =
  | "malformed"
  | "unsupported-alg"
  | "bad-signature"
  | "kid-not-sender"
  | "expired"
  | "not-yet-valid"
  | "lifetime-too-long"
  | "issued-before-start"
  | "replayed"
  | "revoked"
  | "rotated"
  | "wrong-audience"
  | "wrong-chain";

/** PROBLEM_BASE is the base of the node's problem type URIs. */
export const PROBLEM_BASE = "https://surety.dev/problems/";

const SLUGS: Record<Reason, string> = {
  malformed: "envelope-malformed",
  "unsupported-alg": "envelope-unsupported-alg",
  "bad-signature": "envelope-bad-signature",
  "kid-not-sender": "envelope-kid-not-sender",
  expired: "envelope-expired",
  "not-yet-valid": "envelope-not-yet-valid",
  "lifetime-too-long": "envelope-lifetime",
  "issued-before-start": "envelope-before-start",
  replayed: "envelope-replayed",
  revoked: "envelope-revoked",
  rotated: "envelope-rotated",
  "wrong-audience": "envelope-wrong-audience",
  "wrong-chain": "envelope-wrong-chain",
};

/** VerifyError says why a signed object was refused, with the node's problem type for it. */
export class VerifyError extends Error {
  /** The problem type URI the node answers for this refusal. */
  readonly problem: string;
  constructor(
    readonly reason: Reason,
    readonly detail: string,
    readonly kid = "",
    problemSlug?: string,
  ) {
    super(`refused: ${reason}${detail ? ": " + detail : ""}${kid ? ` (kid ${kid.slice(0, 140)})` : ""}`);
    this.name = "VerifyError";
    this.problem = PROBLEM_BASE + (problemSlug ?? SLUGS[reason]);
  }
}

/** The protected header Surety reads. */
export interface Protected {
  alg?: unknown;
  kid?: unknown;
  typ?: unknown;
  crit?: unknown;
  b64?: unknown;
  [name: string]: unknown;
}

/** One signature to check: its header, its signing input and its bytes. */
export interface Signature {
  header: Protected;
  input: Uint8Array;
  sig: Uint8Array;
}

function decode(seg: string, what: string): Uint8Array {
  try {
    return unb64url(seg);
  } catch {
    throw new VerifyError("malformed", `${what} is not base64url`);
  }
}

function parseHeader(seg: string): Protected {
  const raw = decode(seg, "protected header");
  let h: unknown;
  try {
    h = JSON.parse(Buffer.from(raw).toString("utf8"));
  } catch {
    throw new VerifyError("malformed", "protected header is not JSON");
  }
  if (h === null || typeof h !== "object" || Array.isArray(h)) throw new VerifyError("malformed", "protected header is not JSON");
  // The Go verifier decodes the header into typed fields: a field of another type is no
  // header it can read.
  const p = h as Protected;
  const str = (v: unknown) => v === undefined || v === null || typeof v === "string";
  const crit = p.crit === undefined || p.crit === null || (Array.isArray(p.crit) && p.crit.every((c) => typeof c === "string"));
  if (!str(p.alg) || !str(p.kid) || !str(p.typ) || !crit || !(p.b64 === undefined || p.b64 === null || typeof p.b64 === "boolean")) {
    throw new VerifyError("malformed", "protected header is not JSON");
  }
  return p;
}

/** parseCompact splits and decodes a compact JWS (strict base64url). */
export function parseCompact(raw: string): { sigs: Signature[]; payload: Uint8Array } {
  const parts = raw.trim().split(".");
  if (parts.length !== 3) throw new VerifyError("malformed", "a compact JWS has three dot-separated parts");
  const header = parseHeader(parts[0]);
  const payload = decode(parts[1], "payload");
  const sig = decode(parts[2], "signature");
  return { sigs: [{ header, input: utf8(parts[0] + "." + parts[1]), sig }], payload };
}

/** The most signatures a JSON-serialized JWS may carry (identity/limits.go maxSigners). */
export const MAX_SIGNERS = 16;

/** parseJSONSerialization reads a general or flattened JWS JSON serialization. */
export function parseJSONSerialization(raw: string): { sigs: Signature[]; payload: Uint8Array } {
  let j: { payload?: unknown; protected?: unknown; signature?: unknown; signatures?: unknown };
  try {
    j = JSON.parse(raw);
  } catch {
    throw new VerifyError("malformed", "not a compact or JSON JWS");
  }
  if (j === null || typeof j !== "object") throw new VerifyError("malformed", "not a compact or JSON JWS");
  let entries = Array.isArray(j.signatures) ? (j.signatures as { protected?: unknown; signature?: unknown }[]) : [];
  if (entries.length === 0 && typeof j.signature === "string" && j.signature !== "") entries = [{ protected: j.protected, signature: j.signature }];
  if (entries.length === 0 || typeof j.payload !== "string" || j.payload === "") {
    throw new VerifyError("malformed", "JSON JWS needs a payload and at least one signature");
  }
  if (entries.length > MAX_SIGNERS) throw new VerifyError("malformed", `more than ${MAX_SIGNERS} signatures`);
  const payload = decode(j.payload, "payload");
  const sigs = entries.map((e) => {
    if (typeof e?.protected !== "string" || e.protected === "") throw new VerifyError("malformed", "every signature needs a protected header");
    const header = parseHeader(e.protected);
    const sig = decode(typeof e.signature === "string" ? e.signature : "", "signature");
    return { header, input: utf8(e.protected + "." + (j.payload as string)), sig };
  });
  return { sigs, payload };
}

/** checkSignature verifies one signature and returns the did:key of its kid. */
export function checkSignature(s: Signature): KeyDID {
  const kid = typeof s.header.kid === "string" ? s.header.kid : "";
  if ((Array.isArray(s.header.crit) && s.header.crit.length > 0) || s.header.b64 === false) {
    throw new VerifyError("malformed", "critical headers are not supported", kid);
  }
  const alg = s.header.alg;
  if (alg !== "EdDSA" && alg !== "ES256K") throw new VerifyError("unsupported-alg", `alg ${JSON.stringify(alg)} (use EdDSA or ES256K)`, kid);
  if (kid === "") throw new VerifyError("malformed", "protected header has no kid");
  let did: KeyDID;
  try {
    const p = parseKeyId(kid);
    if (p.did.method !== "key") throw new Error(`${p.did.method} signs nothing: only did:key keys sign`);
    if (p.fragment !== fragment(p.did)) throw new Error(`fragment ${JSON.stringify(p.fragment.slice(0, 60))} is not this did:key's key`);
    did = p.did;
  } catch (e) {
    throw new VerifyError("malformed", `kid: ${(e as Error).message}`, kid);
  }
  const want = did.keyType === "ed25519" ? "EdDSA" : "ES256K";
  if (alg !== want) throw new VerifyError("unsupported-alg", `alg ${alg} does not fit a ${did.keyType} key`, kid);
  if (!verifySignature(did, s.input, s.sig)) throw new VerifyError("bad-signature", "", kid);
  return did;
}

/**
 * signCompact signs payload (bytes, used as they are) with key as a compact JWS of type typ.
 * The protected header is {"alg","kid","typ"} in that order, as the Go code writes it.
 */
export function signCompact(key: Key, payload: Uint8Array | string, typ: string): string {
  const header = b64url(JSON.stringify({ alg: key.alg, kid: key.kid, typ }));
  const input = header + "." + b64url(payload);
  return input + "." + b64url(key.sign(utf8(input)));
}

/**
 * verifyJWS checks a compact JWS of type typ signed by a did:key and returns its payload and
 * the signer's DID: the rule of identity.VerifyJWS (cards, bindings), no envelope semantics.
 */
export function verifyJWS(raw: string, typ: string): { payload: Uint8Array; signer: string } {
  if (utf8(raw).length > MAX_ENVELOPE_SIZE) throw new VerifyError("malformed", `larger than ${MAX_ENVELOPE_SIZE} bytes`);
  const { sigs, payload } = parseCompact(raw);
  const h = sigs[0].header;
  if (h.typ !== typ) {
    throw new VerifyError("malformed", `typ ${JSON.stringify(String(h.typ ?? "")).slice(0, 42)}, want ${JSON.stringify(typ)}`, String(h.kid ?? ""));
  }
  const did = checkSignature(sigs[0]);
  return { payload, signer: did.did };
}
