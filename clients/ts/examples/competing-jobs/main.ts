// Three TypeScript workers compete on one Surety job (ERC-8183 through SuretyHook), with
// nothing but this package and viem: the client opens the job from its own wallet, sets its
// budget and plan (three workers may join, two may be paid), funds it (approving the token
// first); each worker joins and submits from its own wallet; the client picks two and splits
// the budget 70/30. Then a milestone job of two parts for one worker, each part approved and
// paid on its own. Every call goes to the chain at SURETY_RPC; the node's index is read back
// after each.
//
// Environment:
//   SURETY_NODE   the node's API URL
//   SURETY_RPC    the chain's JSON-RPC URL
//   SURETY_TOKEN  an ERC-20 the client holds (a DevToken)
//   SURETY_KEYS   comma-separated private keys (hex): the client, the arbiter, three workers
//
// It prints one line per step and, last, a JSON summary; it exits 1 on any failure.

import { type Hex, keccak256, toBytes } from "viem";
import { Client, OwnWallet } from "../../src/index.js";

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`set ${name}`);
  return v;
}
function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`check failed: ${what}`);
}

const node = new Client(need("SURETY_NODE"));
const rpcUrl = need("SURETY_RPC");
const token = need("SURETY_TOKEN");
const [clientKey, arbiterKey, ...workerKeys] = need("SURETY_KEYS").split(",") as Hex[];
const client = await OwnWallet.open(clientKey, node, { rpcUrl });
const arbiter = await OwnWallet.open(arbiterKey, node, { rpcUrl });
const workers = await Promise.all(workerKeys.map((k) => OwnWallet.open(k, node, { rpcUrl })));
check(workers.length === 3, "three worker keys");
const expiredAt = BigInt(Math.floor(Date.now() / 1000) + 7 * 24 * 3600);

// Three workers compete; two are paid.
const budget = 10n * 10n ** 18n;
const { id } = await client.createJob({ expiredAt, description: "find the bug" }, { surety: true });
console.log(`job ${id}: created as a Surety job`);
await client.jobCall(id, { call: "setBudget", token, amount: budget, plan: { arbiter: arbiter.address, reviewWindow: 3600, arbiterTime: 3600, maxEntries: 3, maxWinners: 2 } });
let { job } = await client.jobCall(id, { call: "fund", expectedBudget: budget });
check(job.status === "funded" && job.surety?.phase === "open", `funded: ${job.status} ${job.surety?.phase}`);
for (const w of workers) {
  await w.hookCall(id, { call: "join" });
  ({ job } = await w.hookCall(id, { call: "submit", deliverable: keccak256(toBytes(`patch from ${w.address}`)) }));
  console.log(`job ${id}: ${w.address} joined and submitted`);
}
check(job.surety?.entries?.length === 3, "three entries");
({ job } = await client.hookCall(id, { call: "pick", winners: [workers[0].address, workers[2].address], bps: [7000, 3000] }));
console.log(`job ${id}: ${job.status}, ${job.surety?.settlement?.outcome}`);
const awards = Object.fromEntries((job.surety?.entries ?? []).map((e) => [e.worker, e.amount ?? "0"]));

// A two-part milestone job for the first worker, each part approved and paid on its own.
const parts: bigint[] = [];
for (const [i, amount] of [10n ** 18n, 2n * 10n ** 18n].entries()) {
  const part = await client.createJob({ expiredAt, description: `report, part ${i + 1}` }, { surety: true });
  await client.jobCall(part.id, { call: "setBudget", token, amount, plan: { arbiter: arbiter.address, reviewWindow: 3600, arbiterTime: 3600, maxEntries: 1, maxWinners: 1, worker: workers[0].address, prevPart: parts[i - 1] } });
  await client.jobCall(part.id, { call: "fund", expectedBudget: amount });
  parts.push(part.id);
}
for (const p of parts) {
  await workers[0].hookCall(p, { call: "join" });
  await workers[0].hookCall(p, { call: "submit", deliverable: keccak256(toBytes(`chapter ${p}`)) });
  const { job: done } = await client.hookCall(p, { call: "approve" });
  check(done.status === "completed" && done.surety?.parts?.length === 2, `part ${p}: ${done.status}, parts ${done.surety?.parts}`);
  console.log(`job ${p}: part approved and paid`);
}
console.log(JSON.stringify({ ok: true, job: id.toString(), status: job.status, outcome: job.surety?.settlement?.outcome, awards, parts: parts.map(String) }));
