// The wallet's own transactions carry the calldata Go packs (escrow.ActionData and the abigen
// bindings, test/fixtures/go.json), and a node naming contracts other than the deployment's
// is refused before anything is signed.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { BaseError, encodeErrorResult, encodeFunctionData, keccak256, toBytes, toHex, zeroAddress, type Hex } from "viem";
import {
  type Action,
  type Binding,
  type Bounty,
  type Info,
  actionData,
  agentId,
  bindingJSON,
  bountyEscrowAbi,
  RevertError,
  checkDeployment,
  decodeRevert,
  stakeRegistryAbi,
} from "../src/index.js";
import { pkgDir } from "./paths.js";

const fx = JSON.parse(readFileSync(join(pkgDir, "test/fixtures/go.json"), "utf8"));
const calls = fx.calls as { bounty: Bounty; agentId: Hex; resultHash: Hex; actions: Record<string, Hex>; post: Hex; bind: Hex; stake: Hex; proof: string };
const binding = fx.bindings[0].binding as Binding;

test("calls: every action's calldata is Go's, from the node's view of the bounty", () => {
  const args = { agentId: calls.agentId, worker: "0x61f8c24c7feb94fd49f6ac901e21ac37c15396fe", resultHash: calls.resultHash, reasonHash: calls.resultHash };
  assert.equal(Object.keys(calls.actions).length, 10);
  for (const [action, want] of Object.entries(calls.actions)) {
    assert.equal(actionData(calls.bounty, action as Action, args), want, action);
  }
  assert.throws(() => actionData(calls.bounty, "resolve", {}), /arbiter/);
});

test("calls: post, bind and stake are packed as Go packs them", () => {
  const post = encodeFunctionData({
    abi: bountyEscrowAbi,
    functionName: "post",
    args: [zeroAddress, 2_000_000_000_000_000_000n, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", 1764003600n, 600, 500_000_000_000_000_000n, calls.bounty.specHash as Hex, keccak256(toBytes("salt"))],
  });
  assert.equal(post, calls.post);
  assert.equal(bindingJSON(binding), calls.proof, "the binding's bytes are Go's");
  assert.equal(encodeFunctionData({ abi: stakeRegistryAbi, functionName: "bind", args: [agentId(binding.statement.did), toHex(toBytes(bindingJSON(binding)))] }), calls.bind);
  assert.equal(encodeFunctionData({ abi: stakeRegistryAbi, functionName: "stake", args: [calls.agentId, 10n ** 18n] }), calls.stake);
});

test("calls: a node naming another chain or other contracts than the pinned deployment is refused", () => {
  const d = { chainId: 31337, contracts: { BountyEscrow: "0x5fbdb2315678afecb367f032d93f642f64180aa3", StakeRegistry: "0xa16e02e87b7454126e5e10d957a927a7f5b5d2be" } };
  const info = { chain: { id: 31337 }, contracts: { BountyEscrow: "0x5FbDB2315678afecb367f032d93F642f64180aa3", StakeRegistry: "0xa16E02E87b7454126E5E10d957A927A7F5B5d2be" } } as unknown as Info;
  checkDeployment(info, d);
  assert.throws(() => checkDeployment({ ...info, chain: { ...info.chain, id: 1 } }, d), /chain 1/);
  assert.throws(() => checkDeployment({ ...info, contracts: { ...info.contracts, BountyEscrow: "0x0000000000000000000000000000000000000bad" } }, d), /BountyEscrow/);
});

test("calls: a refused call's revert data decodes to the contract's custom error, from the contract it was sent to", () => {
  const info = { contracts: { BountyEscrow: "0x5FbDB2315678afecb367f032d93F642f64180aa3", StakeRegistry: "0xa16E02E87b7454126E5E10d957A927A7F5B5d2be" } };
  const data = encodeErrorResult({ abi: bountyEscrowAbi, errorName: "WrongStatus", args: [7n, 4] });
  const nested = new BaseError("estimate gas failed", { cause: Object.assign(new BaseError("execution reverted"), { data }) });
  const r = decodeRevert(nested, info.contracts.BountyEscrow.toLowerCase(), info);
  assert.ok(r instanceof RevertError);
  assert.equal(r.contract, "BountyEscrow");
  assert.equal(r.errorName, "WrongStatus");
  assert.deepEqual(r.args, [7n, 4]);
  // The relay's JSON-RPC error carries it one level down.
  assert.equal(decodeRevert({ data: { data } }, info.contracts.BountyEscrow, info)?.errorName, "WrongStatus");
  // Sent to the registry, the same bytes are no error of its own; to an unknown contract, nothing.
  assert.equal(decodeRevert(nested, "0x0000000000000000000000000000000000000001", info), undefined);
  const reg = encodeErrorResult({ abi: stakeRegistryAbi, errorName: "StillBonded", args: [99n] });
  assert.equal(decodeRevert({ data: reg }, info.contracts.StakeRegistry, info)?.errorName, "StillBonded");
});
