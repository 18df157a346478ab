// What the explorer reads of the chain itself: amounts in base units written as ETH, keccak-256,
// and the StakeRegistry events a bounty's transactions carry (the claim locks the worker's
// stake under the bounty's id; its end unlocks it, or a ruling slashes part of it, the lock id
// then being the Slashed event's reason), decoded from receipts the node's read-only
// JSON-RPC (POST /v1/rpc) serves.
import { keccak_256 } from '@noble/hashes/sha3.js';

const ZERO = '0x0000000000000000000000000000000000000000';

/** amount writes a base-unit amount (decimal string) as ETH, or as token units with 18
 * decimals assumed (the token's own decimals are not in the API), naming the token. */
export function amount(units, token) {
  let v;
  try {
    v = BigInt(units || '0');
  } catch {
    return String(units);
  }
  const whole = v / 10n ** 18n;
  let frac = (v % 10n ** 18n).toString().padStart(18, '0').replace(/0+$/, '');
  if (frac.length > 6) frac = frac.slice(0, 6) + '…';
  const n = frac ? `${whole}.${frac}` : String(whole);
  return !token || token.toLowerCase() === ZERO ? `${n} ETH` : `${n} of token ${token.slice(0, 8)}…${token.slice(-4)}`;
}

/** keccak is keccak-256 of a text's UTF-8 bytes, as 0x-hex. */
export function keccak(text) {
  const d = keccak_256(new TextEncoder().encode(text));
  return '0x' + [...d].map((x) => x.toString(16).padStart(2, '0')).join('');
}

/** topic is an event's topic 0: keccak-256 of its signature. */
export const topic = (sig) => keccak(sig);
/** STAKE_EVENTS names StakeRegistry's lock events by topic 0. */
export const STAKE_EVENTS = {
  [topic('Locked(bytes32,address,uint256,uint256)')]: 'Locked',
  [topic('Unlocked(bytes32,address,uint256,uint256)')]: 'Unlocked',
  [topic('Slashed(bytes32,address,uint256,address,bytes32)')]: 'Slashed',
};

/** stakeEventsOf reads a transaction's receipt (as eth_getTransactionReceipt answers it) and
 * returns the events of the StakeRegistry at registry in it that concern bounty id: {name,
 * agentId, controller, amount (base units, decimal), beneficiary (Slashed)}. */
export function stakeEventsOf(receipt, registry, id) {
  const out = [];
  const word = (d, i) => `0x${d.slice(2 + 64 * i, 2 + 64 * (i + 1))}`;
  for (const l of receipt?.logs || []) {
    if (!registry || String(l.address).toLowerCase() !== registry.toLowerCase()) continue;
    const name = STAKE_EVENTS[String(l.topics?.[0]).toLowerCase()];
    if (!name) continue;
    const lockId = name === 'Slashed' ? BigInt(word(l.data, 2)) : BigInt(l.topics[3]);
    if (lockId !== BigInt(id)) continue;
    out.push({ name, agentId: l.topics[1], controller: `0x${String(l.topics[2]).slice(26)}`, amount: BigInt(word(l.data, 0)).toString(),
      beneficiary: name === 'Slashed' ? `0x${word(l.data, 1).slice(26)}` : undefined });
  }
  return out;
}

/** POSTED is BountyEscrow's Posted event's topic 0: Posted(uint256 indexed id, address indexed
 * poster, address indexed token, Terms terms), Terms a static tuple of nine words. */
export const POSTED = topic('Posted(uint256,address,address,(address,address,uint256,address,uint64,uint32,uint16,uint256,bytes32))');

/** postedSpecHashOf reads a transaction's receipt for the Posted event of bounty id by the
 * escrow at escrow and returns its terms' specHash (the ninth word of the data), 0x-hex lower
 * case, or null when the receipt holds no such event. */
export function postedSpecHashOf(receipt, escrow, id) {
  for (const l of receipt?.logs || []) {
    if (!escrow || String(l.address).toLowerCase() !== String(escrow).toLowerCase()) continue;
    if (String(l.topics?.[0]).toLowerCase() !== POSTED) continue;
    let lid;
    try {
      lid = BigInt(l.topics[1]);
    } catch {
      continue;
    }
    if (lid !== BigInt(id)) continue;
    const d = String(l.data || '');
    if (!/^0x[0-9a-fA-F]*$/.test(d) || d.length < 2 + 64 * 9) continue;
    return `0x${d.slice(2 + 64 * 8, 2 + 64 * 9).toLowerCase()}`;
  }
  return null;
}
