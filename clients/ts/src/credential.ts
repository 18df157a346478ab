// W3C VC 2.0 credentials the node issues, secured with JOSE (identity/vc2.go): a compact JWS
// of typ vc+jwt (cty vc), EdDSA by the node's Ed25519 did:key, whose payload is the
// credential with its JWT claims (iss, sub, nbf, exp) agreeing with issuer,
// credentialSubject.id, validFrom and validUntil; and the Bitstring Status Lists that carry
// their revocation (identity/statuslist.go). Verified as the node verifies them.

import { gunzipSync } from "node:zlib";
import { type KeyDID, parseDID } from "./did.js";
import { keyId } from "./did.js";
import { utf8 } from "./encoding.js";
import { verifySignature } from "./keys.js";

export const VC_JWT_TYPE = "vc+jwt";
export const VC_CONTENT_TYPE = "vc";
export const CREDENTIALS_V2_CONTEXT = "https://www.w3.org/ns/credentials/v2";
export const VERIFIABLE_CREDENTIAL_TYPE = "VerifiableCredential";
export const STAKE_CREDENTIAL_TYPE = "SuretyStakeCredential";
export const STATUS_LIST_CREDENTIAL_TYPE = "BitstringStatusListCredential";
export const STATUS_LIST_TYPE = "BitstringStatusList";
export const STATUS_LIST_ENTRY_TYPE = "BitstringStatusListEntry";
export const STATUS_PURPOSE_REVOCATION = "revocation";
/** Bounds (identity/limits.go). */
export const MAX_CREDENTIAL_SIZE = 64 << 10;
export const STATUS_LIST_BITS = 1 << 17;
const MAX_STATUS_LIST_BYTES = 1 << 20;

type Slug = "credential-malformed" | "credential-bad-signature" | "credential-wrong-issuer" | "credential-expired" | "credential-not-yet-valid" | "credential-revoked" | "credential-status";

/** CredentialError refuses a credential, with the node's problem type. */
export class CredentialError extends Error {
  readonly problem: string;
  constructor(
    readonly slug: Slug,
    readonly detail: string,
  ) {
    super(`${slug}: ${detail}`);
    this.name = "CredentialError";
    this.problem = "https://surety.dev/problems/" + slug;
  }
}

const refuse = (slug: Slug, d: string): never => {
  throw new CredentialError(slug, d);
};

/** A status entry of a credential. */
export interface StatusEntry {
  id: string;
  type: string;
  statusPurpose: string;
  statusListIndex: string;
  statusListCredential: string;
}

/** Credential is a VC 2.0 credential's JSON (the members Surety reads). */
export interface Credential {
  "@context": string[];
  id?: string;
  type: string[];
  issuer: string;
  validFrom: string;
  validUntil?: string;
  credentialSubject: Record<string, unknown>;
  credentialStatus?: StatusEntry;
  iss?: string;
  sub?: string;
  nbf?: number;
  exp?: number;
  iat?: number;
}

/** VerifiedCredential is a credential whose signature, claims and window checked out. */
export interface VerifiedCredential {
  credential: Credential;
  issuer: KeyDID;
  validFrom: number;
  /** Unix seconds; undefined when it has none. */
  validUntil?: number;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
function parseTime(s: string, what: string): number {
  const t = RFC3339.test(s) ? Date.parse(s) : NaN;
  if (Number.isNaN(t)) refuse("credential-malformed", `${what}: ${JSON.stringify(s.slice(0, 40))} is not an RFC 3339 time`);
  return t / 1000;
}

function b64(seg: string, what: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(seg) || seg.length % 4 === 1) refuse("credential-malformed", `${what} is not base64url`);
  return new Uint8Array(Buffer.from(seg, "base64url"));
}

const strs = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");

/** Options of verifyCredential. */
export interface CredentialCheck {
  /** Unix seconds; default now. */
  now?: number;
  /** Clock skew, seconds; default 30. */
  skew?: number;
  /** The issuer the verifier trusts (the node's DID); any when empty. */
  issuer?: string;
}

/**
 * verifyCredential checks a vc+jwt as identity.VerifyCredentialJWT does: the header (typ
 * vc+jwt, cty vc, alg EdDSA, no crit), the VC 2.0 shape, the issuer an Ed25519 did:key whose
 * key id is kid, the signature, the expected issuer, the JWT claims against the credential,
 * and the validity window. It throws CredentialError.
 */
export function verifyCredential(raw: string, chk: CredentialCheck = {}): VerifiedCredential {
  if (raw.length > MAX_CREDENTIAL_SIZE) refuse("credential-malformed", `${raw.length} bytes, over the limit of ${MAX_CREDENTIAL_SIZE}`);
  const parts = raw.trim().split(".");
  if (parts.length !== 3) refuse("credential-malformed", "not a compact JWS (want header.payload.signature)");
  let h: Record<string, unknown>;
  try {
    h = JSON.parse(Buffer.from(b64(parts[0], "header")).toString("utf8"));
  } catch (e) {
    if (e instanceof CredentialError) throw e;
    return refuse("credential-malformed", "header: not JSON");
  }
  if (h === null || typeof h !== "object" || Array.isArray(h)) refuse("credential-malformed", "header: not an object");
  for (const k of ["alg", "kid", "typ", "cty"]) if (h[k] !== undefined && h[k] !== null && typeof h[k] !== "string") refuse("credential-malformed", `header: ${k} is not a string`);
  if (h.crit !== undefined && h.crit !== null && !strs(h.crit)) refuse("credential-malformed", "header: crit is not a list of strings");
  if (h.typ !== VC_JWT_TYPE) refuse("credential-malformed", `typ is ${JSON.stringify(h.typ ?? "")}, want ${JSON.stringify(VC_JWT_TYPE)}`);
  if (h.cty && h.cty !== VC_CONTENT_TYPE) refuse("credential-malformed", `cty is ${JSON.stringify(h.cty)}, want ${JSON.stringify(VC_CONTENT_TYPE)}`);
  if (h.alg !== "EdDSA") refuse("credential-malformed", `alg is ${JSON.stringify(h.alg ?? "")}; Surety credentials are EdDSA`);
  if (Array.isArray(h.crit) && h.crit.length > 0) refuse("credential-malformed", "crit names extensions this verifier does not know");
  const payload = b64(parts[1], "payload");
  const sig = b64(parts[2], "signature");
  let c: Credential;
  try {
    c = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch {
    return refuse("credential-malformed", "payload: not JSON");
  }
  if (c === null || typeof c !== "object" || Array.isArray(c)) refuse("credential-malformed", "payload: not an object");
  const typed: [string, (v: unknown) => boolean][] = [
    ["@context", strs], ["type", strs], ["id", (v) => typeof v === "string"], ["issuer", (v) => typeof v === "string"],
    ["validFrom", (v) => typeof v === "string"], ["validUntil", (v) => typeof v === "string"], ["iss", (v) => typeof v === "string"],
    ["sub", (v) => typeof v === "string"], ["nbf", Number.isInteger], ["exp", Number.isInteger], ["iat", Number.isInteger], ["credentialStatus", (v) => typeof v === "object"],
  ];
  for (const [k, ok] of typed) {
    const v = (c as unknown as Record<string, unknown>)[k];
    if (v !== undefined && v !== null && !ok(v)) refuse("credential-malformed", `payload: ${k} has the wrong type`);
  }
  if (!c["@context"]?.length || c["@context"][0] !== CREDENTIALS_V2_CONTEXT) refuse("credential-malformed", `@context must start with ${CREDENTIALS_V2_CONTEXT}`);
  if (!(c.type ?? []).includes(VERIFIABLE_CREDENTIAL_TYPE)) refuse("credential-malformed", `type must include ${VERIFIABLE_CREDENTIAL_TYPE}`);
  if (!c.validFrom) refuse("credential-malformed", "validFrom is required");
  if (c.credentialSubject === null || typeof c.credentialSubject !== "object" || Array.isArray(c.credentialSubject)) refuse("credential-malformed", "credentialSubject must be an object");
  let iss: KeyDID | undefined;
  try {
    const d = parseDID(String(c.issuer ?? ""));
    if (d.method === "key" && d.keyType === "ed25519") iss = d;
  } catch {
    iss = undefined;
  }
  if (!iss) return refuse("credential-malformed", `issuer ${JSON.stringify(String(c.issuer).slice(0, 120))} is not an Ed25519 did:key`);
  if (h.kid !== keyId(iss)) refuse("credential-malformed", `kid ${JSON.stringify(String(h.kid ?? "").slice(0, 140))} is not the issuer's key ${keyId(iss)}`);
  if (!verifySignature(iss, utf8(parts[0] + "." + parts[1]), sig)) refuse("credential-bad-signature", `the signature does not verify with ${keyId(iss)}`);
  if (chk.issuer && c.issuer !== chk.issuer) refuse("credential-wrong-issuer", `issued by ${c.issuer}, want ${chk.issuer}`);
  const from = parseTime(c.validFrom, "validFrom");
  let until: number | undefined;
  if (c.validUntil) {
    until = parseTime(c.validUntil, "validUntil");
    if (until < from) refuse("credential-malformed", "validUntil is before validFrom");
  }
  const subjId = typeof c.credentialSubject.id === "string" ? c.credentialSubject.id : "";
  if (c.iss && c.iss !== c.issuer) refuse("credential-malformed", "iss disagrees with issuer");
  if (c.sub && c.sub !== subjId) refuse("credential-malformed", "sub disagrees with credentialSubject.id");
  if (c.nbf && c.nbf !== Math.floor(from)) refuse("credential-malformed", "nbf disagrees with validFrom");
  if (c.exp && (until === undefined || c.exp !== Math.floor(until))) refuse("credential-malformed", "exp disagrees with validUntil");
  const now = chk.now ?? Date.now() / 1000;
  const skew = chk.skew ?? 30;
  if (now + skew < from) refuse("credential-not-yet-valid", `validFrom ${c.validFrom}`);
  if (until !== undefined && now - skew > until) refuse("credential-expired", `validUntil ${c.validUntil}`);
  return { credential: c, issuer: iss, validFrom: from, validUntil: until };
}

/** decodeStatusList decodes a list's encodedList: multibase u, base64url, gzip; ≥ 16 KiB. */
export function decodeStatusList(enc: string): Uint8Array {
  const bad = (d: string): never => refuse("credential-status", d);
  if (enc.length > MAX_CREDENTIAL_SIZE) bad(`encodedList is ${enc.length} characters, over ${MAX_CREDENTIAL_SIZE}`);
  if (!enc.startsWith("u")) bad("encodedList must start with the multibase prefix u (base64url)");
  if (!/^[A-Za-z0-9_-]*$/.test(enc.slice(1)) || enc.length % 4 === 2) bad("encodedList is not base64url");
  let list: Buffer;
  try {
    list = gunzipSync(Buffer.from(enc.slice(1), "base64url"), { maxOutputLength: MAX_STATUS_LIST_BYTES + 1 });
  } catch (e) {
    return bad(`encodedList: ${(e as Error).message}`);
  }
  if (list.length > MAX_STATUS_LIST_BYTES) bad(`the bitstring is over ${MAX_STATUS_LIST_BYTES} bytes`);
  if (list.length < STATUS_LIST_BITS / 8) bad(`the bitstring is ${list.length} bytes; Bitstring Status List requires at least ${STATUS_LIST_BITS / 8}`);
  return new Uint8Array(list);
}

/** statusBit is bit index of a list (the first bit is the high bit of byte 0). */
export function statusBit(list: Uint8Array, index: number): boolean {
  if (index < 0 || Math.floor(index / 8) >= list.length) return false;
  return (list[Math.floor(index / 8)] & (0x80 >> index % 8)) !== 0;
}

/**
 * checkCredentialStatus checks a credential's status entry against its verified status list
 * (identity.CheckCredentialStatus): same list and issuer, a revocation list, the index in
 * range and its bit clear. It throws CredentialError (credential-status, credential-revoked).
 */
export function checkCredentialStatus(cred: VerifiedCredential, list: VerifiedCredential): void {
  const st = cred.credential.credentialStatus;
  if (!st) return;
  const bad = (d: string): never => refuse("credential-status", d);
  if (st.type !== STATUS_LIST_ENTRY_TYPE || st.statusPurpose !== STATUS_PURPOSE_REVOCATION) bad(`credentialStatus is ${st.type} for ${JSON.stringify(st.statusPurpose)}`);
  if (!/^[0-9]+$/.test(String(st.statusListIndex))) bad(`statusListIndex ${JSON.stringify(String(st.statusListIndex).slice(0, 40))} is not a non-negative integer`);
  const index = Number(st.statusListIndex);
  const lc = list.credential;
  if (!(lc.type ?? []).includes(STATUS_LIST_CREDENTIAL_TYPE)) bad(`the status list is not a ${STATUS_LIST_CREDENTIAL_TYPE}`);
  if (lc.id !== st.statusListCredential) bad(`the status list is ${String(lc.id).slice(0, 200)}; the credential names ${String(st.statusListCredential).slice(0, 200)}`);
  if (lc.issuer !== cred.credential.issuer) bad(`the status list is issued by ${lc.issuer}, the credential by ${cred.credential.issuer}`);
  const subj = lc.credentialSubject as { type?: unknown; statusPurpose?: unknown; encodedList?: unknown };
  if (subj.type !== STATUS_LIST_TYPE || subj.statusPurpose !== STATUS_PURPOSE_REVOCATION) bad(`the status list is a ${String(subj.type)} for ${JSON.stringify(subj.statusPurpose)}`);
  if (typeof subj.encodedList !== "string") bad("the status list has no encodedList");
  const bits = decodeStatusList(subj.encodedList as string);
  if (index >= bits.length * 8) bad(`statusListIndex ${index} is past the list's ${bits.length * 8} bits`);
  if (statusBit(bits, index)) refuse("credential-revoked", `bit ${index} of ${st.statusListCredential} is set`);
}
