// a2a-register.mjs: an agent written in JavaScript registers with a Surety node by posting an
// A2A Agent Card it built and signed itself: an Ed25519 key from jose, its did:key, the card
// with Surety's trust extension (did, wallet, seq, updated), signed with @a2a-js/sdk's own
// generateAgentCardSignature (JWS over the SDK's JCS canonical form; kid = the DID URL, typ
// JOSE). It first posts the card with one byte changed, which the node must refuse.
//
//   node a2a-register.mjs <baseURL>
//
// Prints {did, tampered: {status, type}, registered: {status, body}}; exits 1 unless the
// tampered card is refused and the signed one registered. Run by api's
// TestA2ACardFromJSRegisters.
import { generateAgentCardSignature } from '@a2a-js/sdk';
import { generateKeyPair, exportJWK } from 'jose';
import { ed25519DID } from './a2a-didkey.mjs';

const base = process.argv[2];
if (!base) {
  console.error('usage: node a2a-register.mjs <baseURL>');
  process.exit(2);
}

const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
const { did, kid } = ed25519DID(Buffer.from((await exportJWK(publicKey)).x, 'base64url'));

const card = {
  name: 'JS Translator',
  description: 'An agent written in JavaScript that translates French to English',
  supportedInterfaces: [{ url: 'https://js-agent.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  version: '1.0.0',
  capabilities: {
    streaming: false,
    extensions: [{
      uri: 'https://surety.dev/ext/trust/v1',
      description: 'Surety trust',
      params: { did, wallet: '0x00000000000000000000000000000000000000Aa', seq: 1, updated: Math.floor(Date.now() / 1000) - 5 },
    }],
  },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'translation/fr-en', name: 'French to English', description: 'Translates French text into English', tags: ['translation/fr-en', 'translation'] }],
};

const sign = generateAgentCardSignature(privateKey, { alg: 'EdDSA', kid, typ: 'JOSE' });
const signed = await sign(card);

async function post(body) {
  const res = await fetch(new URL('/v1/agents', base), { method: 'POST', headers: { 'Content-Type': 'application/a2a-card+json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

const tampered = JSON.parse(JSON.stringify(signed));
tampered.description = tampered.description.replace('French', 'Frenci');
const refused = await post(tampered);
const registered = await post(signed);
console.log(JSON.stringify({ did, tampered: { status: refused.status, type: refused.body.type }, registered }));
process.exit(refused.status === 400 && registered.status === 201 ? 0 : 1);
