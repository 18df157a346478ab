// vc-verify.mjs: an independent check of a Surety VC 2.0 credential and its status list.
//
//   node vc-verify.mjs INPUT.json
//
// INPUT.json: {"credential": "<vc+jwt>", "statusList": "<vc+jwt>", "jwk": {<the node's
// Ed25519 public JWK>}}. jose verifies both vc+jwt signatures (EdDSA, typ vc+jwt) against the
// JWK, and the credential's and the list's nbf/exp; @digitalbazaar/vc-bitstring-status-list
// reads the credential's BitstringStatusListEntry and decodes the list's encodedList. Prints
// one JSON line: {"credential": {...header and payload facts}, "index": n, "revoked": bool,
// "listBits": n}; exits 1 with {"error": "..."} when anything fails to verify.
import {readFileSync} from 'node:fs';
import {importJWK, jwtVerify} from 'jose';
import {decodeList, getCredentialStatus} from '@digitalbazaar/vc-bitstring-status-list';

async function main() {
  const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
  const key = await importJWK(input.jwk, 'EdDSA');
  const opts = {typ: 'vc+jwt', algorithms: ['EdDSA']};
  const cred = await jwtVerify(input.credential, key, opts);
  const out = {
    credential: {
      typ: cred.protectedHeader.typ, cty: cred.protectedHeader.cty, kid: cred.protectedHeader.kid,
      context: cred.payload['@context'], type: cred.payload.type, issuer: cred.payload.issuer,
      subject: cred.payload.credentialSubject?.id, validFrom: cred.payload.validFrom, validUntil: cred.payload.validUntil,
    },
  };
  if (input.statusList) {
    const list = await jwtVerify(input.statusList, key, opts);
    const sl = list.payload;
    if (!sl.type.includes('BitstringStatusListCredential') || sl.credentialSubject.type !== 'BitstringStatusList') {
      throw new Error('the status list is not a BitstringStatusListCredential');
    }
    if (sl.issuer !== cred.payload.issuer) {
      throw new Error(`the status list's issuer ${sl.issuer} is not the credential's ${cred.payload.issuer}`);
    }
    const entry = getCredentialStatus({credential: cred.payload, statusPurpose: 'revocation'});
    if (entry.statusListCredential !== sl.id) {
      throw new Error(`the credential's list is ${entry.statusListCredential}, this one is ${sl.id}`);
    }
    const bits = await decodeList({encodedList: sl.credentialSubject.encodedList});
    const index = parseInt(entry.statusListIndex, 10);
    out.index = index;
    out.listBits = bits.length;
    out.revoked = bits.getStatus(index);
  }
  console.log(JSON.stringify(out));
}

main().catch((err) => {
  console.log(JSON.stringify({error: String(err && err.message || err)}));
  process.exit(1);
});
