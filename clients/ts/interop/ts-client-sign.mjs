// Signs one of each of Surety's objects with the TypeScript client (compiled: dist/src) and
// fresh keys of both types, and prints them as JSON on stdout, for the Go test
// TestTypeScriptSignsWhatGoVerifies to check with the node's own verifiers.
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import { Key, newStatement, signA2ACard, signAudit, signBinding, bindingJSON, signCard, signEnvelope } from "../dist/src/index.js";

const node = process.argv[2];
const out = { node, objects: [] };
for (const type of ["ed25519", "secp256k1"]) {
  const key = Key.generate(type);
  const other = Key.generate(type === "ed25519" ? "secp256k1" : "ed25519");
  const wallet = privateKeyToAccount(generatePrivateKey());
  const now = Math.floor(Date.now() / 1000);
  out.objects.push({
    type,
    did: key.did.did,
    keyFile: key.keyFile(),
    envelope: signEnvelope(key, { to: [node], aud: node, chain_id: 31337, state: "discussion", body: { text: "<hello & goodbye>", n: 1.5 } }),
    card: signCard({ did: key.did.did, name: `ts ${type}`, description: "a card <signed> in TypeScript", capabilities: ["audit", "lang:ts"], endpoints: [{ kind: "mcp", url: "https://agent.example/mcp" }], wallet: wallet.address, seq: 2, updated: now }, key),
    a2a: signA2ACard({ did: key.did.did, name: `ts ${type} ünïcode`, description: "an A2A card <signed> in TypeScript", capabilities: ["audit", "lang/ts"], endpoints: [{ kind: "a2a", url: "https://agent.example/a2a" }], wallet: wallet.address, seq: 3, updated: now }, key),
    audit: signAudit(key, { subject: other.did.did, score: 0.25, evidence: { hash: "0x" + "ab".repeat(32), uri: "https://evidence.example/r" }, bounty: { chain_id: 31337, escrow: "0x5FbDB2315678afecb367f032d93F642f64180aa3", id: 9 } }),
    binding: bindingJSON(await signBinding(newStatement(key, wallet.address, 31337, "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"), key, wallet)),
    wallet: wallet.address,
  });
}
console.log(JSON.stringify(out));
