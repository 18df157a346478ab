// A2A v1.0 Agent Cards as Surety signs and reads them (docs/a2a.md, a2a/, registry/a2a.go):
// the members @a2a-js/sdk 1.3.0 reads, empty values dropped, in RFC 8785 (JCS) form, signed as
// A2A §8.4 says (a flattened JWS with a detached payload in signatures[], protected header
// {alg, kid, typ: "JOSE"}); Surety's trust extension carries the agent's DID, wallet, seq and
// updated. A registered card is signed by the agent; a served one by the node alone.

import { getAddress, isAddress } from "viem";
import { type Card, CardError, validateCard } from "./card.js";
import { b64url } from "./encoding.js";
import { VerifyError, verifyJWS } from "./jws.js";
import { type Key } from "./keys.js";

/** The trust extension's URI, and the params an agent signs. */
export const TRUST_EXTENSION_URI = "https://surety.dev/ext/trust/v1";
export const TRUST_EXTENSION_DESCRIPTION =
  "Surety trust: the agent's DID, wallet and card sequence; in a node-served card also its stake, reputation and the links to check them";
export const AGENT_PARAMS = ["did", "wallet", "seq", "updated"];
/** The typ of a card signature's protected header. */
export const A2A_SIGNATURE_TYPE = "JOSE";
/** The most signatures of a card tried, and the deepest nesting read. */
export const MAX_CARD_SIGNATURES = 4;
export const MAX_JSON_DEPTH = 64;
const MAX_CARD_SIZE = 16 << 10;
const DEFAULT_MODES = ["text/plain", "application/json"];

/** An A2A AgentCard as JSON (the members Surety reads). */
export type AgentCard = Record<string, unknown> & {
  name?: string;
  description?: string;
  version?: string;
  supportedInterfaces?: { url?: string; protocolBinding?: string; protocolVersion?: string; tenant?: string }[];
  capabilities?: { extensions?: { uri?: string; description?: string; required?: boolean; params?: Record<string, unknown> }[]; [k: string]: unknown };
  defaultInputModes?: string[];
  defaultOutputModes?: string[];
  skills?: { id?: string; name?: string; description?: string; tags?: string[] }[];
  signatures?: { protected: string; signature: string; header?: Record<string, unknown> }[];
};

const malformed = (d: string): never => {
  throw new CardError("card-malformed", d);
};

// ---- I-JSON (RFC 7493) ----

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** parseIJSON parses I-JSON: no duplicate member names, no lone surrogates, nesting ≤ 64. */
export function parseIJSON(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const fail = (what: string): never => malformed(`not I-JSON: ${what} at ${i}`);
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\") i++;
      else if (text.charCodeAt(i) < 0x20) fail("a control character in a string");
      i++;
    }
    if (i >= text.length) fail("an unterminated string");
    i++;
    let s: string;
    try {
      s = JSON.parse(text.slice(start, i));
    } catch {
      return fail("a bad string");
    }
    if (LONE.test(s)) fail("a lone surrogate");
    return s;
  };
  const value = (depth: number): unknown => {
    if (depth > MAX_JSON_DEPTH) fail(`nesting deeper than ${MAX_JSON_DEPTH}`);
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const o: Record<string, unknown> = {};
      const names = new Set<string>();
      ws();
      if (text[i] === "}") {
        i++;
        return o;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("a member name");
        const k = str();
        if (names.has(k)) fail(`member ${JSON.stringify(k.slice(0, 40))} twice`);
        names.add(k);
        ws();
        if (text[i] !== ":") fail("':'");
        i++;
        Object.defineProperty(o, k, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return o;
        }
        fail("',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const a: unknown[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return a;
      }
      for (;;) {
        a.push(value(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return a;
        }
        fail("',' or ']'");
      }
    }
    if (c === '"') return str();
    const m = /^(?:-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) fail("a value");
    i += m![0].length;
    const v = JSON.parse(m![0]);
    if (typeof v === "number" && !Number.isFinite(v)) fail("a number out of range");
    return v;
  };
  if (LONE.test(text)) fail("a lone surrogate");
  const v = value(1);
  ws();
  if (i !== text.length) fail("data after the value");
  return v;
}

/** jcs writes a JSON value in RFC 8785 form: members sorted by UTF-16 code units, no spaces. */
export function jcs(v: unknown): string {
  if (Array.isArray(v)) return "[" + v.map(jcs).join(",") + "]";
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return "{" + Object.keys(o).sort().map((k) => JSON.stringify(k) + ":" + jcs(o[k])).join(",") + "}";
  }
  if (typeof v === "number" && !Number.isFinite(v)) throw new Error("jcs: not a finite number");
  return JSON.stringify(v);
}

// ---- the members the SDK reads, and normalizing ----

type Kind = "string" | "bool" | "strings" | "object" | "nested" | "nesteds" | "refused";
type Schema = Record<string, { kind: Kind; schema?: Schema }>;
const S = (kind: Kind, schema?: Schema) => ({ kind, schema });
const iface: Schema = { url: S("string"), protocolBinding: S("string"), tenant: S("string"), protocolVersion: S("string"), protocol_binding: S("refused"), protocol_version: S("refused") };
const provider: Schema = { url: S("string"), organization: S("string") };
const extension: Schema = { uri: S("string"), description: S("string"), required: S("bool"), params: S("object") };
const caps: Schema = { streaming: S("bool"), pushNotifications: S("bool"), extensions: S("nesteds", extension), extendedAgentCard: S("bool"), push_notifications: S("refused"), extended_agent_card: S("refused") };
const skill: Schema = {
  id: S("string"), name: S("string"), description: S("string"), tags: S("strings"), examples: S("strings"), inputModes: S("strings"), outputModes: S("strings"),
  securityRequirements: S("refused"), security_requirements: S("refused"), input_modes: S("refused"), output_modes: S("refused"),
};
const signature: Schema = { protected: S("string"), signature: S("string"), header: S("object") };
const cardSchema: Schema = {
  name: S("string"), description: S("string"), supportedInterfaces: S("nesteds", iface), provider: S("nested", provider), version: S("string"),
  documentationUrl: S("string"), capabilities: S("nested", caps), defaultInputModes: S("strings"), defaultOutputModes: S("strings"),
  skills: S("nesteds", skill), signatures: S("nesteds", signature), iconUrl: S("string"),
  securitySchemes: S("refused"), securityRequirements: S("refused"), security_schemes: S("refused"), security_requirements: S("refused"),
  supported_interfaces: S("refused"), documentation_url: S("refused"), default_input_modes: S("refused"), default_output_modes: S("refused"), icon_url: S("refused"),
};

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function clean(v: unknown): unknown {
  if (v === null || v === undefined || v === "") return undefined;
  if (Array.isArray(v)) {
    const out = v.map(clean).filter((e) => e !== undefined);
    return out.length ? out : undefined;
  }
  if (isObj(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) {
      const c = clean(e);
      if (c !== undefined) Object.defineProperty(out, k, { value: c, enumerable: true, writable: true, configurable: true });
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v;
}

function normalize(obj: Record<string, unknown>, schema: Schema, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(obj)) {
    const m = Object.hasOwn(schema, name) ? schema[name] : undefined;
    if (!m || v === null) continue;
    const at = path + name;
    switch (m.kind) {
      case "refused":
        malformed(`${at} is not supported in a card Surety signs or verifies`);
        break;
      case "string":
        if (typeof v !== "string") malformed(`${at} must be a string`);
        if (v !== "") out[name] = v;
        break;
      case "bool":
        if (typeof v !== "boolean") malformed(`${at} must be true or false`);
        if (!(name === "required" && v === false)) out[name] = v;
        break;
      case "strings": {
        if (!Array.isArray(v) || v.some((e) => typeof e !== "string")) malformed(`${at} must be a list of strings`);
        const kept = (v as string[]).filter((e) => e !== "");
        if (kept.length) out[name] = kept;
        break;
      }
      case "object": {
        if (!isObj(v)) malformed(`${at} must be an object`);
        const c = clean(v);
        if (c !== undefined) out[name] = c;
        break;
      }
      case "nested": {
        if (!isObj(v)) malformed(`${at} must be an object`);
        const n = normalize(v as Record<string, unknown>, m.schema!, at + ".");
        if (Object.keys(n).length) out[name] = n;
        break;
      }
      case "nesteds": {
        if (!Array.isArray(v)) malformed(`${at} must be a list`);
        const kept: unknown[] = [];
        (v as unknown[]).forEach((e, i) => {
          if (!isObj(e)) malformed(`${at}[${i}] must be an object`);
          const n = normalize(e as Record<string, unknown>, m.schema!, `${at}[${i}].`);
          if (Object.keys(n).length) kept.push(n);
        });
        if (kept.length) out[name] = kept;
        break;
      }
    }
  }
  return out;
}

/**
 * decodeA2ACard reads a card's JSON text as Surety does: I-JSON, the SDK's members only,
 * empty values dropped. It returns the normalized card and its canonical form (JCS, without
 * signatures): what a card signature signs.
 */
export function decodeA2ACard(text: string): { card: AgentCard; canonical: string } {
  const v = parseIJSON(text);
  if (!isObj(v)) malformed("a card is a JSON object");
  const card = normalize(v as Record<string, unknown>, cardSchema, "") as AgentCard;
  const { signatures: _drop, ...rest } = card;
  void _drop;
  return { card, canonical: jcs(rest) };
}

/** validateA2ACard refuses a card without A2A's required members. */
export function validateA2ACard(c: AgentCard): void {
  if (!c.name) malformed("name is required");
  if (!c.description) malformed("description is required");
  if (!c.version) malformed("version is required");
  if (!c.supportedInterfaces?.length) malformed("supportedInterfaces is required");
  if (!c.capabilities) malformed("capabilities is required");
  if (!c.defaultInputModes?.length) malformed("defaultInputModes is required");
  if (!c.defaultOutputModes?.length) malformed("defaultOutputModes is required");
  c.supportedInterfaces!.forEach((s, i) => {
    if (!s.url || !s.protocolBinding) malformed(`supportedInterfaces[${i}] needs url and protocolBinding`);
  });
  (c.skills ?? []).forEach((s, i) => {
    if (!s.id || !s.name || !s.description || !s.tags?.length) malformed(`skills[${i}] needs id, name, description and tags`);
  });
}

/** capabilityTags are a capability and each parent in its "/" hierarchy. */
export function capabilityTags(cap: string): string[] {
  const tags = [cap];
  for (let i = cap.lastIndexOf("/"); i > 0; i = cap.lastIndexOf("/", i - 1)) tags.push(cap.slice(0, i));
  return tags;
}

/** toA2A maps a Surety card onto an A2A card (unsigned), as registry.ToA2A does. */
export function toA2A(c: Card): AgentCard {
  const out: AgentCard = {
    name: c.name,
    description: c.description || "An agent registered with Surety as " + c.did,
    version: String(c.seq),
    defaultInputModes: DEFAULT_MODES,
    defaultOutputModes: DEFAULT_MODES,
    capabilities: { extensions: [{ uri: TRUST_EXTENSION_URI, description: TRUST_EXTENSION_DESCRIPTION, params: { did: c.did, wallet: getAddress(c.wallet), seq: c.seq, updated: c.updated } }] },
  };
  const ifaces = (c.endpoints ?? []).map((e) =>
    e.kind === "a2a" ? { url: e.url, protocolBinding: "JSONRPC", protocolVersion: "1.0" } : { url: e.url, protocolBinding: e.kind === "mcp" ? "MCP" : "HTTP" },
  );
  if (ifaces.length) out.supportedInterfaces = ifaces;
  const skills = (c.capabilities ?? []).map((cap) => ({ id: cap, name: cap, description: "Capability " + cap, tags: capabilityTags(cap) }));
  if (skills.length) out.skills = skills;
  return out;
}

const whole = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 2 ** 53;

/** fromA2A reads the Surety card an A2A card carries (registry.FromA2A); it throws CardError. */
export function fromA2A(ac: AgentCard): Card {
  const exts = (ac.capabilities?.extensions ?? []).filter((e) => e.uri === TRUST_EXTENSION_URI);
  if (exts.length === 0) malformed(`no Surety trust extension (${TRUST_EXTENSION_URI}) in capabilities.extensions`);
  if (exts.length > 1) malformed(`the trust extension is listed ${exts.length} times`);
  // Nor a look-alike or any other extension under Surety's namespace (registry.FromA2A).
  for (const e of ac.capabilities?.extensions ?? []) {
    const u = String(e.uri ?? "").toLowerCase();
    if (e.uri !== TRUST_EXTENSION_URI && (u.startsWith("https://surety.dev") || u.startsWith("http://surety.dev"))) {
      malformed(`extension ${JSON.stringify(String(e.uri).slice(0, 80))}: an agent's card may name only ${TRUST_EXTENSION_URI} under surety.dev`);
    }
  }
  const p = exts[0].params ?? {};
  for (const k of Object.keys(p)) if (!AGENT_PARAMS.includes(k)) malformed(`trust extension param ${JSON.stringify(k.slice(0, 40))}: an agent signs only ${AGENT_PARAMS.join(", ")}`);
  if (typeof p.did !== "string" || p.did === "") malformed("the trust extension names no did");
  if (typeof p.wallet !== "string" || !isAddress(p.wallet, { strict: false })) malformed("the trust extension's wallet is not an address");
  if (!whole(p.seq)) malformed("the trust extension's seq must be a whole number up to 2^53");
  if (!whole(p.updated)) malformed("the trust extension's updated must be a unix time");
  return {
    did: p.did as string,
    name: ac.name ?? "",
    description: ac.description,
    wallet: getAddress(p.wallet as string),
    seq: p.seq as number,
    updated: p.updated as number,
    capabilities: (ac.skills ?? []).map((s) => s.id ?? ""),
    endpoints: (ac.supportedInterfaces ?? []).map((i) => ({ kind: i.protocolBinding === "MCP" ? "mcp" : i.protocolBinding === "HTTP" ? "http" : "a2a", url: i.url ?? "" })),
  };
}

/**
 * signA2ACard maps a Surety card onto A2A, signs its canonical form with the card's DID key
 * (A2A §8.4) and returns the card's JSON text (JCS), as POST /v1/agents takes it.
 */
export function signA2ACard(c: Card, key: Key): string {
  if (c.did !== key.did.did) throw new CardError("card-wrong-did", `the card is ${c.did}, the key is ${key.did.did}`);
  validateCard(c, Math.floor(Date.now() / 1000));
  return signAgentCard(toA2A(c), key);
}

/** signAgentCard adds key's signature to an A2A card and returns the card's JSON text (JCS). */
export function signAgentCard(card: AgentCard, key: Key): string {
  const { card: n, canonical } = decodeA2ACard(JSON.stringify(card));
  const prot = b64url(JSON.stringify({ alg: key.alg, kid: key.kid, typ: A2A_SIGNATURE_TYPE }));
  const sig = b64url(key.sign(new TextEncoder().encode(prot + "." + b64url(canonical))));
  n.signatures = [...(n.signatures ?? []), { protected: prot, signature: sig }];
  return jcs(n);
}

/**
 * verifyAgentCardBy checks that one of the card's signatures (at most 4 tried) is by signer
 * over its canonical form, and returns its index. It throws CardError: card-wrong-did for a
 * signature by another DID, card-forged for one that does not verify, card-malformed else.
 */
export function verifyAgentCardBy(card: AgentCard, canonical: string, signer: string): number {
  const sigs = card.signatures ?? [];
  if (sigs.length === 0) malformed("no valid signature: the card carries no signature");
  if (sigs.length > MAX_CARD_SIGNATURES) malformed(`more than ${MAX_CARD_SIGNATURES} signatures`);
  let last: unknown = new Error(`no signature by ${signer}`);
  for (const [i, s] of sigs.entries()) {
    try {
      const got = verifyJWS(`${s.protected}.${b64url(canonical)}.${s.signature}`, A2A_SIGNATURE_TYPE).signer;
      if (got === signer) return i;
      last = new CardError("card-wrong-did", `signed by ${got}`);
    } catch (e) {
      last = e;
    }
  }
  if (last instanceof CardError) throw last;
  if (last instanceof VerifyError && last.reason === "bad-signature") throw new CardError("card-forged", "signature does not verify");
  return malformed(`no valid signature: ${(last as Error).message}`);
}

/**
 * parseA2ACard verifies a registered A2A card as the node does (registry.Parse): size, I-JSON
 * and the SDK's members, A2A's required members, the trust extension, http(s) links, a
 * signature by the card's DID, and the Surety card's own rules. It returns the Surety card,
 * the signer and the card as stored (JCS, the one signature that verified).
 */
export function parseA2ACard(text: string, now = Math.floor(Date.now() / 1000)): { card: Card; signer: string; stored: string } {
  const raw = text.trim();
  if (Buffer.byteLength(raw) > MAX_CARD_SIZE) throw new CardError("card-too-large", `${Buffer.byteLength(raw)} bytes, at most ${MAX_CARD_SIZE}`);
  const { card: ac, canonical } = decodeA2ACard(raw);
  validateA2ACard(ac);
  const c = fromA2A(ac);
  const links: [string, unknown][] = [["documentationUrl", ac.documentationUrl], ["iconUrl", ac.iconUrl], ["provider.url", (ac.provider as { url?: string } | undefined)?.url]];
  for (const [name, link] of links) {
    if (typeof link !== "string" || link === "") continue;
    let ok = false;
    try {
      const u = new URL(link);
      ok = (u.protocol === "https:" || u.protocol === "http:") && u.host !== "" && link.length <= 512;
    } catch {
      ok = false;
    }
    if (!ok) malformed(`${name} ${JSON.stringify(link.slice(0, 80))} is not an http(s) URL`);
  }
  const i = verifyAgentCardBy(ac, canonical, c.did);
  validateCard(c, now);
  const stored = jcs({ ...ac, signatures: [ac.signatures![i]] });
  if (Buffer.byteLength(stored) > MAX_CARD_SIZE) throw new CardError("card-too-large", `${Buffer.byteLength(stored)} bytes, at most ${MAX_CARD_SIZE}`);
  return { card: c, signer: c.did, stored };
}

/**
 * verifyServedA2ACard checks a card a node served (GET /v1/agents/{did}/agent-card.json, or
 * the node's own /.well-known/agent-card.json): a signature by node's DID over its canonical
 * form. It returns the card and the agent DID its trust extension names.
 */
export function verifyServedA2ACard(text: string, node: string): { card: AgentCard; did: string } {
  if (Buffer.byteLength(text) > MAX_CARD_SIZE) throw new CardError("card-too-large", `${Buffer.byteLength(text)} bytes, at most ${MAX_CARD_SIZE}`);
  const { card, canonical } = decodeA2ACard(text);
  try {
    verifyAgentCardBy(card, canonical, node);
  } catch (e) {
    if (e instanceof CardError && e.slug !== "card-malformed") throw new CardError("card-forged", e.detail);
    if (e instanceof CardError) throw new CardError("card-forged", e.detail);
    throw e;
  }
  const ext = (card.capabilities?.extensions ?? []).find((x) => x.uri === TRUST_EXTENSION_URI);
  return { card, did: typeof ext?.params?.did === "string" ? ext.params.did : "" };
}
