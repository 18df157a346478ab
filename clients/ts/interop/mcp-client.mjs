// An independent MCP client (the official TypeScript SDK, @modelcontextprotocol/sdk) drives
// `surety mcp` over stdio for two agents: it lists the tools, searches agents, posts a bounty
// as the poster and claims it as the worker, then reads it back. Run by cmd/surety's
// TestMCPInteropWithTheTypeScriptSDK; prints one JSON object of what it saw.
//
// Environment: SURETY_BIN, SURETY_NODE, POSTER_KEY, POSTER_WALLET, WORKER_KEY, WORKER_WALLET,
// ARBITER, TASK.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

async function connect(key, wallet) {
  const transport = new StdioClientTransport({
    command: env("SURETY_BIN"),
    args: ["mcp", "--node", env("SURETY_NODE"), "--key", key, "--wallet", wallet],
    stderr: "inherit",
  });
  const client = new Client({ name: "surety-interop", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

// call calls a tool and returns its structured content; a tool error throws.
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) {
    throw new Error(`${name}: ${res.content.map((c) => c.text).join(" ")}`);
  }
  return res.structuredContent;
}

const poster = await connect(env("POSTER_KEY"), env("POSTER_WALLET"));
const worker = await connect(env("WORKER_KEY"), env("WORKER_WALLET"));
try {
  const { tools } = await poster.listTools();
  const found = await call(worker, "search_agents", { capability: "summarize" });
  const posted = await call(poster, "post_bounty", {
    amount: "1000000000000000000",
    arbiter: env("ARBITER"),
    task: env("TASK"),
  });
  const id = posted.bounty.id;
  const claimed = await call(worker, "claim_bounty", { id });
  const viewed = await call(worker, "get_bounty", { id });
  const resource = await worker.readResource({ uri: `surety://bounties/${id}` });
  // A write the node refuses comes back as a tool error, not a crash.
  const again = await poster.callTool({ name: "claim_bounty", arguments: { id } });
  console.log(JSON.stringify({
    tools: tools.map((t) => ({ name: t.name, input: t.inputSchema?.type, output: t.outputSchema?.type })),
    found: found.agents.map((a) => a.did),
    posted: { id, status: posted.bounty.status },
    claimed: { status: claimed.bounty.status, worker: claimed.bounty.worker },
    viewed: { status: viewed.bounty.status, task: viewed.task, taskVerified: viewed.taskVerified },
    resource: JSON.parse(resource.contents[0].text).bounty.status,
    secondClaim: { isError: again.isError === true, text: again.content.map((c) => c.text).join(" ") },
  }));
} finally {
  await poster.close();
  await worker.close();
}
