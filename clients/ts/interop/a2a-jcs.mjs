// a2a-jcs.mjs: canonicalizes JSON texts with two JavaScript implementations of RFC 8785 that
// are not Surety's: the npm `canonicalize` package (by one of the RFC's authors) and
// @a2a-js/sdk's own (its canonicalizeAgentCard's serializer is JSON.stringify with sorted
// keys; used here on the raw value through a card's extension params). Reads a JSON array of
// texts on stdin; prints a JSON array of {canonicalize, sdk} per text. Run by
// internal/jcs's TestTransformAgreesWithJavaScript.
import { createRequire } from 'node:module';
import { canonicalizeAgentCard } from '@a2a-js/sdk';

const require = createRequire(import.meta.url);
const canonicalize = require('canonicalize');

let input = '';
for await (const chunk of process.stdin) input += chunk;
const texts = JSON.parse(input);
const out = texts.map((text) => {
  const value = JSON.parse(text);
  // The SDK canonicalizes cards only: wrap the value as an extension's params and cut the
  // params' canonical form back out (the card's other members are fixed and sort first).
  const card = { name: 'n', capabilities: { extensions: [{ uri: 'u', params: { v: value } }] } };
  const whole = canonicalizeAgentCard(card);
  const prefix = '{"capabilities":{"extensions":[{"params":{"v":';
  const suffix = '},"uri":"u"}]},"name":"n"}';
  const sdk = whole.startsWith(prefix) && whole.endsWith(suffix) ? whole.slice(prefix.length, whole.length - suffix.length) : null;
  return { canonicalize: canonicalize(value), sdk };
});
console.log(JSON.stringify(out));
