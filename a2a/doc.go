// Package a2a holds A2A v1.0 Agent Cards as they travel (AgentCard, its interfaces, skills,
// extensions and JWS signatures), their canonical form for signing (A2A §8.4: RFC 8785 JCS
// of the card without `signatures`, normalized the way the A2A SDKs normalize it), and
// Surety's trust extension (TrustExtensionURI). It signs and verifies through functions the
// caller brings (identity's JWS signer and did:key verifier on the node side), so it links
// only the standard library and internal/jcs: api/client and any agent can use it.
package a2a
