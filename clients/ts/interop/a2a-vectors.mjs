// a2a-vectors.mjs: runs the a2a-card conformance vectors' signatures through @a2a-js/sdk's
// own verifier (verifyAgentCardSignature, over the SDK's own JCS canonical form), with the
// key of the signer the vector names (context.node, or the trust extension's did). The SDK
// checks signatures only: the vectors whose verdict rests on Surety's rules (I-JSON, the
// trust extension, A2A's required members, typ, time) are reported as skipped, and so are
// ES256K signatures, which jose cannot verify.
//
//   node a2a-vectors.mjs <dir>
//
// Prints one JSON line per vector: {name, want, sdk} with sdk true/false/"skipped"; exits 1
// when the SDK's verdict differs from the vector's. Run by api's TestA2ACardVectorsWithTheSDK.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyAgentCardSignature } from '@a2a-js/sdk';
import { decodeProtectedHeader } from 'jose';
import { didKeyToJWK } from './a2a-didkey.mjs';

console.debug = () => {};
const dir = process.argv[2];
const signatureVerdicts = new Set(['', 'https://surety.dev/problems/card-forged', 'https://surety.dev/problems/card-wrong-did']);
let ok = true;
for (const f of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const v = JSON.parse(readFileSync(join(dir, f), 'utf8'));
  const name = f.replace(/\.json$/, '');
  const want = v.expect.valid;
  let card;
  try { card = JSON.parse(v.input); } catch { card = null; }
  const problem = v.expect.problem ?? '';
  const ext = card?.capabilities?.extensions?.find((e) => e.uri === 'https://surety.dev/ext/trust/v1');
  const signer = v.context?.node ?? ext?.params?.did;
  const alg = card?.signatures?.[0] ? decodeProtectedHeader(card.signatures[0]).alg : '';
  if (!card || !signer || !signatureVerdicts.has(problem) || alg === 'ES256K' || v.input.length > 16384) {
    console.log(JSON.stringify({ name, want, sdk: 'skipped' }));
    continue;
  }
  const verify = verifyAgentCardSignature(async (kid) => {
    if (kid.split('#')[0] !== signer) throw new Error(`kid ${kid} is not ${signer}`);
    return didKeyToJWK(kid);
  });
  let sdk;
  try { await verify(card); sdk = true; } catch { sdk = false; }
  console.log(JSON.stringify({ name, want, sdk }));
  if (sdk !== want) ok = false;
}
process.exit(ok ? 0 : 1);
