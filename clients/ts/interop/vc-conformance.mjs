// vc-conformance.mjs: the conformance vectors of kinds credential and status-list, checked
// with implementations that are not Surety's.
//
//   node vc-conformance.mjs testdata/conformance
//
// For every vector: the key its kid names comes from the did:key (decoded here) and jose
// verifies the JWS with it: a vector refused for its signature must carry one that does not
// verify, every other one that does. The kid must be the issuer's key, and jose verifies the
// vc+jwt (EdDSA, typ vc+jwt) at the vector's now (its nbf and exp). A valid
// vector's facts (issuer, subject, type, window) are read back from the payload; its status
// (and every status list's bits) is read with @digitalbazaar/vc-bitstring-status-list.
// A revoked or expired vector must be refused by these libraries for that reason. Prints
// {"checked": n, "failures": n}; exits 1 on a failure.
import {readdirSync, readFileSync} from 'node:fs';
import {join} from 'node:path';
import {compactVerify, decodeProtectedHeader, errors, importJWK, jwtVerify} from 'jose';
import {decodeList, getCredentialStatus} from '@digitalbazaar/vc-bitstring-status-list';

const dir = process.argv[2];
const failures = [];
let checked = 0;
const fail = (file, msg) => failures.push(`${file}: ${msg}`);

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58(s) {
  let n = 0n;
  for (const c of s) {
    const i = B58.indexOf(c);
    if (i < 0) throw new Error(`not base58: ${c}`);
    n = n * 58n + BigInt(i);
  }
  const out = [];
  while (n > 0n) {
    out.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  for (const c of s) {
    if (c !== '1') break;
    out.unshift(0);
  }
  return Uint8Array.from(out);
}

// jwkOf is the Ed25519 JWK of an Ed25519 did:key (multicodec 0xed 0x01), or null.
function jwkOf(did) {
  const m = /^did:key:z([1-9A-HJ-NP-Za-km-z]+)$/.exec(did ?? '');
  if (!m) return null;
  const raw = base58(m[1]);
  if (raw[0] !== 0xed || raw[1] !== 0x01 || raw.length !== 34) return null;
  return {kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw.slice(2)).toString('base64url')};
}

const payloadOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));

// signatureVerifies says whether jwt's signature verifies with the key its kid names (a
// did:key URL), whatever else is wrong with it.
async function signatureVerifies(jwt) {
  const jwk = jwkOf(String(decodeProtectedHeader(jwt).kid ?? '').split('#')[0]);
  if (!jwk) return false;
  try {
    await compactVerify(jwt, await importJWK(jwk, 'EdDSA'));
    return true;
  } catch {
    return false;
  }
}

// verifyAt verifies jwt with jose as a vc+jwt by the DID its payload names, at now (unix s).
async function verifyAt(jwt, now) {
  const key = await importJWK(jwkOf(payloadOf(jwt).issuer), 'EdDSA');
  return jwtVerify(jwt, key, {typ: 'vc+jwt', algorithms: ['EdDSA'], currentDate: new Date(now * 1000), clockTolerance: 30});
}

async function readList(listJWT, now) {
  const {payload} = await verifyAt(listJWT, now);
  if (!payload.type.includes('BitstringStatusListCredential') || payload.credentialSubject.type !== 'BitstringStatusList') {
    throw new Error('not a BitstringStatusListCredential');
  }
  return {payload, list: await decodeList({encodedList: payload.credentialSubject.encodedList})};
}

async function checkCredential(file, v) {
  const jwt = v.input;
  const problem = v.expect.problem ?? '';
  const now = v.context.now;
  const sigOK = await signatureVerifies(jwt);
  if (problem.endsWith('/credential-bad-signature') === sigOK) {
    fail(file, `jose says the signature ${sigOK ? 'verifies' : 'does not verify'}; the vector says ${problem || 'valid'}`);
    return;
  }
  if (!sigOK) {
    checked++;
    return;
  }
  const header = decodeProtectedHeader(jwt);
  const p = payloadOf(jwt);
  if (header.kid !== `${p.issuer}#${String(p.issuer).slice('did:key:'.length)}`) {
    if (!problem.endsWith('/credential-malformed')) fail(file, `the kid ${header.kid} is not the issuer's key; the vector says ${problem || 'valid'}`);
    checked++;
    return;
  }
  let verified;
  try {
    verified = await verifyAt(jwt, now);
  } catch (err) {
    const why = err instanceof errors.JWTExpired ? 'credential-expired'
      : err instanceof errors.JWTClaimValidationFailed && err.claim === 'nbf' ? 'credential-not-yet-valid'
        : err instanceof errors.JOSEAlgNotAllowed || err.claim === 'typ' ? 'credential-malformed' : String(err);
    if (!problem.endsWith('/' + why)) fail(file, `jose refuses it (${why}); the vector says ${problem || 'valid'}`);
    checked++;
    return;
  }
  if (problem.endsWith('/credential-expired') || problem.endsWith('/credential-not-yet-valid')) {
    fail(file, `jose takes it at ${now}; the vector says ${problem}`);
    return;
  }
  if (problem.endsWith('/credential-wrong-issuer')) {
    if (p.issuer === v.context.node) fail(file, 'the issuer is the trusted node, the vector says wrong-issuer');
    checked++;
    return;
  }
  let status = 'none';
  if (p.credentialStatus) {
    let entry;
    try {
      entry = getCredentialStatus({credential: p, statusPurpose: 'revocation'});
    } catch (err) {
      fail(file, `vc-bitstring-status-list reads no revocation entry: ${err.message}`);
      return;
    }
    let read;
    try {
      read = await readList(v.context.status_list, now);
    } catch (err) {
      if (!problem.endsWith('/credential-status')) fail(file, `the status list does not read (${err.message}); the vector says ${problem || 'valid'}`);
      checked++;
      return;
    }
    if (read.payload.issuer !== p.issuer || read.payload.id !== entry.statusListCredential) {
      if (!problem.endsWith('/credential-status')) fail(file, `the list is ${read.payload.id} by ${read.payload.issuer}; the vector says ${problem || 'valid'}`);
      checked++;
      return;
    }
    if (read.list.getStatus(parseInt(entry.statusListIndex, 10))) {
      if (!problem.endsWith('/credential-revoked')) fail(file, `bit ${entry.statusListIndex} is set; the vector says ${problem || 'valid'}`);
      checked++;
      return;
    }
    status = 'active';
  }
  if (!v.expect.valid) {
    // What is left is the payload's own shape (context, claims agreeing): Surety's rules.
    if (!problem.endsWith('/credential-malformed') && !problem.endsWith('/credential-status')) {
      fail(file, `these libraries take it; the vector says ${problem}`);
    }
    checked++;
    return;
  }
  const e = v.expect;
  const type = p.type.filter((t) => t !== 'VerifiableCredential')[0];
  const got = {issuer: p.issuer, subject: p.credentialSubject.id, type, validFrom: p.validFrom, validUntil: p.validUntil, status};
  for (const [k, val] of Object.entries(got)) {
    if (e[k] !== val) fail(file, `${k} is ${val}, the vector says ${e[k]}`);
  }
  if (header.cty !== 'vc' || p['@context'][0] !== 'https://www.w3.org/ns/credentials/v2') fail(file, 'not a VC 2.0 vc+jwt');
  if (verified.payload.exp !== Date.parse(p.validUntil) / 1000) fail(file, 'exp is not validUntil');
  checked++;
}

async function checkStatusList(file, v) {
  const problem = v.expect.problem ?? '';
  const sigOK = await signatureVerifies(v.input);
  if (problem.endsWith('/credential-bad-signature') === sigOK) {
    fail(file, `jose says the signature ${sigOK ? 'verifies' : 'does not verify'}; the vector says ${problem || 'valid'}`);
    return;
  }
  if (!sigOK) {
    checked++;
    return;
  }
  let read;
  try {
    read = await readList(v.input, v.context.now);
  } catch (err) {
    const ok = (err instanceof errors.JWTExpired && problem.endsWith('/credential-expired')) ||
      (!(err instanceof errors.JOSEError) && problem.endsWith('/credential-status'));
    if (!ok) fail(file, `these libraries refuse it (${err.message}); the vector says ${problem || 'valid'}`);
    checked++;
    return;
  }
  if (problem.endsWith('/credential-wrong-issuer')) {
    if (read.payload.issuer === v.context.node) fail(file, 'the issuer is the trusted node');
    checked++;
    return;
  }
  if (read.list.length < 131072) {
    if (!problem.endsWith('/credential-status')) fail(file, `a list of ${read.list.length} bits; the vector says ${problem || 'valid'}`);
    checked++;
    return;
  }
  if (!v.expect.valid) {
    fail(file, `these libraries take it; the vector says ${problem}`);
    return;
  }
  const set = [];
  for (let i = 0; i < read.list.length; i++) if (read.list.getStatus(i)) set.push(i);
  if (JSON.stringify(set) !== JSON.stringify(v.expect.set) || read.list.length !== v.expect.bits || read.payload.id !== v.expect.id) {
    fail(file, `bits ${read.list.length} set ${JSON.stringify(set)} id ${read.payload.id}; the vector says ${v.expect.bits} ${JSON.stringify(v.expect.set)} ${v.expect.id}`);
  }
  checked++;
}

for (const kind of ['credential', 'status-list']) {
  for (const name of readdirSync(join(dir, kind)).filter((n) => n.endsWith('.json')).sort()) {
    const file = `${kind}/${name}`;
    const v = JSON.parse(readFileSync(join(dir, kind, name), 'utf8'));
    try {
      if (kind === 'credential') await checkCredential(file, v);
      else await checkStatusList(file, v);
    } catch (err) {
      fail(file, `checker error: ${err.stack ?? err}`);
    }
  }
}
for (const f of failures) console.log(f);
console.log(JSON.stringify({checked, failures: failures.length}));
process.exit(failures.length > 0 ? 1 : 0);
