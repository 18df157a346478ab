// @surety/client: a TypeScript client for Surety nodes. DIDs and keys, signed envelopes,
// cards, audits and wallet bindings (signed and verified by the node's own rules), the
// audit log's proofs, a typed client of the node's API, and the agent's own wallet.

export * from "./encoding.js";
export * from "./did.js";
export * from "./keys.js";
export * from "./jws.js";
export * from "./envelope.js";
export * from "./card.js";
export * from "./audit.js";
export * from "./binding.js";
export * from "./merkle.js";
export * from "./client.js";
export * from "./jobabi.js";
export * from "./jobs.js";
export * from "./wallet.js";
export * from "./abi.js";
export * from "./peer.js";
export * from "./checkpoint.js";
export * from "./groups.js";
export * from "./a2a.js";
export * from "./credential.js";
