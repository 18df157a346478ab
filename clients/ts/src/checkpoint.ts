// The audit log's checkpoints (GET /v1/log/checkpoint): C2SP tlog-checkpoint text in a
// signed note (c2sp.org/signed-note), signed by the node's did:key: Ed25519 as signed-note's
// type 0x01, secp256k1 as Surety's experimental type 0xff "surety-es256k" (ES256K over
// SHA-256 of the text). As reputation/verify/checkpoint.go reads them.

import { createHash } from "node:crypto";
import { type KeyDID, parseDID } from "./did.js";
import { hex, utf8 } from "./encoding.js";
import { verifySignature } from "./keys.js";
import { ProofError } from "./merkle.js";

/** Bounds of a checkpoint (reputation/verify/limits.go). */
export const MAX_CHECKPOINT_SIZE = 64 << 10;
export const MAX_NOTE_SIGNATURES = 100;
/** ORIGIN_PREFIX starts a Surety log's origin. */
export const ORIGIN_PREFIX = "surety.log/";

/** Checkpoint is a checkpoint's text: the log's origin, size and root (hex). */
export interface Checkpoint {
  origin: string;
  size: number;
  root: string;
  extensions: string[];
}

/** checkpointOrigin is the origin (and key name) of node's log on a chain and anchor. */
export function checkpointOrigin(chainId: number, anchor: string, node: string): string {
  return `${ORIGIN_PREFIX}${chainId}/${anchor.toLowerCase()}/${node}`;
}

const bad = (msg: string, reason: ProofError["reason"] = "malformed"): never => {
  throw new ProofError(`checkpoint: ${msg}`, reason);
};

function checkNoteText(s: string): void {
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x20 && c !== 0x0a) bad(`control character 0x${c.toString(16).padStart(2, "0")}`);
    if (c >= 0xd800 && c <= 0xdfff) bad("not UTF-8");
  }
}

const B64STD = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function unb64std(s: string): Uint8Array | undefined {
  if (!B64STD.test(s)) return undefined;
  const b = Buffer.from(s, "base64");
  return b.toString("base64") === s ? new Uint8Array(b) : undefined; // strict: no stray bits
}

/** parseCheckpoint reads a checkpoint's note text (signatures are checked by openCheckpoint). */
export function parseCheckpoint(text: string): Checkpoint {
  checkNoteText(text);
  if (!text.endsWith("\n")) bad("the text does not end in a newline");
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3) bad(`${lines.length} lines, want at least origin, size and root`);
  const [origin, size, root64, ...ext] = lines;
  if (origin === "") bad("empty origin");
  if (!/^(0|[1-9][0-9]*)$/.test(size) || BigInt(size) >= 1n << 64n) bad(`size ${JSON.stringify(size.slice(0, 30))} is not a decimal without leading zeroes`);
  const root = unb64std(root64);
  if (!root || root.length !== 32) bad(`root ${JSON.stringify(root64.slice(0, 60))} is not 32 bytes of base64`);
  if (ext.some((e) => e === "")) bad("an empty extension line");
  return { origin, size: Number(size), root: hex(root!), extensions: ext };
}

const validKeyName = (name: string) => name !== "" && !/[\s+\u0000-\u001f]/u.test(name);

function noteType(d: KeyDID): Uint8Array {
  return d.keyType === "ed25519" ? new Uint8Array([1]) : new Uint8Array([0xff, ...utf8("surety-es256k")]);
}

/** noteKeyId is signed-note's key ID: SHA-256(name || "\n" || type || public key)[:4]. */
export function noteKeyId(name: string, d: KeyDID): number {
  const h = createHash("sha256").update(utf8(name + "\n")).update(noteType(d)).update(d.publicKey).digest();
  return h.readUInt32BE(0);
}

/**
 * openCheckpoint verifies a signed checkpoint of node's log whose origin is origin: a
 * signature by node's key under that key name must verify (others, such as witnesses'
 * cosignatures, are ignored); the text must parse and name the origin. It throws ProofError
 * with reason no-signature, bad-signature, wrong-origin or malformed.
 */
export function openCheckpoint(note: string, origin: string, node: string): Checkpoint {
  if (Buffer.byteLength(note) > MAX_CHECKPOINT_SIZE) bad(`larger than ${MAX_CHECKPOINT_SIZE} bytes`);
  let d: KeyDID;
  try {
    const p = parseDID(node);
    if (p.method !== "key") throw new Error("not a did:key");
    d = p;
  } catch (e) {
    return bad(`node ${node.slice(0, 80)}: ${(e as Error).message}`, "unsupported-key");
  }
  checkNoteText(note);
  const i = note.lastIndexOf("\n\n");
  if (i < 0) bad("no blank line before the signatures");
  const text = note.slice(0, i + 1);
  const block = note.slice(i + 2);
  if (block === "" || !block.endsWith("\n")) bad("no signature lines, or the last does not end in a newline");
  const lines = block.slice(0, -1).split("\n");
  if (lines.length > MAX_NOTE_SIGNATURES) bad(`${lines.length} signatures, at most ${MAX_NOTE_SIGNATURES}`);
  const want = noteKeyId(origin, d);
  let verified = false;
  for (const line of lines) {
    if (!line.startsWith("— ")) bad("a signature line does not start with an em dash and a space");
    const rest = line.slice(2);
    const sp = rest.indexOf(" ");
    const name = sp < 0 ? "" : rest.slice(0, sp);
    const b64 = sp < 0 ? "" : rest.slice(sp + 1);
    if (sp < 0 || !validKeyName(name) || b64.includes(" ")) bad('a signature line is not "— name signature"');
    const raw = unb64std(b64);
    if (!raw || raw.length < 5) bad("a signature is not base64 of a key ID and a signature");
    const id = Buffer.from(raw!.slice(0, 4)).readUInt32BE(0);
    if (name !== origin || id !== want) continue; // another key's
    if (!verifySignature(d, utf8(text), raw!.slice(4))) bad(`signed as ${node}, and the signature does not verify`, "bad-signature");
    verified = true;
  }
  if (!verified) bad(`none of ${lines.length} signatures is ${node}'s under ${JSON.stringify(origin.slice(0, 200))}`, "no-signature");
  const c = parseCheckpoint(text);
  if (c.origin !== origin) bad(`origin ${JSON.stringify(c.origin.slice(0, 200))}, want ${JSON.stringify(origin)}`, "wrong-origin");
  return c;
}
