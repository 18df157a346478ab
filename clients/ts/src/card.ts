// Surety's signed Agent Cards (registry/card.go): a compact JWS of typ surety-card+jws by the
// agent's did:key over the card's JSON. (The A2A v1.0 form of a card is the a2a helper's
// work; this is the card the node registers today at POST /v1/agents.)

import { isAddress } from "viem";
import { goJSON } from "./encoding.js";
import { VerifyError, signCompact, verifyJWS } from "./jws.js";
import { type Key } from "./keys.js";

/** CARD_TYPE is the typ of a signed card. */
export const CARD_TYPE = "surety-card+jws";

/** Bounds of a card (registry/limits.go). */
export const MAX_CARD_SIZE = 16 << 10;
export const CARD_LIMITS = { name: 100, description: 2000, capabilities: 32, capability: 64, endpoints: 8, endpointURL: 512, aheadSeconds: 300 } as const;

/** Endpoint is where an agent answers: an A2A, MCP or plain HTTP URL. */
export interface Endpoint {
  kind: "a2a" | "mcp" | "http";
  url: string;
}

/** Card is what an agent says of itself. */
export interface Card {
  did: string;
  name: string;
  description?: string;
  capabilities: string[];
  endpoints?: Endpoint[];
  /** The wallet the agent is paid at (0x address). */
  wallet: string;
  /** Increases with each new card of the DID; the node keeps the highest. */
  seq: number;
  /** Unix seconds. */
  updated: number;
}

/** CardError says why a card was refused, with the node's problem slug. */
export class CardError extends Error {
  readonly problem: string;
  constructor(
    readonly slug: "card-malformed" | "card-forged" | "card-wrong-did" | "card-too-large",
    readonly detail: string,
  ) {
    super(`${slug}: ${detail}`);
    this.name = "CardError";
    this.problem = "https://surety.dev/problems/" + slug;
  }
}

/** cardJSON is the card's JSON in the field order the Go code writes. */
export function cardJSON(c: Card): string {
  const o: Record<string, unknown> = { did: c.did, name: c.name };
  if (c.description) o.description = c.description;
  o.capabilities = c.capabilities ?? [];
  if (c.endpoints && c.endpoints.length > 0) o.endpoints = c.endpoints.map((e) => ({ kind: e.kind, url: e.url }));
  o.wallet = c.wallet.toLowerCase();
  o.seq = c.seq;
  o.updated = c.updated;
  return goJSON(o);
}

/** signCard signs a card with the key of its DID and returns the compact JWS. */
export function signCard(c: Card, key: Key): string {
  if (c.did !== key.did.did) throw new CardError("card-wrong-did", `the card is ${c.did}, the key is ${key.did.did}`);
  validateCard(c, Math.floor(Date.now() / 1000));
  return signCompact(key, cardJSON(c), CARD_TYPE);
}

const CAPABILITY = /^[a-z0-9.\-:/]+$/;
const runes = (s: string) => [...s].length;

/** validateCard checks a card's fields as the node does; it throws CardError. */
export function validateCard(c: Card, now: number): void {
  const bad = (d: string): never => {
    throw new CardError("card-malformed", d);
  };
  if (!Number.isInteger(c.seq) || c.seq < 1) bad("seq must be at least 1");
  if (typeof c.name !== "string" || c.name.trim() === "" || runes(c.name) > CARD_LIMITS.name) bad(`name must be 1 to ${CARD_LIMITS.name} characters`);
  if (c.description !== undefined && (typeof c.description !== "string" || runes(c.description) > CARD_LIMITS.description)) {
    bad(`description is longer than ${CARD_LIMITS.description} characters`);
  }
  const caps = c.capabilities ?? [];
  if (!Array.isArray(caps)) bad("capabilities must be a list");
  if (caps.length > CARD_LIMITS.capabilities) bad(`more than ${CARD_LIMITS.capabilities} capabilities`);
  const eps = c.endpoints ?? [];
  if (!Array.isArray(eps)) bad("endpoints must be a list");
  if (eps.length > CARD_LIMITS.endpoints) bad(`more than ${CARD_LIMITS.endpoints} endpoints`);
  if (!Number.isInteger(c.updated) || c.updated <= 0 || c.updated > now + CARD_LIMITS.aheadSeconds) bad("updated must be a unix time, not in the future");
  const seen = new Set<string>();
  for (const cap of caps) {
    if (typeof cap !== "string" || cap.length > CARD_LIMITS.capability || !CAPABILITY.test(cap)) {
      bad(`capability ${JSON.stringify(String(cap).slice(0, 70))}: use 1 to ${CARD_LIMITS.capability} of a-z 0-9 . - : /`);
    }
    if (seen.has(cap)) bad(`capability ${JSON.stringify(cap)} listed twice`);
    seen.add(cap);
  }
  for (const e of eps) {
    if (!["a2a", "mcp", "http"].includes(e?.kind)) bad(`endpoint kind ${JSON.stringify(String(e?.kind).slice(0, 20))}: use a2a, mcp or http`);
    let ok = false;
    try {
      const u = new URL(e.url);
      ok = u.host !== "" && ["https:", "http:", "wss:", "ws:"].includes(u.protocol) && e.url.length <= CARD_LIMITS.endpointURL;
    } catch {
      ok = false;
    }
    if (!ok) bad(`endpoint URL ${JSON.stringify(String(e.url).slice(0, 80))} is not an http(s) or ws(s) URL`);
  }
}

/**
 * parseCard verifies a signed card as the node does (registry.Parse): size, the JWS by a
 * did:key, typ, the card's DID is the signer's, and its fields. It throws CardError.
 */
export function parseCard(raw: string, now = Math.floor(Date.now() / 1000)): { card: Card; jws: string } {
  const jws = raw.trim();
  if (Buffer.byteLength(jws) > MAX_CARD_SIZE) throw new CardError("card-too-large", `${Buffer.byteLength(jws)} bytes, at most ${MAX_CARD_SIZE}`);
  let payload: Uint8Array;
  let signer: string;
  try {
    ({ payload, signer } = verifyJWS(jws, CARD_TYPE));
  } catch (e) {
    if (e instanceof VerifyError && e.reason === "bad-signature") throw new CardError("card-forged", "signature does not verify");
    throw new CardError("card-malformed", (e as Error).message);
  }
  let c: Card;
  try {
    c = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch (e) {
    throw new CardError("card-malformed", `not a card: ${(e as Error).message}`);
  }
  if (c === null || typeof c !== "object" || Array.isArray(c)) throw new CardError("card-malformed", "not a card");
  if (typeof c.did !== "string" || typeof c.wallet !== "string" || !isAddress(c.wallet, { strict: false })) {
    throw new CardError("card-malformed", "not a card: did and wallet (an address) are required");
  }
  if (c.did !== signer) throw new CardError("card-wrong-did", `signed by ${signer}`);
  validateCard(c, now);
  return { card: c, jws };
}
