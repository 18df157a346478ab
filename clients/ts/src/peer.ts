// The node-to-peer binding: a node's DID claims its libp2p peer id in a compact JWS of typ
// surety-peer+jws (GET /v1/info, peer.binding), so a client that reaches a node over libp2p
// knows which DID it speaks to.

import { VerifyError, verifyJWS } from "./jws.js";

/** PEER_BINDING_TYPE is the typ of a peer binding. */
export const PEER_BINDING_TYPE = "surety-peer+jws";

/** PeerBinding is what a node's DID claims. */
export interface PeerBinding {
  did: string;
  peerId: string;
}

/** PeerBindingError refuses a binding that names another node or peer (reason peer-mismatch). */
export class PeerBindingError extends Error {
  readonly reason = "peer-mismatch";
  constructor(detail: string) {
    super(`peer binding names another node or peer: ${detail}`);
    this.name = "PeerBindingError";
  }
}

/**
 * verifyPeerBinding checks a peer binding: signed by a did:key, its payload exactly
 * {did, peerId} naming the signer, and, when given, signed by nodeDid and naming peerId.
 * It throws VerifyError (malformed, bad-signature, unsupported-alg) or PeerBindingError.
 */
export function verifyPeerBinding(raw: string, nodeDid = "", peerId = ""): PeerBinding {
  const { payload, signer } = verifyJWS(raw, PEER_BINDING_TYPE);
  let b: Record<string, unknown>;
  try {
    b = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch (e) {
    throw new VerifyError("malformed", `peer binding payload: ${(e as Error).message}`);
  }
  if (b === null || typeof b !== "object" || Array.isArray(b)) throw new VerifyError("malformed", "peer binding payload: not an object");
  for (const k of Object.keys(b)) if (k !== "did" && k !== "peerId") throw new VerifyError("malformed", `peer binding payload: unknown field ${JSON.stringify(k)}`);
  if (typeof b.did !== "string" || typeof b.peerId !== "string" || b.did === "" || b.peerId === "") {
    throw new VerifyError("malformed", "peer binding payload needs did and peerId");
  }
  if (b.did !== signer) throw new PeerBindingError(`it names ${b.did.slice(0, 120)} but is signed by ${signer}`);
  if (nodeDid && signer !== nodeDid) throw new PeerBindingError(`signed by ${signer}, not the node ${nodeDid.slice(0, 120)}`);
  if (peerId && b.peerId !== peerId) throw new PeerBindingError(`it names peer ${b.peerId.slice(0, 80)}, not ${peerId.slice(0, 80)}`);
  return { did: b.did, peerId: b.peerId };
}
