// Drives one ERC-8183 job through its whole life with viem alone, from an ABI written by hand
// from the ERC's text (eip.md: its function list and the interface of its reference section),
// never from Surety's artifacts: createJob → setBudget → approve → fund → submit → complete
// against the escrow at $ESCROW, paid in the ERC-20 at $TOKEN. Prints what it saw as JSON on
// stdout for the Go test TestJobEscrowWithViem (contracts/jobescrow_cast_test.go) to check.
import { createPublicClient, createWalletClient, http, parseAbi, parseEventLogs, keccak256, toHex, stringToHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";

const erc8183 = parseAbi([
  "function createJob(address provider, address evaluator, uint256 expiredAt, string description, address hook, uint256 providerAgentId) returns (uint256)",
  "function setProvider(uint256 jobId, address provider, uint256 agentId)",
  "function setBudget(uint256 jobId, address token, uint256 amount, bytes optParams)",
  "function fund(uint256 jobId, uint256 expectedBudget, bytes optParams)",
  "function submit(uint256 jobId, bytes32 deliverable, bytes optParams)",
  "function complete(uint256 jobId, bytes32 reason, bytes optParams)",
  "function reject(uint256 jobId, bytes32 reason, bytes optParams)",
  "function claimRefund(uint256 jobId)",
  "struct Job { uint256 id; address client; address provider; address evaluator; string description; uint256 budget; uint256 expiredAt; uint8 status; address hook; address paymentToken; uint256 providerAgentId; uint256 submittedAt; }",
  "function getJob(uint256 jobId) view returns (Job)",
  "event JobCreated(uint256 indexed jobId, address indexed client, address indexed provider, address evaluator, uint256 expiredAt, address hook)",
  "event BudgetSet(uint256 indexed jobId, address indexed token, uint256 amount)",
  "event JobFunded(uint256 indexed jobId, address indexed client, uint256 amount)",
  "event JobSubmitted(uint256 indexed jobId, address indexed provider, bytes32 deliverable)",
  "event JobCompleted(uint256 indexed jobId, address indexed evaluator, bytes32 reason)",
  "event PaymentReleased(uint256 indexed jobId, address indexed provider, uint256 amount)",
]);
const erc20 = parseAbi([
  "function approve(address spender, uint256 amount) returns (bool)",
  "function balanceOf(address) view returns (uint256)",
]);

const transport = http(process.env.RPC);
const chain = { ...foundry, id: Number(process.env.CHAIN_ID ?? foundry.id) };
const pub = createPublicClient({ chain, transport });
const wallet = (key) => createWalletClient({ account: privateKeyToAccount(key), chain, transport });
const client = wallet(process.env.CLIENT_KEY);
const provider = wallet(process.env.PROVIDER_KEY);
const evaluator = wallet(process.env.EVALUATOR_KEY);
const escrow = process.env.ESCROW;
const token = process.env.TOKEN;
const budget = 20_000_000n;

const out = { statuses: [], events: [] };
async function send(w, address, abi, functionName, args) {
  const { request, result } = await pub.simulateContract({ account: w.account, address, abi, functionName, args });
  const hash = await w.writeContract(request);
  const receipt = await pub.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${functionName} failed`);
  for (const log of parseEventLogs({ abi: erc8183, logs: receipt.logs })) {
    if (log.address.toLowerCase() === escrow.toLowerCase()) out.events.push(log.eventName);
  }
  return result;
}
async function status(jobId) {
  const job = await pub.readContract({ address: escrow, abi: erc8183, functionName: "getJob", args: [jobId] });
  out.statuses.push(job.status);
  return job;
}

const block = await pub.getBlock();
const description = "Generate a beautiful landscape wallpaper image";
const jobId = await send(client, escrow, erc8183, "createJob", [
  provider.account.address, evaluator.account.address, block.timestamp + 3600n, description,
  "0x0000000000000000000000000000000000000000", 0n,
]);
let job = await status(jobId);
out.jobId = jobId.toString();
out.description = job.description;
out.client = job.client;
await send(provider, escrow, erc8183, "setBudget", [jobId, token, budget, "0x"]);
job = await status(jobId);
out.budget = job.budget.toString();
out.paymentToken = job.paymentToken;
await send(client, token, erc20, "approve", [escrow, budget]);
await send(client, escrow, erc8183, "fund", [jobId, budget, "0x"]);
await status(jobId);
await send(provider, escrow, erc8183, "submit", [jobId, keccak256(stringToHex("https://example.com/wallpaper.jpg")), "0x"]);
await status(jobId);
await send(evaluator, escrow, erc8183, "complete", [jobId, toHex("approved", { size: 32 }), "0x"]);
await status(jobId);
out.providerBalance = (await pub.readContract({ address: token, abi: erc20, functionName: "balanceOf", args: [provider.account.address] })).toString();
console.log(JSON.stringify(out));
