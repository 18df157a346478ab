// Audits: an envelope whose body is an auditor's judgement of a subject's work
// (reputation/audit.go): kind surety.audit/1, the subject's DID, a score in [0, 1], evidence
// (a 32-byte hash, an optional http(s) URI), and what was audited: the envelope's bounty, or
// an envelope id in the body.

import { type BountyRef, type Envelope, type FillOptions, signEnvelope } from "./envelope.js";
import { parseDID } from "./did.js";
import { type Key } from "./keys.js";

/** AUDIT_KIND marks an envelope body as an audit. */
export const AUDIT_KIND = "surety.audit/1";
/** MAX_EVIDENCE_URI bounds the evidence URI (reputation/limits.go). */
export const MAX_EVIDENCE_URI = 512;

/** What an auditor says. */
export interface AuditInput {
  subject: string;
  score: number;
  evidence: { hash: string; uri?: string };
  /** The bounty audited (the envelope's bounty field), or ... */
  bounty?: BountyRef;
  /** ... the id of an envelope the subject sent. */
  envelope?: string;
}

/** Audit is an audit read from a verified envelope. */
export interface Audit {
  auditor: string;
  subject: string;
  bounty?: BountyRef;
  envelope?: string;
  score: number;
  evidence: { hash: string; uri?: string };
  time: number;
}

/** AuditError refuses an envelope that is no well-formed audit (problem audit-invalid). */
export class AuditError extends Error {
  readonly problem = "https://surety.dev/problems/audit-invalid";
  constructor(readonly detail: string) {
    super(`not a valid audit: ${detail}`);
    this.name = "AuditError";
  }
}

/**
 * signAudit signs an audit by key: an envelope with the audit as its body, naming the bounty
 * when one is audited. extra adds envelope fields (aud, chain_id, to) when a node wants them.
 */
export function signAudit(key: Key, a: AuditInput, extra: Record<string, unknown> = {}, opts: FillOptions = {}): string {
  const body: Record<string, unknown> = { kind: AUDIT_KIND, subject: a.subject, score: a.score, evidence: { ...a.evidence } };
  if (a.envelope !== undefined) body.envelope = a.envelope;
  const payload: Record<string, unknown> = { ...extra, body };
  if (a.bounty) payload.bounty = a.bounty;
  // Refuse here what the node would refuse, before anything is signed.
  parseAuditBody({ sender: key.did.did, bounty: a.bounty, body, iat: 1, exp: 2, id: "x", nonce: "x" });
  return signEnvelope(key, payload, opts);
}

const BODY_FIELDS = new Set(["kind", "subject", "envelope", "score", "evidence"]);
const EVIDENCE_FIELDS = new Set(["hash", "uri"]);

/** parseAuditBody reads the audit in a verified envelope with the node's checks; it throws AuditError. */
export function parseAuditBody(e: Envelope): Audit {
  const b = e.body as Record<string, unknown> | undefined;
  if (b === undefined || b === null) throw new AuditError("the envelope has no body");
  if (typeof b !== "object" || Array.isArray(b)) throw new AuditError("body: not an object");
  for (const k of Object.keys(b)) if (!BODY_FIELDS.has(k)) throw new AuditError(`body: unknown field ${JSON.stringify(k)}`);
  if (b.kind !== AUDIT_KIND) throw new AuditError(`body kind is ${JSON.stringify(String(b.kind ?? "")).slice(0, 42)}, want ${JSON.stringify(AUDIT_KIND)}`);
  if (typeof b.subject !== "string") throw new AuditError("subject: not a DID");
  try {
    parseDID(b.subject);
  } catch (err) {
    throw new AuditError(`subject: ${(err as Error).message}`);
  }
  if (b.subject === e.sender) throw new AuditError("an auditor cannot audit itself");
  const env = b.envelope === undefined || b.envelope === null ? "" : b.envelope;
  if (typeof env !== "string") throw new AuditError("envelope: not a string");
  if (e.bounty && env !== "") throw new AuditError("name a bounty or an envelope, not both");
  if (!e.bounty && env === "") throw new AuditError("name what was audited: the envelope's bounty, or an envelope id");
  if (e.bounty && !/^0x[0-9a-fA-F]{40}$/.test(String(e.bounty.escrow))) throw new AuditError(`bounty escrow ${JSON.stringify(String(e.bounty.escrow).slice(0, 60))} is not an address`);
  if (env.length > 128) throw new AuditError("envelope id longer than 128 characters");
  if (typeof b.score !== "number" || Number.isNaN(b.score) || b.score < 0 || b.score > 1) throw new AuditError("score must be a number from 0 to 1");
  const ev = b.evidence as Record<string, unknown> | undefined;
  if (ev === undefined || ev === null) throw new AuditError("evidence is missing: give at least its hash");
  if (typeof ev !== "object" || Array.isArray(ev)) throw new AuditError("evidence: not an object");
  for (const k of Object.keys(ev)) if (!EVIDENCE_FIELDS.has(k)) throw new AuditError(`evidence: unknown field ${JSON.stringify(k)}`);
  if (typeof ev.hash !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(ev.hash)) throw new AuditError("evidence hash must be 0x and 32 bytes of hex");
  const uri = ev.uri === undefined || ev.uri === null ? "" : ev.uri;
  if (typeof uri !== "string") throw new AuditError("evidence: uri is not a string");
  if (uri !== "") {
    if (uri.length > MAX_EVIDENCE_URI) throw new AuditError(`evidence URI longer than ${MAX_EVIDENCE_URI} characters`);
    let ok = false;
    try {
      const u = new URL(uri);
      ok = (u.protocol === "https:" || u.protocol === "http:") && u.host !== "";
    } catch {
      ok = false;
    }
    if (!ok) throw new AuditError("evidence URI must be an http(s) URL");
  }
  const a: Audit = { auditor: e.sender, subject: b.subject, score: b.score, evidence: { hash: ev.hash.toLowerCase(), ...(uri ? { uri } : {}) }, time: e.iat };
  if (env !== "") a.envelope = env;
  if (e.bounty) a.bounty = { ...e.bounty };
  return a;
}
