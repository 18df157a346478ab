// The agent's own wallet (viem): it signs its bindings and its transactions, and sends them
// through the node's JSON-RPC relay (POST /v1/rpc, which takes calls to the escrow and the
// stake registry only) or a JSON-RPC URL of the chain. The node never sees the key. This is
// what `surety did bind`, `surety stake add` and `surety bounty post|claim|submit|accept`
// do with --private-key (cmd/surety/ownwallet.go, ownbounty.go, stake.go).

import { randomBytes } from "node:crypto";
import {
  type Abi,
  type Account,
  BaseError,
  type Chain,
  type Hex,
  type PublicClient,
  type WalletClient,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  defineChain,
  encodeFunctionData,
  getAddress,
  http,
  keccak256,
  toBytes,
  toHex,
  zeroAddress,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { bountyEscrowAbi, rootAnchorAbi, stakeRegistryAbi } from "./abi.js";
import { jobEscrowAbi, suretyHookAbi } from "./jobabi.js";
import { type CreateJob, type HookCall, type JobCall, createJobData, createdJobIds, hookData, jobData, suretyJobData } from "./jobs.js";
import { type Binding, agentId, bindingJSON, newStatement, signBinding } from "./binding.js";
import type { Action, BindingAnswer, Bounty, Client, Holding, Info, Job } from "./client.js";
import { type Key } from "./keys.js";

/** The most tip the wallet offers through the node's relay (it refuses more: 100 gwei). */
export const RELAY_TIP_LIMIT = 100_000_000_000n;

/** A mined transaction the node has indexed. */
export interface Sent {
  txHash: Hex;
  block: number;
  gasUsed: bigint;
}

/** Options of OwnWallet.open. */
export interface WalletOptions {
  /** The chain's JSON-RPC URL; default the node's relay. */
  rpcUrl?: string;
  /**
   * With rpcUrl unset: send each signed transaction through the node's JSON-RPC relay
   * (eth_sendRawTransaction at POST /v1/rpc, the default) or hand it to POST /v1/tx/raw,
   * which answers once it is mined ("raw"). Reads go through /v1/rpc either way.
   */
  relay?: "rpc" | "raw";
  /** How long to wait for a receipt, ms; default 60 s. */
  receiptTimeoutMs?: number;
  /**
   * The deployment the wallet pays into (the file `surety deploy` writes, parsed): a node
   * naming another chain or other contracts is refused before anything is signed, since a
   * node could name contracts of its own. Without it, the wallet pays into what the node
   * names.
   */
  deployment?: Deployment;
}

/** Deployment is a deployment file's chain and contracts (contracts.Deployment). */
export interface Deployment {
  chainId: number;
  contracts: { BountyEscrow: string; StakeRegistry: string; RootAnchor?: string };
}

/** BountyTerms are what a poster sets on a bounty (ETH bounties; amounts in wei). */
export interface PostTerms {
  amount: bigint;
  arbiter: string;
  /** Unix seconds. */
  deadline: number;
  /** Seconds the poster has to accept or reject a submission. */
  reviewWindow: number;
  minStake?: bigint;
  /** The task text: its keccak256 is the bounty's specHash, and the node gets the text. */
  spec: string;
  salt?: Hex;
}

/** Args of an action, as the escrow takes them. */
export interface ActionArgs {
  agentId?: Hex;
  worker?: string;
  resultHash?: Hex;
  reasonHash?: Hex;
}

/** OwnWallet is a wallet the agent holds, talking to one node and its chain. */
export class OwnWallet {
  private constructor(
    readonly account: Account,
    readonly node: Client,
    readonly info: Info,
    readonly chain: Chain,
    readonly public_: PublicClient,
    readonly wallet: WalletClient,
    private readonly viaRelay: boolean,
    private readonly rawRelay: boolean,
    private readonly receiptTimeoutMs: number,
  ) {}

  /**
   * open connects a wallet (a viem account, or a 0x private key) to a node and its chain,
   * and checks that the chain is the node's.
   */
  static async open(account: Account | Hex, node: Client, opts: WalletOptions = {}): Promise<OwnWallet> {
    const acct = typeof account === "string" ? privateKeyToAccount(account) : account;
    const info = await node.info();
    if (opts.deployment) checkDeployment(info, opts.deployment, node.base);
    const url = opts.rpcUrl ?? node.rpcURL;
    const chain = defineChain({ id: info.chain.id, name: `surety-${info.chain.id}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [url] } } });
    const transport = http(url, { timeout: 30_000, retryCount: 0 });
    const pub = createPublicClient({ chain, transport }) as PublicClient;
    const id = await pub.getChainId();
    if (id !== info.chain.id) throw new Error(`${url} is chain ${id}; the node settles on chain ${info.chain.id}`);
    const wallet = createWalletClient({ account: acct, chain, transport });
    return new OwnWallet(acct, node, info, chain, pub, wallet, opts.rpcUrl === undefined, opts.rpcUrl === undefined && opts.relay === "raw", opts.receiptTimeoutMs ?? 60_000);
  }

  /** The wallet's address. */
  get address(): Hex {
    return this.account.address;
  }

  /** contract is the address the node names for a deployed contract. */
  contract(name: "BountyEscrow" | "StakeRegistry" | "RootAnchor" | "JobEscrow" | "SuretyHook"): Hex {
    const a = this.info.contracts[name];
    if (!a) throw new Error(`the node names no ${name}`);
    return getAddress(a);
  }

  /**
   * send sends a call from the wallet, waits for its receipt (a revert throws) and until the
   * node has indexed its block.
   */
  async send(to: Hex, data: Hex, value = 0n): Promise<Sent> {
    const fees = this.viaRelay ? await this.relayFees() : {};
    let hash: Hex;
    try {
      if (this.rawRelay) {
        // Signed here, handed to the node whole: it relays it and answers once it is mined.
        const req = await this.wallet.prepareTransactionRequest({ account: this.account, chain: this.chain, to, data, value, ...fees });
        const raw = await this.wallet.signTransaction({ ...req, account: this.account, chain: this.chain } as never);
        const r = await this.node.relay(raw);
        await this.node.waitIndexed(r.block);
        return { txHash: r.txHash as Hex, block: r.block, gasUsed: BigInt(r.gasUsed ?? 0) };
      }
      hash = await this.wallet.sendTransaction({ account: this.account, chain: this.chain, to, data, value, ...fees });
    } catch (e) {
      // A call the contract refuses fails its gas estimate, nothing sent: name the refusal.
      throw decodeRevert(e, to, this.info) ?? e;
    }
    const until = Date.now() + this.receiptTimeoutMs;
    for (;;) {
      const r = await this.public_.getTransactionReceipt({ hash }).catch(() => null);
      if (r) {
        if (r.status !== "success") throw new Error(`transaction ${hash} reverted in block ${r.blockNumber}`);
        await this.node.waitIndexed(Number(r.blockNumber));
        return { txHash: hash, block: Number(r.blockNumber), gasUsed: r.gasUsed };
      }
      if (Date.now() > until) throw new Error(`transaction ${hash}: no receipt in ${this.receiptTimeoutMs} ms`);
      await new Promise((res) => setTimeout(res, 250));
    }
  }

  // The relay answers the chain's tip suggestion; a wallet pays it in full, so it is capped.
  private async relayFees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const est = await this.public_.estimateFeesPerGas();
    let tip = est.maxPriorityFeePerGas ?? 0n;
    if (tip > RELAY_TIP_LIMIT) tip = RELAY_TIP_LIMIT;
    const block = await this.public_.getBlock();
    const base = block.baseFeePerGas ?? 0n;
    return { maxFeePerGas: base * 2n + tip, maxPriorityFeePerGas: tip };
  }

  /**
   * bind binds key's DID to this wallet on chain: both sign the statement for the node's
   * chain and stake registry; the node is handed the binding (it records it itself when it
   * holds the wallet); otherwise the wallet sends StakeRegistry.bind, built here (never taken
   * from the node's answer), and the node is asked again once it has indexed it.
   */
  async bind(key: Key): Promise<{ binding: Binding; answer: BindingAnswer; sent?: Sent }> {
    const s = newStatement(key, this.address, this.info.chain.id, this.contract("StakeRegistry"));
    const binding = await signBinding(s, key, this.account);
    let answer = await this.node.addBinding(binding);
    if (answer.onChain) return { binding, answer };
    const proof = toHex(toBytes(bindingJSON(binding)));
    const data = encodeFunctionData({ abi: stakeRegistryAbi, functionName: "bind", args: [agentId(key.did.did), proof] });
    const sent = await this.send(this.contract("StakeRegistry"), data);
    answer = await this.node.addBinding(binding);
    if (!answer.onChain) throw new Error(`the bind of ${key.did.did} was mined in block ${sent.block}, but the node does not count it`);
    return { binding, answer, sent };
  }

  /** stakeToken is the registry's stake token (the zero address: ETH). */
  async stakeToken(): Promise<Hex> {
    return this.public_.readContract({ address: this.contract("StakeRegistry"), abi: stakeRegistryAbi, functionName: "stakeToken" });
  }

  /** stake bonds amount (wei) for key's agent from this wallet, which must have bound it. */
  async stake(did: string, amount: bigint): Promise<{ sent: Sent; holding: Holding }> {
    if (amount <= 0n) throw new Error("stake: the amount must be positive");
    const token = await this.stakeToken();
    if (token !== zeroAddress) throw new Error(`stake: the registry stakes token ${token}; this client stakes ETH only`);
    const data = encodeFunctionData({ abi: stakeRegistryAbi, functionName: "stake", args: [agentId(did), amount] });
    const sent = await this.send(this.contract("StakeRegistry"), data, amount);
    return { sent, holding: await this.node.stakeOf(did, this.address) };
  }

  /** unbond starts unbonding amount of the agent's stake. */
  async unbond(did: string, amount: bigint): Promise<Sent> {
    return this.send(this.contract("StakeRegistry"), encodeFunctionData({ abi: stakeRegistryAbi, functionName: "requestUnbond", args: [agentId(did), amount] }));
  }

  /**
   * post posts an ETH bounty from this wallet, then hands the node its task text. The id is
   * the escrow's bountyId(poster, salt).
   */
  async post(t: PostTerms): Promise<{ id: bigint; sent: Sent; bounty: Bounty }> {
    const salt = t.salt ?? toHex(new Uint8Array(randomBytes(32)));
    const escrow = this.contract("BountyEscrow");
    const specHash = keccak256(toBytes(t.spec));
    const data = encodeFunctionData({
      abi: bountyEscrowAbi,
      functionName: "post",
      args: [zeroAddress, t.amount, getAddress(t.arbiter), BigInt(t.deadline), t.reviewWindow, t.minStake ?? 0n, specHash, salt],
    });
    const sent = await this.send(escrow, data, t.amount);
    const id = await this.public_.readContract({ address: escrow, abi: bountyEscrowAbi, functionName: "bountyId", args: [this.address, salt] });
    await this.node.putBountySpec(id.toString(), t.spec);
    return { id, sent, bounty: await this.node.bounty(id.toString()) };
  }

  /**
   * act takes an action on a bounty from this wallet, with the terms the node's index holds
   * (a stale view only makes the escrow refuse).
   */
  async act(id: bigint | number, action: Action, args: ActionArgs = {}): Promise<{ sent: Sent; bounty: Bounty }> {
    const b = await this.node.bounty(String(id));
    const data = actionData(b, action, args);
    const sent = await this.send(this.contract("BountyEscrow"), data);
    return { sent, bounty: await this.node.bounty(String(id)) };
  }

  /** withdraw takes what the escrow credited this wallet (ETH). */
  async withdraw(): Promise<Sent> {
    return this.send(this.contract("BountyEscrow"), encodeFunctionData({ abi: bountyEscrowAbi, functionName: "withdraw", args: [zeroAddress] }));
  }

  /**
   * createJob opens an ERC-8183 job at the node's JobEscrow, this wallet its client; with
   * surety, a Surety job (SuretyHook its evaluator and hook, the hook's pool its provider).
   */
  async createJob(r: CreateJob, opts: { surety?: boolean } = {}): Promise<{ id: bigint; sent: Sent; job: Job }> {
    const escrow = this.contract("JobEscrow");
    let data: Hex;
    if (opts.surety) {
      const hook = this.contract("SuretyHook");
      const pool = await this.public_.readContract({ address: hook, abi: suretyHookAbi, functionName: "pool" });
      data = suretyJobData(r, hook, pool);
    } else {
      data = createJobData(r);
    }
    const sent = await this.send(escrow, data);
    const receipt = await this.public_.getTransactionReceipt({ hash: sent.txHash });
    const [id] = createdJobIds(receipt.logs as never, escrow);
    if (id === undefined) throw new Error(`createJob: transaction ${sent.txHash} records no job`);
    return { id, sent, job: await this.node.job(id.toString()) };
  }

  /**
   * jobCall sends a JobEscrow call on job id; fund first approves the job's token for its
   * budget when the allowance is short (with rpcUrl: the node's relay takes no token calls).
   */
  async jobCall(id: bigint | number, c: JobCall): Promise<{ sent: Sent; job: Job }> {
    const escrow = this.contract("JobEscrow");
    if (c.call === "fund" && c.expectedBudget > 0n) {
      const job = await this.node.job(String(id));
      const token = getAddress(job.token);
      const have = await this.public_.readContract({ address: token, abi: erc20Abi, functionName: "allowance", args: [this.address, escrow] });
      if (have < c.expectedBudget) await this.send(token, encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [escrow, c.expectedBudget] }));
    }
    const sent = await this.send(escrow, jobData(BigInt(id), c));
    return { sent, job: await this.node.job(String(id)) };
  }

  /** hookCall sends a SuretyHook call on a Surety job (join, submit, approve, pick, reject, resolve, ...). */
  async hookCall(id: bigint | number, c: HookCall): Promise<{ sent: Sent; job: Job }> {
    const sent = await this.send(this.contract("SuretyHook"), hookData(BigInt(id), c));
    return { sent, job: await this.node.job(String(id)) };
  }

  /**
   * anchoredRoot reads the root the node anchored for a tree size from RootAnchor, as
   * anchored by `anchorer` (the sender of the head's anchor transaction), or null when none.
   */
  async anchoredRoot(anchorer: Hex, size: number): Promise<Hex | null> {
    const root = await this.public_.readContract({ address: this.contract("RootAnchor"), abi: rootAnchorAbi, functionName: "rootAt", args: [anchorer, BigInt(size)] });
    return /^0x0+$/.test(root) ? null : root;
  }
}

/** RevertError is a call a contract refused, with its custom error decoded. */
export class RevertError extends Error {
  constructor(
    readonly contract: string,
    readonly errorName: string,
    readonly args: readonly unknown[],
    readonly data: Hex,
  ) {
    super(`${contract} refused the call: ${errorName}(${args.map(String).join(", ")})`);
    this.name = "RevertError";
  }
}

/**
 * decodeRevert finds the revert data in an error of a call to `to` (viem's, or the node
 * relay's, which passes it through) and decodes it with that contract's custom errors;
 * undefined when there is none it knows.
 */
export function decodeRevert(e: unknown, to: string, info: Pick<Info, "contracts">): RevertError | undefined {
  const found: Record<string, Abi> = {
    BountyEscrow: bountyEscrowAbi as Abi,
    StakeRegistry: stakeRegistryAbi as Abi,
    JobEscrow: jobEscrowAbi as Abi,
    SuretyHook: suretyHookAbi as Abi,
  };
  const name = Object.keys(found).find((n) => info.contracts[n]?.toLowerCase() === to.toLowerCase());
  if (!name) return undefined;
  let data: Hex | undefined;
  const look = (x: unknown): boolean => {
    const d = (x as { data?: unknown })?.data;
    if (typeof d === "string" && /^0x[0-9a-fA-F]{8,}$/.test(d)) data = d as Hex;
    else if (d && typeof (d as { data?: unknown }).data === "string") data = (d as { data: Hex }).data;
    return data !== undefined;
  };
  if (e instanceof BaseError) e.walk(look);
  else look(e);
  if (!data) return undefined;
  try {
    const r = decodeErrorResult({ abi: found[name], data });
    return new RevertError(name, r.errorName, (r.args ?? []) as readonly unknown[], data);
  } catch {
    return undefined;
  }
}

/** checkDeployment refuses a node whose chain or contracts are not the deployment's. */
export function checkDeployment(info: Info, d: Deployment, nodeURL = "the node"): void {
  if (info.chain.id !== d.chainId) throw new Error(`${nodeURL} settles on chain ${info.chain.id}; the deployment is on chain ${d.chainId}: nothing sent`);
  for (const name of ["BountyEscrow", "StakeRegistry"] as const) {
    const got = info.contracts[name];
    if (!got || !/^0x[0-9a-fA-F]{40}$/.test(got) || got.toLowerCase() !== d.contracts[name].toLowerCase()) {
      throw new Error(`${nodeURL} names ${name} at ${String(got).slice(0, 64)}; the deployment has it at ${d.contracts[name]}: nothing sent`);
    }
  }
}

/** The escrow's Terms tuple of a bounty, from the node's view of it. */
export function terms(b: Bounty) {
  return {
    poster: getAddress(b.poster),
    token: getAddress(b.token),
    amount: BigInt(b.amount),
    arbiter: getAddress(b.arbiter),
    deadline: BigInt(b.deadline),
    reviewWindow: b.reviewWindow,
    feeBps: b.feeBps,
    minStake: BigInt(b.minStake),
    specHash: b.specHash as Hex,
  };
}

const ZERO32 = ("0x" + "00".repeat(32)) as Hex;

/** actionData is the escrow call of an action on a bounty (escrow.ActionData). */
export function actionData(b: Bounty, action: Action, a: ActionArgs = {}): Hex {
  const id = BigInt(b.id);
  const t = terms(b);
  const w = getAddress(b.worker ?? zeroAddress);
  const enc = (functionName: string, args: unknown[]) => encodeFunctionData({ abi: bountyEscrowAbi, functionName, args } as never);
  switch (action) {
    case "claim":
      return enc("claim", [id, t, a.agentId ?? ZERO32]);
    case "assign":
      if (!a.worker) throw new Error("assign needs a worker address");
      return enc("assign", [id, t, getAddress(a.worker)]);
    case "submit":
      return enc("submit", [id, t, w, a.resultHash ?? ZERO32]);
    case "accept":
      return enc("accept", [id, t, w]);
    case "reject":
      return enc("reject", [id, t, w, a.reasonHash ?? ZERO32]);
    case "dispute":
      return enc("dispute", [id, t, w, a.reasonHash ?? ZERO32]);
    case "refund":
      return enc("refund", [id, t, w]);
    case "release":
      return enc("release", [id, t, w]);
    case "cancel":
      return enc("cancel", [id, t]);
    case "unclaim":
      return enc("unclaim", [id, t, w]);
  }
  throw new Error(`action ${action}: not one a party sends from its own wallet here (resolve is the arbiter's)`);
}


/** The two ERC-20 functions fund needs. */
const erc20Abi = [
  { type: "function", name: "allowance", stateMutability: "view", inputs: [{ name: "owner", type: "address" }, { name: "spender", type: "address" }], outputs: [{ name: "", type: "uint256" }] },
  { type: "function", name: "approve", stateMutability: "nonpayable", inputs: [{ name: "spender", type: "address" }, { name: "amount", type: "uint256" }], outputs: [{ name: "", type: "bool" }] },
] as const;
