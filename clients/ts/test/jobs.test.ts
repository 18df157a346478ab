// ERC-8183 calls as the TypeScript client builds them: the plan's encoding is the one cast
// (an independent implementation) and Go's jobs.PlanData give, picks that do not add up are
// refused before anything is signed, and a createJob receipt's logs give the job's id.

import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeFunctionData, encodeEventTopics, encodeAbiParameters, type Hex } from "viem";
import { createdJobIds, encodePlan, hookData, jobData, jobEscrowAbi, suretyHookAbi } from "../src/index.js";

// cast abi-encode "f((address,uint32,uint32,uint16,uint16,uint128,address,uint256))" \
//   "(0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC,3600,86400,3,2,1000000000000000000,0x0000000000000000000000000000000000000000,7)"
// (jobs.TestPlanDataIsCasts holds Go's encoding to the same bytes)
const castPlan =
  "0x0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc0000000000000000000000000000000000000000000000000000000000000e100000000000000000000000000000000000000000000000000000000000015180000000000000000000000000000000000000000000000000000000000000000300000000000000000000000000000000000000000000000000000000000000020000000000000000000000000000000000000000000000000de0b6b3a764000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000007";

const plan = { arbiter: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", reviewWindow: 3600, arbiterTime: 86400, maxEntries: 3, maxWinners: 2, minStake: 10n ** 18n, prevPart: 7n };

test("jobs: encodePlan is cast's abi.encode of the Plan tuple", () => {
  assert.equal(encodePlan(plan), castPlan);
});

test("jobs: setBudget carries the plan as its optParams", () => {
  const data = jobData(5n, { call: "setBudget", token: "0x5FbDB2315678afecb367f032d93F642f64180aa3", amount: 2n, plan });
  const d = decodeFunctionData({ abi: jobEscrowAbi, data });
  assert.equal(d.functionName, "setBudget");
  assert.deepEqual(d.args?.slice(0, 3), [5n, "0x5FbDB2315678afecb367f032d93F642f64180aa3", 2n]);
  assert.equal(d.args?.[3], castPlan);
});

test("jobs: a pick must add up to 10000 basis points, a ruling to at most 10000", () => {
  const w = ["0x90F79bf6EB2c4f870365E785982E1f101E93b906", "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"];
  assert.throws(() => hookData(1n, { call: "pick", winners: w, bps: [5000, 4000] }), /exactly 10000/);
  assert.throws(() => hookData(1n, { call: "resolve", winners: w, bps: [6000, 6000] }), /12000 basis points/);
  const d = decodeFunctionData({ abi: suretyHookAbi, data: hookData(1n, { call: "pick", winners: w, bps: [7000, 3000] }) });
  assert.equal(d.functionName, "pick");
  assert.deepEqual(d.args, [1n, w, [7000, 3000]]);
  assert.equal(decodeFunctionData({ abi: suretyHookAbi, data: hookData(9n, { call: "release" }) }).functionName, "release");
});

test("jobs: createdJobIds reads JobCreated at JobEscrow only", () => {
  const escrow = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
  const topics = encodeEventTopics({ abi: jobEscrowAbi, eventName: "JobCreated", args: { jobId: 42n, client: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", provider: "0x0000000000000000000000000000000000000000" } }) as Hex[];
  const data = encodeAbiParameters([{ type: "address" }, { type: "uint256" }, { type: "address" }], ["0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", 1n << 40n, "0x0000000000000000000000000000000000000000"]);
  const logs = [
    { address: escrow.toLowerCase(), topics, data },
    { address: "0x0000000000000000000000000000000000000001", topics, data }, // another contract's look-alike
  ];
  assert.deepEqual(createdJobIds(logs, escrow), [42n]);
});
