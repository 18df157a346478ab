// a2a-verify.mjs: checks A2A Agent Cards a Surety node serves with @a2a-js/sdk's own code,
// not Surety's: the SDK's card resolver fetches each card, AgentCard.fromJSON parses it, and
// the SDK's verifyAgentCardSignature checks its JWS (over the SDK's own JCS canonical form)
// with the key of the did:key its kid names, which must be the signer the caller expects.
// Then one byte of the card is changed, and the same verifier must refuse it.
//
//   node a2a-verify.mjs <baseURL> <signerDID> <path> [<path>...]
//
// Prints one JSON line per card: {path, name, kid, canonical, valid, tamperedValid}; exits 1
// if a card does not verify or a tampered one does. Run by api's TestA2ACardsVerifyWithTheSDK.
import { AgentCard, verifyAgentCardSignature, canonicalizeAgentCard } from '@a2a-js/sdk';
import { AgentCardResolver } from '@a2a-js/sdk/client';
import { decodeProtectedHeader } from 'jose';
import { didKeyToJWK } from './a2a-didkey.mjs';

const [base, signer, ...paths] = process.argv.slice(2);
if (!base || !signer || paths.length === 0) {
  console.error('usage: node a2a-verify.mjs <baseURL> <signerDID> <path>...');
  process.exit(2);
}
console.debug = () => {}; // the SDK logs each failed signature entry at debug

// The key of the expected signer only: the SDK's verifier takes any key the callback gives,
// so pinning the signer is the caller's part.
const verify = verifyAgentCardSignature(async (kid) => {
  if (kid.split('#')[0] !== signer) throw new Error(`kid ${kid} is not ${signer}`);
  return didKeyToJWK(kid);
});

async function valid(card) {
  try { await verify(card); return true; } catch { return false; }
}

let ok = true;
for (const path of paths) {
  const fetched = await AgentCardResolver.default.resolve(base, path);
  const card = AgentCard.fromJSON(fetched);
  const kid = card.signatures.length ? decodeProtectedHeader(card.signatures[0]).kid : '';
  const good = await valid(card);
  // One byte changed: the name's last character.
  const tampered = AgentCard.fromJSON(JSON.parse(JSON.stringify(fetched)));
  const last = tampered.name.charCodeAt(tampered.name.length - 1);
  tampered.name = tampered.name.slice(0, -1) + String.fromCharCode(last ^ 1);
  const bad = await valid(tampered);
  console.log(JSON.stringify({ path, name: card.name, kid, canonical: canonicalizeAgentCard(card), valid: good, tamperedValid: bad }));
  if (!good || bad) ok = false;
}
process.exit(ok ? 0 : 1);
