// The typed client covers the node's API: every route api/openapi.json describes has a
// method here, or is named below with the reason it has none; a new route fails this test
// until it gets one.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Client } from "../src/index.js";
import { repoDir } from "./paths.js";

const methods: Record<string, keyof Client> = {
  "GET /healthz": "health",
  "GET /v1/credentials/{did}/registration": "credential",
  "GET /v1/credentials/{did}/stake": "credential",
  "POST /v1/credentials/verify": "verifyCredential",
  "GET /v1/status/{list}": "statusList",
  "GET /.well-known/agent-card.json": "nodeA2ACard",
  "GET /v1/agents/{did}/agent-card.json": "agentA2ACard",
  "GET /1.0/identifiers/{did}": "resolveDID",
  "GET /v1/info": "info",
  "GET /v1/openapi.json": "openapi",
  "GET /v1/challenge": "challenge",
  "POST /v1/dids/register": "registerDID",
  "POST /v1/envelopes/verify": "verifyEnvelope",
  "GET /v1/peers": "peers",
  "POST /v1/agents": "registerCard",
  "GET /v1/agents": "searchAgents",
  "GET /v1/agents/{did}": "agent",
  "POST /v1/agents/{did}/status": "checkAgentStatus",
  "POST /v1/audits": "submitAudit",
  "GET /v1/reputation": "topReputation",
  "GET /v1/reputation/{did}": "reputation",
  "POST /v1/groups/{group_id}/members": "setGroupMembers",
  "GET /v1/groups/{group_id}": "group",
  "POST /v1/groups/{group_id}/envelopes": "postToGroup",
  "GET /v1/groups/{group_id}/envelopes": "groupEnvelopes",
  "GET /v1/log/head": "logHead",
  "GET /v1/log/checkpoint": "logCheckpoint",
  "GET /v1/log/proof/inclusion": "inclusionProof",
  "GET /v1/log/proof/consistency": "consistencyProof",
  "GET /v1/log/leaves": "logLeaves",
  "GET /v1/log/heads": "logHeads",
  "GET /v1/log/scores": "logScores",
  "GET /v1/reputation/{did}/history": "scoreHistory",
  "POST /v1/bindings": "addBinding",
  "POST /v1/bounties": "postBounty",
  "GET /v1/bounties": "bounties",
  "GET /v1/bounties/{id}": "bounty",
  "GET /v1/jobs": "jobs",
  "GET /v1/jobs/{id}": "job",
  "PUT /v1/bounties/{id}/spec": "putBountySpec",
  "POST /v1/bounties/{id}/{action}": "actOnBounty",
  "POST /v1/stake": "stake",
  "POST /v1/stake/unbond": "stake",
  "POST /v1/stake/withdraw": "stake",
  "GET /v1/stake/{did}": "stakeOf",
  "GET /v1/erc8004/registration/{did}": "erc8004Registration",
  "GET /v1/erc8004/dids/{did}": "erc8004DID",
  "GET /v1/erc8004/agents/{id}": "erc8004Agent",
  "GET /v1/erc8004/agents/{id}/feedback": "erc8004Feedback",
  "GET /v1/erc8004/agents/{id}/validations": "erc8004Validations",
  "POST /v1/dids/revoke": "changeKey",
  "POST /v1/dids/rotate": "changeKey",
  "POST /v1/withdraw": "withdraw",
  "GET /v1/operations/{id}": "operation",
  "POST /v1/rpc": "rpcURL",
  "POST /v1/tx/raw": "relay",
};

// Routes without a method, and why.
const without: Record<string, string> = {
  "GET /v1/groups/{group_id}/stream": "a server-sent event stream: read it with EventSource or fetch",
  "GET /v1/bounties/{id}/events": "a server-sent event stream",
  "GET /v1/operations/{id}/events": "a server-sent event stream (operation() polls instead)",
  "POST /mcp": "the MCP server (streamable HTTP): an MCP client such as @modelcontextprotocol/sdk speaks to it",
  "GET /": "a redirect to the web explorer, for browsers",
  "GET /explorer": "the web explorer (a page for browsers, itself a client of this API)",
  "GET /explorer/": "the web explorer's page",
  "GET /explorer/{file}": "a file of the web explorer's bundle",
};

test("routes: every route of api/openapi.json has a client method, or a reason for none", () => {
  const doc = JSON.parse(readFileSync(join(repoDir, "api/openapi.json"), "utf8")) as { paths: Record<string, Record<string, unknown>> };
  const routes: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const m of Object.keys(ops)) if (["get", "post", "put", "delete", "patch"].includes(m)) routes.push(`${m.toUpperCase()} ${path}`);
  }
  assert.ok(routes.length > 30, `${routes.length} routes`);
  const proto = Object.getOwnPropertyNames(Client.prototype);
  for (const r of routes) {
    if (r in without) continue;
    assert.ok(r in methods, `${r}: no client method (add one, or name it in "without" with the reason)`);
    assert.ok(proto.includes(methods[r]), `${r}: Client has no ${String(methods[r])}`);
  }
  for (const r of [...Object.keys(methods), ...Object.keys(without)]) assert.ok(routes.includes(r), `${r} is no route of api/openapi.json any more`);
});
