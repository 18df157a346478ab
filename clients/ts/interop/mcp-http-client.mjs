// An independent MCP client (the official TypeScript SDK, @modelcontextprotocol/sdk) against a
// node's /mcp (streamable HTTP, stateless). The node signs nothing, so the writes carry the
// agents' own envelopes, signed by the Go test: the post's comes in POST_ENVELOPE; once the
// bounty id is known (printed as one JSON line), the claim's comes as one line on stdin. Run
// by cmd/surety's TestMCPInteropOverHTTPWithTheTypeScriptSDK; prints a second JSON line.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) {
    throw new Error(`${name}: ${res.content.map((c) => c.text).join(" ")}`);
  }
  return res.structuredContent;
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const client = new Client({ name: "surety-interop-http", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(env("MCP_URL"))));
try {
  const { tools } = await client.listTools();
  const info = await call(client, "node_info", {});
  const found = await call(client, "search_agents", { query: "papers" });
  const unsigned = await client.callTool({ name: "post_bounty", arguments: { amount: "1", arbiter: env("ARBITER") } });
  const posted = await call(client, "post_bounty", { envelope: env("POST_ENVELOPE"), idempotencyKey: "interop-post" });
  const id = posted.bounty.id;
  console.log(JSON.stringify({ id }));
  const claimEnvelope = (await lines.next()).value.trim();
  const claimed = await call(client, "claim_bounty", { id, envelope: claimEnvelope });
  const viewed = await call(client, "get_bounty", { id });
  console.log(JSON.stringify({
    tools: tools.length,
    signer: info.signer ?? "",
    nodeDid: info.nodeDid,
    found: found.agents.map((a) => a.did),
    unsigned: { isError: unsigned.isError === true, text: unsigned.content.map((c) => c.text).join(" ") },
    posted: posted.bounty.status,
    claimed: { status: claimed.bounty.status, worker: claimed.bounty.worker },
    viewed: { status: viewed.bounty.status, task: viewed.task },
  }));
} finally {
  await client.close();
  process.stdin.destroy();
}
