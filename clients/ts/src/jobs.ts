// ERC-8183 jobs from the agent's own wallet: JobEscrow's calls (the standard's ABI) and
// SuretyHook's (Surety's extras: competing workers, milestones, disputes, a stake gate), the
// plan a Surety job's setBudget carries, and the job ids a createJob receipt records. What
// `surety job` does (cmd/surety/job.go, package jobs); read jobs with Client.jobs and
// Client.job.

import { type Hex, decodeEventLog, encodeAbiParameters, encodeFunctionData, getAddress, zeroAddress } from "viem";
import { jobEscrowAbi, suretyHookAbi } from "./jobabi.js";

/** Plan is a Surety job's plan (ISuretyHook.Plan): setBudget's optParams at SuretyHook. */
export interface Plan {
  /** Rules on disputes; never the client or a worker. */
  arbiter: string;
  /** Seconds the client has to approve, pick or reject once the entries close. */
  reviewWindow: number;
  /** Seconds the arbiter has to rule on a dispute. */
  arbiterTime: number;
  /** Workers that may join (1: a single worker; more: they compete). */
  maxEntries: number;
  /** Workers a pick or a ruling may pay (1..maxEntries). */
  maxWinners: number;
  /** Stake a join locks from the worker's agent until the job settles (base units). */
  minStake?: bigint;
  /** The one worker allowed to join (maxEntries 1), or none. */
  worker?: string;
  /** Milestones: the job id of the previous part, whose worker alone may join. */
  prevPart?: bigint;
}

const planType = [
  {
    type: "tuple",
    components: [
      { name: "arbiter", type: "address" },
      { name: "reviewWindow", type: "uint32" },
      { name: "arbiterTime", type: "uint32" },
      { name: "maxEntries", type: "uint16" },
      { name: "maxWinners", type: "uint16" },
      { name: "minStake", type: "uint128" },
      { name: "worker", type: "address" },
      { name: "prevPart", type: "uint256" },
    ],
  },
] as const;

/** encodePlan is abi.encode(plan), as SuretyHook decodes it (jobs.PlanData in Go). */
export function encodePlan(p: Plan): Hex {
  return encodeAbiParameters(planType, [
    {
      arbiter: getAddress(p.arbiter),
      reviewWindow: p.reviewWindow,
      arbiterTime: p.arbiterTime,
      maxEntries: p.maxEntries,
      maxWinners: p.maxWinners,
      minStake: p.minStake ?? 0n,
      worker: p.worker ? getAddress(p.worker) : zeroAddress,
      prevPart: p.prevPart ?? 0n,
    },
  ]);
}

/** CreateJob is a createJob call (provider may be left out and set later). */
export interface CreateJob {
  provider?: string;
  /** Who completes or rejects (a Surety job's is SuretyHook: leave it out). */
  evaluator?: string;
  /** Unix seconds; more than 5 minutes ahead. */
  expiredAt: number | bigint;
  description: string;
  hook?: string;
  providerAgentId?: bigint;
}

/** createJobData is JobEscrow's createJob call. */
export function createJobData(r: CreateJob): Hex {
  if (!r.evaluator || r.evaluator.toLowerCase() === zeroAddress) throw new Error("createJob: a job needs an evaluator");
  if ((r.provider ?? zeroAddress).toLowerCase() === r.evaluator.toLowerCase()) throw new Error("createJob: the provider cannot also be the evaluator");
  return encodeFunctionData({
    abi: jobEscrowAbi,
    functionName: "createJob",
    args: [getAddress(r.provider ?? zeroAddress), getAddress(r.evaluator), BigInt(r.expiredAt), r.description, getAddress(r.hook ?? zeroAddress), r.providerAgentId ?? 0n],
  });
}

/** suretyJobData is createJob of a Surety job: SuretyHook's pool the provider, the hook its evaluator and hook. */
export function suretyJobData(r: Omit<CreateJob, "provider" | "evaluator" | "hook">, hook: string, pool: string): Hex {
  return createJobData({ ...r, provider: pool, evaluator: hook, hook });
}

const ZERO32 = ("0x" + "00".repeat(32)) as Hex;

/** JobCall is a JobEscrow call on a job after createJob. */
export type JobCall =
  | { call: "setProvider"; provider: string; agentId?: bigint }
  | { call: "setBudget"; token: string; amount: bigint; plan?: Plan }
  | { call: "fund"; expectedBudget: bigint }
  | { call: "submit"; deliverable: Hex }
  | { call: "complete" | "reject"; reason?: Hex }
  | { call: "claimRefund" };

/** jobData is JobEscrow's call c on job id. */
export function jobData(id: bigint, c: JobCall): Hex {
  const enc = (functionName: string, args: unknown[]) => encodeFunctionData({ abi: jobEscrowAbi, functionName, args } as never);
  switch (c.call) {
    case "setProvider":
      return enc("setProvider", [id, getAddress(c.provider), c.agentId ?? 0n]);
    case "setBudget":
      return enc("setBudget", [id, getAddress(c.token), c.amount, c.plan ? encodePlan(c.plan) : "0x"]);
    case "fund":
      return enc("fund", [id, c.expectedBudget, "0x"]);
    case "submit":
      return enc("submit", [id, c.deliverable, "0x"]);
    case "complete":
    case "reject":
      return enc(c.call, [id, c.reason ?? ZERO32, "0x"]);
    case "claimRefund":
      return enc("claimRefund", [id]);
  }
}

/** HookCall is a SuretyHook call on a Surety job. */
export type HookCall =
  | { call: "join"; agentId?: Hex }
  | { call: "submit"; deliverable: Hex }
  | { call: "approve" | "cancel" | "release" | "resolveExpired" | "close" }
  | { call: "pick"; winners: string[]; bps: number[] }
  | { call: "reject"; reason?: Hex }
  | { call: "resolve"; winners: string[]; bps: number[]; slash?: bigint };

/** hookData is SuretyHook's call c on job id. */
export function hookData(id: bigint, c: HookCall): Hex {
  const enc = (functionName: string, args: unknown[]) => encodeFunctionData({ abi: suretyHookAbi, functionName, args } as never);
  const split = (winners: string[], bps: number[], exact: boolean) => {
    const sum = bps.reduce((a, b) => a + b, 0);
    if (winners.length !== bps.length || sum > 10_000 || (exact && sum !== 10_000)) {
      throw new Error(`${c.call}: winners and shares do not fit (${sum} basis points; a pick: exactly 10000)`);
    }
    return [winners.map((w) => getAddress(w)), bps];
  };
  switch (c.call) {
    case "join":
      return enc("join", [id, c.agentId ?? ZERO32]);
    case "submit":
      return enc("submit", [id, c.deliverable]);
    case "pick":
      return enc("pick", [id, ...split(c.winners, c.bps, true)]);
    case "reject":
      return enc("reject", [id, c.reason ?? ZERO32]);
    case "resolve":
      return enc("resolve", [id, ...split(c.winners, c.bps, false), c.slash ?? 0n]);
    default:
      return enc(c.call, [id]);
  }
}

/** createdJobIds are the ids of the jobs a receipt's logs record created at JobEscrow. */
export function createdJobIds(logs: readonly { address: string; topics: readonly Hex[]; data: Hex }[], jobEscrow: string): bigint[] {
  const out: bigint[] = [];
  for (const l of logs) {
    if (l.address.toLowerCase() !== jobEscrow.toLowerCase()) continue;
    try {
      const ev = decodeEventLog({ abi: jobEscrowAbi, topics: l.topics as [Hex, ...Hex[]], data: l.data });
      if (ev.eventName === "JobCreated") out.push((ev.args as { jobId: bigint }).jobId);
    } catch {
      // another event of JobEscrow
    }
  }
  return out;
}
