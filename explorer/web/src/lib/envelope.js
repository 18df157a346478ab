// Envelope signatures checked in the browser: a group thread's envelopes (compact JWS, or the
// JSON serialization for several signers) verified against the did:key in each signature's
// kid, with @noble/curves (Ed25519 for EdDSA, secp256k1 for ES256K over SHA-256), by the rule
// of identity's verifier and docs/PROTOCOL.md: typ surety-envelope+jws, alg EdDSA or ES256K
// fitting the key, kid the DID URL did:key:<id>#<id>, no critical headers, and the payload's
// sender among the signers. What the node adds on receipt (times, replay, audience, chain,
// revocation) is history for a thread already kept, so this checks who signed what, not
// whether a node would take the envelope today.
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';

export const ENVELOPE_TYPE = 'surety-envelope+jws';
// MAX_ENVELOPE_SIZE and MAX_SIGNERS are identity's bounds (identity/limits.go).
export const MAX_ENVELOPE_SIZE = 256 << 10;
export const MAX_SIGNERS = 16;

const utf8 = new TextEncoder();
const fromUTF8 = new TextDecoder('utf-8', { fatal: true });

/** EnvelopeError is why an envelope does not verify: reason is one of malformed,
 * unsupported-alg, bad-signature, kid-not-sender (the slugs of the API's envelope-*
 * problems). */
export class EnvelopeError extends Error {
  constructor(reason, message) {
    super(message ? `${reason}: ${message}` : reason);
    this.name = 'EnvelopeError';
    this.reason = reason;
  }
}

function unb64url(s, what) {
  if (typeof s !== 'string' || !/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) throw new EnvelopeError('malformed', `${what} is not base64url`);
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58(s) {
  let n = 0n;
  for (const c of s) {
    const d = B58.indexOf(c);
    if (d < 0) throw new EnvelopeError('malformed', 'kid: not base58btc');
    n = n * 58n + BigInt(d);
  }
  const bytes = [];
  while (n > 0n) {
    bytes.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  for (const c of s) {
    if (c !== '1') break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}

/** keyOf reads a did:key: its key type (ed25519 or secp256k1) and public key bytes. */
export function keyOf(did) {
  if (typeof did !== 'string' || !did.startsWith('did:key:z') || did.length > 512) throw new EnvelopeError('malformed', 'kid: not a did:key in base58btc');
  const b = base58(did.slice('did:key:z'.length));
  // The multicodec prefix, an unsigned varint: 0xed 0x01 (ed25519-pub), 0xe7 0x01 (secp256k1-pub).
  if (b.length === 34 && b[0] === 0xed && b[1] === 0x01) return { type: 'ed25519', alg: 'EdDSA', pub: b.slice(2) };
  if (b.length === 35 && b[0] === 0xe7 && b[1] === 0x01 && (b[2] === 2 || b[2] === 3)) return { type: 'secp256k1', alg: 'ES256K', pub: b.slice(2) };
  throw new EnvelopeError('malformed', 'kid: not an Ed25519 or compressed secp256k1 did:key');
}

function header(seg) {
  let h;
  try {
    h = JSON.parse(fromUTF8.decode(unb64url(seg, 'protected header')));
  } catch (e) {
    if (e instanceof EnvelopeError) throw e;
    throw new EnvelopeError('malformed', 'protected header is not JSON');
  }
  if (h === null || typeof h !== 'object' || Array.isArray(h)) throw new EnvelopeError('malformed', 'protected header is not a JSON object');
  return h;
}

// signatures splits a JWS into its signatures ({header, input, sig}) and payload.
function signatures(raw) {
  const text = raw.trim();
  if (text[0] !== '{') {
    const parts = text.split('.');
    if (parts.length !== 3) throw new EnvelopeError('malformed', 'a compact JWS has three parts');
    return { payload: unb64url(parts[1], 'payload'), sigs: [{ header: header(parts[0]), input: utf8.encode(`${parts[0]}.${parts[1]}`), sig: unb64url(parts[2], 'signature') }] };
  }
  let j;
  try {
    j = JSON.parse(text);
  } catch {
    throw new EnvelopeError('malformed', 'not a compact or JSON JWS');
  }
  let entries = Array.isArray(j?.signatures) ? j.signatures : [];
  if (entries.length === 0 && typeof j?.signature === 'string' && j.signature !== '') entries = [{ protected: j.protected, signature: j.signature }];
  if (entries.length === 0 || typeof j.payload !== 'string' || j.payload === '') throw new EnvelopeError('malformed', 'a JSON JWS needs a payload and a signature');
  if (entries.length > MAX_SIGNERS) throw new EnvelopeError('malformed', `more than ${MAX_SIGNERS} signatures`);
  return {
    payload: unb64url(j.payload, 'payload'),
    sigs: entries.map((e) => {
      if (typeof e?.protected !== 'string' || e.protected === '') throw new EnvelopeError('malformed', 'every signature needs a protected header');
      return { header: header(e.protected), input: utf8.encode(`${e.protected}.${j.payload}`), sig: unb64url(typeof e.signature === 'string' ? e.signature : '', 'signature') };
    }),
  };
}

// check verifies one signature of type typ and returns its signer's DID.
function check(s, typ = ENVELOPE_TYPE) {
  const h = s.header;
  if ((Array.isArray(h.crit) && h.crit.length > 0) || h.b64 === false) throw new EnvelopeError('malformed', 'critical headers are not supported');
  if (h.alg !== 'EdDSA' && h.alg !== 'ES256K') throw new EnvelopeError('unsupported-alg', `alg ${JSON.stringify(h.alg)}`);
  if (h.typ !== typ) throw new EnvelopeError(typ === ENVELOPE_TYPE ? 'malformed' : 'wrong-type', `typ ${JSON.stringify(h.typ)}, want ${typ}`);
  const kid = typeof h.kid === 'string' ? h.kid : '';
  const at = kid.indexOf('#');
  if (at < 0) throw new EnvelopeError('malformed', 'kid is not a DID URL');
  const did = kid.slice(0, at);
  if (kid.slice(at + 1) !== did.slice('did:key:'.length)) throw new EnvelopeError('malformed', "kid's fragment is not its did:key's key");
  const key = keyOf(did);
  if (h.alg !== key.alg) throw new EnvelopeError('unsupported-alg', `alg ${h.alg} does not fit a ${key.type} key`);
  let ok = false;
  try {
    ok = s.sig.length === 64 && (key.type === 'ed25519'
      ? ed25519.verify(s.sig, s.input, key.pub, { zip215: false })
      : secp256k1.verify(s.sig, s.input, key.pub, { prehash: true, lowS: false, format: 'compact' }));
  } catch {
    ok = false;
  }
  if (!ok) throw new EnvelopeError('bad-signature', `by ${did}`);
  return did;
}

/** verifyEnvelope checks an envelope's signatures and that its sender signed it. It returns
 * {sender, signers, envelope (the payload, parsed)} or throws an EnvelopeError. */
export function verifyEnvelope(raw) {
  if (typeof raw !== 'string') throw new EnvelopeError('malformed', 'an envelope is a string');
  if (utf8.encode(raw).length > MAX_ENVELOPE_SIZE) throw new EnvelopeError('malformed', `larger than ${MAX_ENVELOPE_SIZE} bytes`);
  const { payload, sigs } = signatures(raw);
  const signers = sigs.map((x) => check(x));
  let e;
  try {
    e = JSON.parse(fromUTF8.decode(payload));
  } catch {
    throw new EnvelopeError('malformed', 'the payload is not JSON');
  }
  if (e === null || typeof e !== 'object' || Array.isArray(e) || typeof e.sender !== 'string') throw new EnvelopeError('malformed', 'the payload is not an envelope');
  if (!signers.includes(e.sender)) throw new EnvelopeError('kid-not-sender', `sender ${e.sender.slice(0, 120)} did not sign it`);
  return { sender: e.sender, signers, envelope: e };
}

/** HEAD_TYPE is the typ of a log head the node signs (reputation/verify.HeadType). */
export const HEAD_TYPE = 'surety-sth+jws';

/** openCompact checks a compact JWS the node or an agent signed: typ, a did:key kid whose key
 * fits alg, no critical headers, the signature, and (did given) that did signed it. It returns
 * {payload (parsed JSON), signer} or throws an EnvelopeError (reasons malformed, wrong-type,
 * unsupported-alg, wrong-signer, bad-signature). */
export function openCompact(jws, typ, did) {
  if (typeof jws !== 'string' || jws.length > 64 << 10 || jws.trim()[0] === '{') throw new EnvelopeError('malformed', 'not a compact JWS');
  const { payload, sigs } = signatures(jws);
  const kid = sigs[0].header.kid;
  if (did && typeof kid === 'string' && kid.split('#')[0] !== did) throw new EnvelopeError('wrong-signer', `signed by ${kid.split('#')[0]}, not ${did}`);
  const signer = check(sigs[0], typ);
  let p;
  try {
    p = JSON.parse(fromUTF8.decode(payload));
  } catch {
    throw new EnvelopeError('malformed', 'the payload is not JSON');
  }
  if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new EnvelopeError('malformed', 'the payload is not a JSON object');
  return { payload: p, signer };
}

/** openHead checks a log head's JWS (the "signed" of GET /v1/log/head and /v1/log/heads) as
 * reputation/verify.OpenHead does: typ surety-sth+jws, signed by node's did:key (node: the
 * DID the page trusts, from /v1/info; empty: any did:key), and returns what it signed,
 * {size, root, epoch, closed, signer}. It throws an EnvelopeError (reasons malformed,
 * wrong-type, unsupported-alg, wrong-signer, bad-signature). */
export function openHead(signed, node) {
  const { payload: h, signer } = openCompact(signed, HEAD_TYPE, node);
  if (!Number.isInteger(h.size) || typeof h.root !== 'string' || !/^[0-9a-f]{64}$/.test(h.root)) {
    throw new EnvelopeError('malformed', 'the head has no size or root');
  }
  return { size: h.size, root: h.root, epoch: h.epoch, closed: h.closed, signer };
}

/** PEER_TYPE is the typ of a node's peer binding (GET /v1/info peer.binding). */
export const PEER_TYPE = 'surety-peer+jws';

/** openPeerBinding checks a node's peer binding, its DID's signature over {did, peerId}, as
 * testdata/conformance/peer-binding holds verifiers to: signed by node, naming node and peer.
 * It returns {did, peerId} or throws an EnvelopeError (reasons peer-mismatch, bad-signature,
 * unsupported-alg, malformed). */
export function openPeerBinding(jws, node, peer) {
  let opened;
  try {
    opened = openCompact(jws, PEER_TYPE, node);
  } catch (e) {
    if (e instanceof EnvelopeError && e.reason === 'wrong-signer') throw new EnvelopeError('peer-mismatch', e.message);
    if (e instanceof EnvelopeError && e.reason === 'wrong-type') throw new EnvelopeError('malformed', e.message);
    throw e;
  }
  const { did, peerId } = opened.payload;
  if (typeof did !== 'string' || typeof peerId !== 'string') throw new EnvelopeError('malformed', 'a peer binding names a did and a peerId');
  if (did !== opened.signer || (node && did !== node) || (peer && peerId !== peer)) {
    throw new EnvelopeError('peer-mismatch', `it binds ${did} to ${peerId}`);
  }
  return { did, peerId };
}

/** payloadOf reads an envelope's payload without checking anything (to show what it says
 * beside the verdict of verifyEnvelope); null when it is not a JWS with a JSON payload. */
export function payloadOf(raw) {
  try {
    return JSON.parse(fromUTF8.decode(signatures(raw).payload));
  } catch {
    return null;
  }
}
