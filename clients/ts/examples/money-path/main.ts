// The marketplace day's money path, played by two TypeScript agents with nothing but this
// package: each makes its DID, registers it, binds a wallet it holds (both keys sign; the
// wallet sends StakeRegistry.bind itself), stakes from it and registers its card (the worker
// an A2A v1.0 Agent Card, checked back as the node serves it); the poster
// posts a bounty from its wallet (through the node's relay), the worker finds it, claims, submits; the poster accepts
// and files an audit; then anyone reads the worker's reputation and checks that the audit is
// in the node's signed log (an inclusion proof against the signed tree head, and the head's
// root against the one anchored on chain when the chain is reachable).
//
// Environment:
//   SURETY_NODE        the node's API URL
//   SURETY_FUNDER_KEY  a funded private key (hex) that pays the agents' wallets their ETH
//   SURETY_RPC         the chain's JSON-RPC URL: funding and the anchored root are read
//                      there; the agents' own transactions go through the node's relay
//   SURETY_KEY_DIR     where the agents' key files are written (default: a temp dir)
//
// It prints one line per step and, last, a JSON summary; it exits 1 on any failure.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Hex, createPublicClient, createWalletClient, defineChain, http, keccak256, parseAbiItem, parseEther, toBytes } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  Client,
  Key,
  OwnWallet,
  ProblemError,
  RevertError,
  agentId,
  checkCredentialStatus,
  leafHash,
  openHead,
  parseA2ACard,
  parseCard,
  signA2ACard,
  signAudit,
  signCard,
  signEnvelope,
  verifyCredential,
  verifyInclusion,
  verifyServedA2ACard,
} from "../../src/index.js";

const began = Date.now();
function say(msg: string): void {
  console.log(`[${((Date.now() - began) / 1000).toFixed(1).padStart(5)}s] ${msg}`);
}
function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`set ${name}`);
  return v;
}
function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`check failed: ${what}`);
}
async function until<T>(what: string, ms: number, f: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** An agent: its DID key (saved and read back as a key file) and its own wallet. */
interface Agent {
  name: string;
  key: Key;
  wallet: OwnWallet;
  /** The wallet's private key (the agent holds it; the node never sees it). */
  walletKey: Hex;
}

async function main(): Promise<void> {
  const node = new Client(need("SURETY_NODE"));
  const rpc = need("SURETY_RPC");
  const funderKey = need("SURETY_FUNDER_KEY");
  const keyDir = process.env.SURETY_KEY_DIR ?? mkdtempSync(join(tmpdir(), "surety-ts-"));
  const info = await node.info();
  check(info.nodeDid, "the node names its DID");
  const nodeDid = info.nodeDid;
  say(`node ${nodeDid} on chain ${info.chain.id}, escrow ${info.contracts.BountyEscrow}`);

  // The funder pays each agent's fresh wallet straight on the chain (a plain transfer is no
  // call the node's relay carries).
  const chain = defineChain({ id: info.chain.id, name: "devnet", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [rpc] } } });
  const chainClient = createPublicClient({ chain, transport: http(rpc) });
  const funder = createWalletClient({ account: privateKeyToAccount((funderKey.startsWith("0x") ? funderKey : "0x" + funderKey) as Hex), chain, transport: http(rpc) });

  const agents: Agent[] = [];
  for (const [name, type] of [["poster", "ed25519"], ["worker", "secp256k1"]] as const) {
    const made = Key.generate(type);
    const file = join(keyDir, `${name}.key.json`);
    await made.save(file);
    const key = await Key.load(file); // the key file the Go CLI reads too
    check(key.did.did === made.did.did, "a saved key reads back as itself");
    // Register the DID: a proof of possession signed for the node's challenge.
    const ch = await node.challenge();
    const issued = await node.registerDID(signEnvelope(key, { to: [ch.audience], body: { challenge: ch.challenge } }));
    check(issued.did === key.did.did, "the node registered the DID");
    const pk = generatePrivateKey();
    const fund = await funder.sendTransaction({ to: privateKeyToAccount(pk).address, value: parseEther("20") });
    await chainClient.waitForTransactionReceipt({ hash: fund });
    // The poster's transactions go through the node's JSON-RPC relay, the worker's straight
    // to the chain's RPC URL (and the poster's accept, below, through POST /v1/tx/raw).
    const wallet = await OwnWallet.open(pk, node, name === "worker" ? { rpcUrl: rpc } : {});
    agents.push({ name, key, wallet, walletKey: pk });
    say(`${name}: ${key.did.did} (${type}), wallet ${wallet.address} funded with 20 ETH`);
  }
  const [poster, worker] = agents;

  // Bind (both keys sign, the wallet sends the bind), stake, register the card.
  for (const a of agents) {
    const { answer, sent } = await a.wallet.bind(a.key);
    check(answer.onChain && sent, `${a.name}'s own wallet sent the bind`);
    const { holding } = await a.wallet.stake(a.key.did.did, parseEther("1"));
    check(holding.staked === parseEther("1").toString(), `${a.name} staked 1 ETH (node says ${holding.staked})`);
    // The worker registers an A2A v1.0 Agent Card, the poster Surety's JWS card.
    const card = {
      did: a.key.did.did, name: `ts-${a.name}`, description: `a TypeScript ${a.name}`, capabilities: a === worker ? ["audit", "solidity", "lang/typescript"] : ["marketplace"],
      endpoints: [{ kind: "a2a" as const, url: `https://${a.name}.example/a2a` }], wallet: a.wallet.address, seq: 1, updated: Math.floor(Date.now() / 1000),
    };
    const reg = a === worker ? await node.registerA2ACard(signA2ACard(card, a.key)) : await node.registerCard(signCard(card, a.key));
    check(reg.did === a.key.did.did && reg.staked, `${a.name}'s card registered as staked`);
    const back = await node.agent(a.key.did.did);
    const kept = back.jws.startsWith("{") ? parseA2ACard(back.jws).card : parseCard(back.jws).card;
    check(kept.name === `ts-${a.name}` && kept.did === a.key.did.did, "the node keeps the card as signed");
    say(`${a.name}: bound in block ${sent.block} (tx ${sent.txHash.slice(0, 10)}…), staked 1 ETH, ${a === worker ? "A2A" : "JWS"} card registered`);
  }
  // The worker's stake credential (VC 2.0, signed by the node) verifies offline, and its
  // status list says it is not revoked.
  const vc = verifyCredential(await node.credential(worker.key.did.did, "stake"), { issuer: nodeDid });
  const subject = vc.credential.credentialSubject as { id?: string; wallet?: string; amount?: string };
  check(subject.id === worker.key.did.did && subject.wallet?.toLowerCase() === worker.wallet.address.toLowerCase() && subject.amount === parseEther("1").toString(),
    `the stake credential names the worker, its wallet and 1 ETH (${JSON.stringify(subject)})`);
  const listURL = vc.credential.credentialStatus?.statusListCredential;
  check(listURL, "the stake credential has a status entry");
  const list = verifyCredential(await node.statusList(listURL.slice(listURL.lastIndexOf("/") + 1)), { issuer: nodeDid });
  checkCredentialStatus(vc, list);
  say(`the worker's stake credential verifies, and its status list (${listURL}) says it stands`);
  const found = await node.searchAgents({ capability: "lang/typescript" });
  check(found.some((a) => a.did === worker.key.did.did), "discovery finds the worker");
  // Any A2A client reads the worker's card as the node serves it, signed by the node, with the
  // agent's own signed card one link away; the node's card is signed by the node too.
  const served = verifyServedA2ACard(await node.agentA2ACard(worker.key.did.did), nodeDid);
  check(served.did === worker.key.did.did && served.card.skills?.some((s) => s.id === "lang/typescript"), "the served A2A card names the worker and its skills");
  const own = parseA2ACard(await node.agentA2ACard(worker.key.did.did, "registered"));
  check(own.signer === worker.key.did.did, "the registered A2A card is the worker's own signature");
  verifyServedA2ACard(await node.nodeA2ACard(), nodeDid);
  say(`the worker's A2A card, served by the node and registered by the worker, both verify (${served.card.skills?.length} skills)`);

  // The poster posts a bounty from its own wallet.
  const head = await chainClient.getBlock();
  const spec = "Audit the TypeScript client's envelope verifier; report findings.";
  const posted = await poster.wallet.post({
    amount: parseEther("2"), arbiter: funder.account.address, deadline: Number(head.timestamp) + 3600, reviewWindow: 600, minStake: parseEther("0.5"), spec,
  });
  const id = posted.id;
  say(`poster posts bounty ${id}: 2 ETH, min stake 0.5 ETH (tx ${posted.sent.txHash.slice(0, 10)}…)`);

  // The worker finds it, checks the task text against the hash on chain, claims, submits.
  const open = await node.bounties({ status: "open" });
  const seen = open.find((b) => BigInt(b.id) === id);
  check(seen, "the worker finds the open bounty");
  check(seen.spec === spec && keccak256(toBytes(seen.spec)) === seen.specHash, "the task text matches the specHash on chain");
  await worker.wallet.act(id, "claim", { agentId: agentId(worker.key.did.did) });
  const sub = await worker.wallet.act(id, "submit", { resultHash: keccak256(toBytes("report: no findings")) });
  check(sub.bounty.status === "submitted", `bounty is submitted (is ${sub.bounty.status})`);
  say(`worker claims and submits bounty ${id}`);
  // The accept goes the third way: signed here and handed whole to POST /v1/tx/raw.
  const posterRaw = await OwnWallet.open(poster.walletKey, node, { relay: "raw" });
  const acc = await posterRaw.act(id, "accept");
  check(acc.bounty.status === "accepted", `bounty is accepted (is ${acc.bounty.status})`);
  check(BigInt(acc.bounty.payout) > 0n, "the worker is paid");
  say(`poster accepts (tx ${acc.sent.txHash.slice(0, 10)}… through /v1/tx/raw): the worker is paid ${acc.bounty.payout} wei, fee ${acc.bounty.fee}`);
  // A second accept is refused by the escrow before anything is sent, its error decoded.
  const again2 = await poster.wallet.act(id, "accept").then(() => undefined, (e: unknown) => e);
  check(again2 instanceof RevertError && again2.contract === "BountyEscrow", `a second accept is refused with a decoded revert (got ${String(again2)})`);
  say(`a second accept: ${again2.message}`);

  // The poster audits the worker's work on the bounty it settled.
  const before = await node.reputation(worker.key.did.did);
  const audit = signAudit(poster.key, {
    subject: worker.key.did.did, score: 0.9, evidence: { hash: keccak256(toBytes("report: no findings")) },
    bounty: { chain_id: info.chain.id, escrow: info.contracts.BountyEscrow, id: Number(id) },
  });
  const filed = await node.submitAudit(audit);
  check(filed.audit.backed, "the audit is backed by the settlement");
  say(`poster audits the worker: 0.9, backed (weight ${filed.counted.weight.toFixed(3)})`);
  // The node refuses a second use of the same envelope, as a typed problem.
  const again = await node.submitAudit(audit).then(
    () => undefined,
    (e: unknown) => e,
  );
  check(again instanceof ProblemError, `a replayed audit is refused with a problem (got ${String(again)})`);
  check(again.slug === "envelope-replayed" && again.status === 409 && again.reason === "replayed", `replay: ${again.type} ${again.status}`);
  say(`the same audit again: ${again.status} ${again.type}`);

  const rep = await until("the worker's reputation to count the audit", 30_000, async () => {
    const r = await node.reputation(worker.key.did.did);
    return r.audits >= 1 && r.score !== before.score ? r : undefined;
  });
  say(`worker's reputation: ${before.score.toFixed(3)} -> ${rep.score.toFixed(3)} (${rep.audits} audit, confidence ${rep.confidence.toFixed(3)})`);

  // The proof: the audit's leaf is in the log under the head the node signed.
  const leaf = leafHash(audit);
  const proofs = await until("the audit's epoch to close in the log", 60_000, async () => {
    const h = await node.logHead();
    if (h.size === 0 || !h.signed) return undefined;
    const signed = openHead(h.signed, nodeDid); // the fields beside "signed" are not signed
    try {
      const p = await node.inclusionProof(leaf, signed.size);
      return { signed, p, anchorTx: h.anchorTx };
    } catch (e) {
      if (e instanceof ProblemError && e.status === 404) return undefined; // not logged yet
      throw e;
    }
  });
  verifyInclusion(leaf, proofs.p, proofs.signed.size, proofs.signed.root);
  say(`verified: the audit is leaf ${proofs.p.index} of the log of size ${proofs.signed.size}, root ${proofs.signed.root.slice(0, 16)}… signed by the node`);
  const tampered = audit.slice(0, -2) + (audit.at(-2) === "A" ? "B" : "A") + audit.at(-1);
  let tamperedVerifies = true;
  try {
    verifyInclusion(leafHash(tampered), { ...proofs.p, leaf: leafHash(tampered) }, proofs.signed.size, proofs.signed.root);
  } catch {
    tamperedVerifies = false;
  }
  check(!tamperedVerifies, "a tampered copy of the audit does not verify");

  // And the head's root against the one anchored on chain, once the node anchors it.
  let anchored = "not yet anchored";
  const anchoredHead = await until("the node to anchor its head", 30_000, async () => {
    const h = await node.logHead();
    return h.anchorTx ? h : undefined;
  }).catch(() => undefined);
  if (anchoredHead?.anchorTx) {
    const signed = openHead(anchoredHead.signed, nodeDid);
    const tx = await chainClient.getTransaction({ hash: anchoredHead.anchorTx as Hex });
    const root = await poster.wallet.anchoredRoot(tx.from, signed.size);
    check(root !== null && root.slice(2).toLowerCase() === signed.root, `the anchored root ${root} is the signed head's ${signed.root}`);
    const p = await node.inclusionProof(leaf, signed.size);
    verifyInclusion(leaf, p, signed.size, root.slice(2));
    anchored = `anchored by ${tx.from} in tx ${anchoredHead.anchorTx}`;
    say(`verified against the root on chain: ${anchored}`);

    // The node's relay answers eth_getLogs of its own contracts as viem asks it (what an
    // auditor's replay reads): the head's Anchored event, the one Anvil itself holds.
    const anchoredEvent = parseAbiItem("event Anchored(address indexed node, uint64 indexed treeSize, bytes32 root)");
    const relay = createPublicClient({ chain, transport: http(node.rpcURL) });
    const [viaNode, viaChain] = await Promise.all(
      [relay, chainClient].map((c) =>
        c.getLogs({ address: info.contracts.RootAnchor as Hex, event: anchoredEvent, args: { treeSize: BigInt(signed.size) }, fromBlock: 0n, toBlock: "latest" }),
      ),
    );
    const ids = (logs: typeof viaNode) => logs.map((l) => `${l.transactionHash}/${l.logIndex}/${l.args.root}`).join(",");
    check(viaNode.length > 0 && ids(viaNode) === ids(viaChain), `the relay's Anchored logs ${ids(viaNode)} are Anvil's ${ids(viaChain)}`);
    check(viaNode.some((l) => l.args.root?.slice(2).toLowerCase() === signed.root), "an Anchored log holds the signed head's root");

    // The scores the node computed for its anchored head, and the worker's point of history.
    const scored = await until("the node to score its anchored head", 30_000, async () => {
      const sh = await node.logScores({ inputs: true }).catch(() => undefined);
      return sh && sh.size >= signed.size ? sh : undefined;
    });
    const mine = scored.scores.find((x) => x.did === worker.key.did.did);
    check(mine !== undefined && scored.inputs !== undefined && scored.inputs.audits.some((a) => a.subject === worker.key.did.did), "the scored head names the worker and its audit");
    const history = await node.scoreHistory(worker.key.did.did);
    check(history.points.some((pt) => pt.size === scored.size && pt.score === mine!.score), "the worker's history holds its score at the scored head");
    say(`the relay's logs are Anvil's, and the node's scores of head ${scored.size} name the worker at ${mine!.score}`);
  }
  console.log(JSON.stringify({ ok: true, bounty: id.toString(), worker: worker.key.did.did, poster: poster.key.did.did, score: rep.score, leaf, logSize: proofs.signed.size, anchored }));
}

main().catch((e) => {
  console.error(`money path failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
  process.exit(1);
});
