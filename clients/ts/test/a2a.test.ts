// A2A Agent Cards: @a2a-js/sdk, an independent implementation, parses and verifies the
// client's signed cards (its own canonical form equal to ours), a card with one byte changed
// fails; RFC 8785 on its examples; I-JSON refusals; the mapping round trip.

import assert from "node:assert/strict";
import { test } from "node:test";
import { AgentCard, canonicalizeAgentCard, verifyAgentCardSignature } from "@a2a-js/sdk";
import {
  CardError,
  Key,
  decodeA2ACard,
  fromA2A,
  jcs,
  parseA2ACard,
  parseIJSON,
  signA2ACard,
  toA2A,
  verifyServedA2ACard,
  type Card,
} from "../src/index.js";

const now = Math.floor(Date.now() / 1000);
const card = (k: Key): Card => ({
  did: k.did.did, name: "Übersetzer \u2028 <ts>", description: "translates", capabilities: ["translation/fr-en", "audit"],
  endpoints: [{ kind: "a2a", url: "https://a.example/a2a" }, { kind: "mcp", url: "https://a.example/mcp" }],
  wallet: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", seq: 4, updated: now,
});

test("a2a: @a2a-js/sdk verifies the client's Ed25519 card, and a card with one byte changed fails", async () => {
  console.debug = () => {}; // the SDK logs each failed signature at debug
  const k = Key.generate("ed25519");
  const text = signA2ACard(card(k), k);
  const parsed = AgentCard.fromJSON(JSON.parse(text));
  assert.equal(canonicalizeAgentCard(parsed), decodeA2ACard(text).canonical, "the SDK's canonical form is ours");
  const verify = verifyAgentCardSignature(async (kid: string) => {
    assert.equal(kid, k.kid);
    return { ...k.publicJwk(), alg: "EdDSA" };
  });
  await verify(parsed);
  const tampered = AgentCard.fromJSON(JSON.parse(text.replace('"seq":4', '"seq":5')));
  await assert.rejects(verify(tampered));
});

test("a2a: the client's cards of both key types parse back to the Surety card, and refuse tampering", () => {
  for (const type of ["ed25519", "secp256k1"] as const) {
    const k = Key.generate(type);
    const c = card(k);
    const text = signA2ACard(c, k);
    const back = parseA2ACard(text, now);
    assert.equal(back.signer, k.did.did);
    assert.deepEqual({ ...back.card, wallet: back.card.wallet.toLowerCase() }, c);
    assert.deepEqual(fromA2A(toA2A(c)), { ...c, wallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" });
    assert.throws(() => parseA2ACard(text.replace('"seq":4', '"seq":5'), now), (e: unknown) => e instanceof CardError && e.slug === "card-forged");
    // Served cards are the node's word: the agent's signature is no node's.
    assert.throws(() => verifyServedA2ACard(text, Key.generate().did.did), (e: unknown) => e instanceof CardError && e.slug === "card-forged");
    assert.equal(verifyServedA2ACard(text, k.did.did).did, k.did.did);
  }
});

test("a2a: JCS as RFC 8785 writes it", () => {
  // RFC 8785 §3.2.2 and Appendix B.
  const input = '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}';
  assert.equal(jcs(parseIJSON(input)), '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  assert.equal(jcs({ "\u20ac": 1, "\r": 2, "\ud83d\ude00": 3, "\ufb33": 4, "1": 5, "\u00e4": 6 }), '{"\\r":2,"1":5,"\u00e4":6,"\u20ac":1,"\ud83d\ude00":3,"\ufb33":4}');
});

test("a2a: I-JSON refuses duplicate members, lone surrogates and deep nesting", () => {
  assert.throws(() => parseIJSON('{"a":1,"a":2}'), CardError);
  assert.throws(() => parseIJSON('{"a":"\\ud800"}'), CardError);
  assert.throws(() => parseIJSON("[".repeat(70) + "]".repeat(70)), CardError);
  assert.throws(() => parseIJSON('{"a":1} x'), CardError);
  assert.deepEqual(parseIJSON('{"__proto__":{"x":1}}'), JSON.parse('{"__proto__":{"x":1}}'));
});
