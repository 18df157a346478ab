// Checks Surety's conformance vectors (testdata/conformance) with independent
// implementations: every signature with jose (EdDSA) or viem (ES256K), every key and did:key
// derivation with Node's crypto and viem, every wallet binding's EIP-712 digest and
// signature with viem, checkpoints' signed-note signatures with Node's crypto, and log
// proofs with an RFC 9162 verifier written apart here. It does not judge what only Surety's rules decide (times, audience,
// shapes): the Go code and the clients do. It asserts that the vectors are what they claim
// to be: a vector refused for its signature carries a signature that does not verify, every
// other vector one that does, under the key its kid names.
//
// Usage: node conformance-jose.mjs <testdata/conformance dir>
// Prints one line per failure and a summary; exits 1 on any failure.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash, createPrivateKey, createPublicKey, verify as nodeVerify } from 'node:crypto';
import { compactVerify, importJWK, decodeProtectedHeader } from 'jose';
import { hashTypedData, keccak256, recoverPublicKey, recoverTypedDataAddress, sha256, toBytes, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node conformance-jose.mjs <testdata/conformance>');
  process.exit(2);
}

const failures = [];
const fail = (file, msg) => failures.push(`${file}: ${msg}`);
let checked = 0;

// ---- did:key, by hand: base58btc, a multicodec varint, the key ----

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58Decode(s) {
  let n = 0n;
  for (const c of s) {
    const i = B58.indexOf(c);
    if (i < 0) throw new Error(`not base58: ${c}`);
    n = n * 58n + BigInt(i);
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
function base58Encode(bytes) {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let s = '';
  while (n > 0n) {
    s = B58[Number(n % 58n)] + s;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    s = '1' + s;
  }
  return s;
}
const PREFIX = { ed25519: [0xed, 0x01], secp256k1: [0xe7, 0x01] };

// didKey parses a did:key DID into its key type and raw public key, or returns null.
function didKey(did) {
  const m = /^did:key:z([1-9A-HJ-NP-Za-km-z]+)$/.exec(did);
  if (!m) return null;
  const raw = base58Decode(m[1]);
  for (const [type, p] of Object.entries(PREFIX)) {
    if (raw[0] === p[0] && raw[1] === p[1]) return { type, key: raw.slice(2) };
  }
  return null;
}
const hex = (b) => Buffer.from(b).toString('hex');
const b64u = (b) => Buffer.from(b).toString('base64url');

function compress(uncompressed) {
  const u = toBytes(uncompressed);
  const out = new Uint8Array(33);
  out[0] = (u[64] & 1) === 1 ? 3 : 2;
  out.set(u.slice(1, 33), 1);
  return out;
}

// ---- signatures ----

// verifyCompact checks a compact JWS's signature under the key its kid names. It returns
// {ok, header, signer} or null when the JWS names no key this check handles (another alg,
// an alg that does not fit the key, a kid that is not a did:key URL).
async function verifyCompact(jws) {
  const parts = jws.split('.');
  if (parts.length !== 3) return null;
  let header;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    return null;
  }
  const did = String(header.kid ?? '').split('#')[0];
  const k = didKey(did);
  if (!k) return null;
  if (k.type === 'ed25519' && header.alg === 'EdDSA') {
    const key = await importJWK({ kty: 'OKP', crv: 'Ed25519', x: b64u(k.key) }, 'EdDSA');
    try {
      await compactVerify(jws, key, { algorithms: ['EdDSA'] });
      return { ok: true, header, signer: did };
    } catch {
      return { ok: false, header, signer: did };
    }
  }
  if (k.type === 'secp256k1' && header.alg === 'ES256K') {
    // R || S over SHA-256 of the signing input: recover both candidates, one must be the key.
    const sig = Buffer.from(parts[2], 'base64url');
    if (sig.length !== 64) return { ok: false, header, signer: did };
    const hash = sha256(new TextEncoder().encode(`${parts[0]}.${parts[1]}`));
    const want = hex(k.key);
    for (const yParity of [0, 1]) {
      try {
        const pub = await recoverPublicKey({ hash, signature: { r: toHex(sig.subarray(0, 32)), s: toHex(sig.subarray(32)), yParity } });
        if (hex(compress(pub)) === want) return { ok: true, header, signer: did };
      } catch {
        // not a point: try the other parity
      }
    }
    return { ok: false, header, signer: did };
  }
  return null;
}

// The refusals that are the signature's fault.
const SIGNATURE_FAULTS = new Set([
  'https://surety.dev/problems/envelope-bad-signature',
  'https://surety.dev/problems/card-forged',
]);
const isSignatureFault = (expect) => SIGNATURE_FAULTS.has(expect.problem) || expect.reason === 'bad-signature';

const TYP = {
  envelope: 'surety-envelope+jws',
  audit: 'surety-envelope+jws',
  group: 'surety-envelope+jws',
  card: 'surety-card+jws',
  'log-head': 'surety-sth+jws',
  'peer-binding': 'surety-peer+jws',
};

// jwsOf lists the compact JWSs of a vector's input (a JSON-serialized envelope gives one per
// signature).
function jwsOf(input) {
  if (typeof input === 'string') return [input];
  if (input && Array.isArray(input.signatures)) {
    return input.signatures.map((s) => `${s.protected}.${input.payload}.${s.signature}`);
  }
  return [];
}

async function checkSigned(file, v) {
  const list = jwsOf(v.input);
  if (list.length === 0) return fail(file, 'no JWS in the input');
  const results = [];
  for (const jws of list) results.push(await verifyCompact(jws));
  if (results.some((r) => r === null)) {
    // An alg this check does not take (HS256, or ES256K on an Ed25519 key): the verdict must
    // be a refusal, and not one the Go code would give a verifying signature.
    if (v.expect.valid) fail(file, 'a valid vector whose signature names no did:key and alg this check knows');
    return;
  }
  checked++;
  const allOK = results.every((r) => r.ok);
  if (isSignatureFault(v.expect)) {
    if (allOK) fail(file, 'refused for its signature, but every signature verifies with jose/viem');
    return;
  }
  if (!allOK) fail(file, `its signature does not verify with jose/viem (expect ${JSON.stringify(v.expect)})`);
  if (v.expect.valid) {
    for (const r of results) {
      if (r.header.typ !== TYP[v.kind]) fail(file, `typ ${r.header.typ}, want ${TYP[v.kind]}`);
    }
  }
}

// ---- keys ----

function checkKey(file, v) {
  const seed = Buffer.from(v.input.seed, 'hex');
  const e = v.expect;
  let pub;
  if (v.input.type === 'ed25519') {
    const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
    const jwk = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
    pub = Buffer.from(jwk.x, 'base64url');
    if (e.jwk.x !== jwk.x || e.jwk.crv !== 'Ed25519' || e.jwk.kty !== 'OKP') fail(file, `jwk ${JSON.stringify(e.jwk)}, Node derives x ${jwk.x}`);
  } else {
    const account = privateKeyToAccount(toHex(seed));
    const u = toBytes(account.publicKey);
    pub = compress(account.publicKey);
    if (e.jwk.x !== b64u(u.slice(1, 33)) || e.jwk.y !== b64u(u.slice(33))) fail(file, 'jwk x/y differ from viem');
    if (e.address !== account.address) fail(file, `address ${e.address}, viem derives ${account.address}`);
  }
  const did = 'did:key:z' + base58Encode(Uint8Array.from([...PREFIX[v.input.type], ...pub]));
  if (e.did !== did) fail(file, `did ${e.did}, derived ${did}`);
  if (e.kid !== `${did}#${did.slice('did:key:'.length)}`) fail(file, `kid ${e.kid}`);
  if (e.publicKey !== hex(pub)) fail(file, `publicKey ${e.publicKey}, derived ${hex(pub)}`);
  checked++;
}

function checkDID(file, v) {
  if (!v.expect.valid || v.expect.method !== 'key') return;
  const k = didKey(v.input);
  if (!k || k.type !== v.expect.keyType || hex(k.key) !== v.expect.publicKey) fail(file, 'did:key decodes to another key');
  checked++;
}

// ---- wallet bindings ----

async function checkBinding(file, v) {
  const b = v.input;
  const s = b.statement;
  const agentId = keccak256(toBytes(s.did));
  const typed = {
    domain: { name: 'Surety StakeRegistry', version: '1', chainId: BigInt(s.chainId), verifyingContract: s.registry },
    types: {
      AgentBinding: [
        { name: 'did', type: 'string' }, { name: 'agentId', type: 'bytes32' }, { name: 'wallet', type: 'address' },
        { name: 'issuedAt', type: 'uint256' }, { name: 'nonce', type: 'string' },
      ],
    },
    primaryType: 'AgentBinding',
    message: { did: s.did, agentId, wallet: s.wallet, issuedAt: BigInt(s.iat), nonce: s.nonce },
  };
  const digest = hashTypedData(typed);
  let recovered = '';
  try {
    recovered = await recoverTypedDataAddress({ ...typed, signature: b.walletSignature });
  } catch {
    // no address: the wallet half fails
  }
  const walletOK = recovered.toLowerCase() === s.wallet.toLowerCase();
  const agent = await verifyCompact(b.agentJws);
  let payloadOK = false;
  if (agent) {
    const p = JSON.parse(Buffer.from(b.agentJws.split('.')[1], 'base64url').toString());
    payloadOK = p.did === s.did && p.wallet.toLowerCase() === s.wallet.toLowerCase() && p.chainId === s.chainId &&
      p.registry.toLowerCase() === s.registry.toLowerCase() && p.iat === s.iat && p.nonce === s.nonce;
  }
  const agentOK = agent !== null && agent.ok && agent.signer === s.did && agent.header.typ === 'surety-binding+jws' && payloadOK;
  checked++;
  if (v.expect.problem === 'https://surety.dev/problems/bad-proof') {
    if (walletOK && agentOK) fail(file, 'refused as a bad proof, but both halves verify with jose/viem');
    return;
  }
  if (!walletOK) fail(file, `the wallet signature recovers ${recovered}, not ${s.wallet}`);
  if (!agentOK) fail(file, 'the agent JWS does not verify, or signs another statement');
  if (v.expect.valid) {
    if (v.expect.digest !== digest) fail(file, `digest ${v.expect.digest}, viem computes ${digest}`);
    if (v.expect.agentId !== agentId) fail(file, `agentId ${v.expect.agentId}, viem computes ${agentId}`);
  }
}

// ---- checkpoints: C2SP signed notes ----

// checkCheckpoint checks the node's signature line under the context's origin with Node's
// Ed25519 or viem's secp256k1 recovery, independently of Surety's note code.
async function checkCheckpoint(file, v) {
  const note = v.input;
  const k = didKey(v.context.node);
  const i = note.lastIndexOf('\n\n');
  if (i < 0 || !k) {
    if (v.expect.valid) fail(file, 'a valid checkpoint without a blank line or a did:key node');
    return;
  }
  const text = Buffer.from(note.slice(0, i + 1));
  const type = k.type === 'ed25519' ? Buffer.from([0x01]) : Buffer.concat([Buffer.from([0xff]), Buffer.from('surety-es256k')]);
  const id = createHash('sha256').update(Buffer.concat([Buffer.from(v.context.origin + '\n'), type, Buffer.from(k.key)])).digest().subarray(0, 4);
  let found = false;
  let ok = false;
  for (const line of note.slice(i + 2).split('\n').filter((l) => l !== '')) {
    const m = /^— (\S+) (\S+)$/.exec(line);
    if (!m || m[1] !== v.context.origin) continue;
    const raw = Buffer.from(m[2], 'base64');
    if (!raw.subarray(0, 4).equals(id)) continue;
    found = true;
    const sig = raw.subarray(4);
    if (k.type === 'ed25519') {
      const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64u(k.key) }, format: 'jwk' });
      ok = nodeVerify(null, text, pub, sig);
    } else {
      ok = false;
      for (const yParity of [0, 1]) {
        try {
          const pub = await recoverPublicKey({ hash: sha256(text), signature: { r: toHex(sig.subarray(0, 32)), s: toHex(sig.subarray(32)), yParity } });
          ok = ok || hex(compress(pub)) === hex(k.key);
        } catch {
          // the other parity
        }
      }
    }
  }
  checked++;
  const sigOK = found && ok;
  if (v.expect.valid) {
    if (!sigOK) fail(file, 'a valid checkpoint whose node signature does not verify with Node/viem');
    const lines = text.toString().split('\n');
    if (lines[0] !== v.expect.origin || lines[1] !== String(v.expect.size) || Buffer.from(lines[2], 'base64').toString('hex') !== v.expect.root) {
      fail(file, 'the note text does not carry the expected origin, size and root');
    }
  }
  if (v.expect.reason === 'bad-signature' && sigOK) fail(file, 'refused for its signature, which verifies with Node/viem');
  if (v.expect.reason === 'no-signature' && found) fail(file, 'refused for lack of a node signature, but one is there');
}

// ---- log proofs: RFC 9162 §2.1.3.2 and §2.1.4.2, written again here ----

const h = (...parts) => createHash('sha256').update(Buffer.concat(parts)).digest();
const nodeHash = (l, r) => h(Buffer.from([1]), l, r);

function inclusion(leaf, index, size, path, root) {
  if (index >= size) return 'proof-shape';
  let fn = BigInt(index);
  let sn = BigInt(size) - 1n;
  let r = leaf;
  for (const p of path) {
    if (sn === 0n) return 'proof-shape';
    if ((fn & 1n) === 1n || fn === sn) {
      r = nodeHash(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) return 'proof-shape';
  return r.equals(root) ? 'ok' : 'proof-invalid';
}

function consistency(m, n, rootM, rootN, path) {
  if (m > n) return 'proof-shape';
  if (m === n) return path.length !== 0 ? 'proof-shape' : rootM.equals(rootN) ? 'ok' : 'proof-invalid';
  if (m === 0) return path.length !== 0 ? 'proof-shape' : 'ok';
  if (path.length === 0) return 'proof-shape';
  let p = path;
  if ((m & (m - 1)) === 0) p = [rootM, ...path];
  let fn = BigInt(m) - 1n;
  let sn = BigInt(n) - 1n;
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = p[0];
  let sr = p[0];
  for (const c of p.slice(1)) {
    if (sn === 0n) return 'proof-shape';
    if ((fn & 1n) === 1n || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) return 'proof-shape';
  return fr.equals(rootM) && sr.equals(rootN) ? 'ok' : 'proof-invalid';
}

function checkProof(file, v) {
  const b = (x) => Buffer.from(x, 'hex');
  const i = v.input;
  const got = i.type === 'inclusion'
    ? inclusion(b(i.leaf), i.index ?? 0, i.size ?? 0, i.path.map(b), b(i.root))
    : consistency(i.from ?? 0, i.to ?? 0, b(i.fromRoot), b(i.toRoot), i.path.map(b));
  const want = v.expect.valid ? 'ok' : v.expect.reason;
  if (got !== want) fail(file, `an RFC 9162 verifier written apart says ${got}, the vector ${want}`);
  checked++;
}

// ---- run ----

const seen = {};
for (const kind of readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
  for (const name of readdirSync(join(dir, kind)).filter((n) => n.endsWith('.json')).sort()) {
    const file = `${kind}/${name}`;
    const v = JSON.parse(readFileSync(join(dir, kind, name), 'utf8'));
    seen[kind] = (seen[kind] ?? 0) + 1;
    switch (kind) {
      case 'key': checkKey(file, v); break;
      case 'did': checkDID(file, v); break;
      case 'binding': await checkBinding(file, v); break;
      case 'envelope': case 'audit': case 'group': case 'card': case 'log-head': case 'peer-binding':
        await checkSigned(file, v); break;
      case 'checkpoint': await checkCheckpoint(file, v); break;
      case 'log-proof': checkProof(file, v); break;
      default: break; // kinds of other checks
    }
  }
}
for (const f of failures) console.log(f);
console.log(JSON.stringify({ checked, failures: failures.length, kinds: seen }));
process.exit(failures.length > 0 ? 1 : 0);
