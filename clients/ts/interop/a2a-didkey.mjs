// a2a-didkey.mjs: the did:key helpers the a2a-*.mjs checks share (base58btc, the Ed25519
// multicodec 0xed 0x01), written here so the checks need no Surety code.
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function base58Decode(s) {
  let n = 0n;
  for (const c of s) {
    const i = B58.indexOf(c);
    if (i < 0) throw new Error(`not base58: ${c}`);
    n = n * 58n + BigInt(i);
  }
  const bytes = [];
  while (n > 0n) { bytes.unshift(Number(n & 0xffn)); n >>= 8n; }
  for (const c of s) { if (c !== '1') break; bytes.unshift(0); }
  return Uint8Array.from(bytes);
}

export function base58Encode(bytes) {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let s = '';
  while (n > 0n) { s = B58[Number(n % 58n)] + s; n /= 58n; }
  for (const b of bytes) { if (b !== 0) break; s = '1' + s; }
  return s;
}

// didKeyToJWK is the public JWK of an Ed25519 did:key (or a DID URL of one). jose verifies
// no ES256K, so a secp256k1 did:key has no key here.
export function didKeyToJWK(kid) {
  const did = kid.split('#')[0];
  if (!did.startsWith('did:key:z')) throw new Error(`not a did:key: ${kid}`);
  const raw = base58Decode(did.slice('did:key:z'.length));
  if (raw[0] !== 0xed || raw[1] !== 0x01 || raw.length !== 34) throw new Error(`not an Ed25519 did:key: ${did}`);
  return { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw.slice(2)).toString('base64url') };
}

// ed25519DID is the did:key of an Ed25519 public key (32 bytes) and its key fragment.
export function ed25519DID(pub) {
  const mb = 'z' + base58Encode(Uint8Array.from([0xed, 0x01, ...pub]));
  return { did: `did:key:${mb}`, kid: `did:key:${mb}#${mb}` };
}
