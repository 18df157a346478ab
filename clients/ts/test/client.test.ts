// The HTTP client against a stand-in server: the routes and content types it sends, the
// bodies it reads, and a problem+json refusal surfaced as a typed ProblemError.

import assert from "node:assert/strict";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import { type AddressInfo } from "node:net";
import { test } from "node:test";
import { Client, Key, ProblemError, signEnvelope } from "../src/index.js";

interface Seen {
  method: string;
  url: string;
  type: string;
  idem: string;
  body: string;
}

async function withServer(handler: (req: Seen, res: ServerResponse) => void, f: (c: Client, seen: Seen[]) => Promise<void>) {
  const seen: Seen[] = [];
  const srv = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const s = { method: req.method!, url: req.url!, type: String(req.headers["content-type"] ?? ""), idem: String(req.headers["idempotency-key"] ?? ""), body: Buffer.concat(chunks).toString() };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  try {
    await f(new Client(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/`), seen);
  } finally {
    srv.close();
  }
}

test("client: a problem+json answer is a ProblemError with type, status, detail and reason", async () => {
  const problem = { type: "https://surety.dev/problems/envelope-wrong-audience", title: "Envelope refused", status: 403, detail: "aud is none", reason: "wrong-audience" };
  await withServer(
    (_, res) => {
      res.writeHead(403, { "Content-Type": "application/problem+json" });
      res.end(JSON.stringify(problem));
    },
    async (c, seen) => {
      const env = signEnvelope(Key.generate(), { body: { op: "stake" } });
      const err = await c.stake("stake", env, "idem-1").catch((e: unknown) => e);
      assert.ok(err instanceof ProblemError);
      assert.equal(err.type, problem.type);
      assert.equal(err.slug, "envelope-wrong-audience");
      assert.equal(err.status, 403);
      assert.equal(err.detail, "aud is none");
      assert.equal(err.reason, "wrong-audience");
      assert.deepEqual(seen[0], { method: "POST", url: "/v1/stake", type: "application/jose", idem: "idem-1", body: env });
    },
  );
});

test("client: a refusal that is not problem+json is still a ProblemError, with the status", async () => {
  await withServer(
    (_, res) => {
      res.writeHead(502, { "Content-Type": "text/plain" });
      res.end("bad gateway");
    },
    async (c) => {
      const err = await c.info().catch((e: unknown) => e);
      assert.ok(err instanceof ProblemError);
      assert.equal(err.status, 502);
      assert.equal(err.type, "about:blank");
    },
  );
});

test("client: routes, escaping and bodies", async () => {
  await withServer(
    (s, res) => {
      res.writeHead(s.method === "PUT" ? 204 : 200, { "Content-Type": "application/json" });
      if (s.url.startsWith("/v1/agents?")) return res.end(JSON.stringify({ agents: [{ did: "did:key:x" }] }));
      if (s.method === "PUT") return res.end();
      res.end(JSON.stringify({ ok: s.url }));
    },
    async (c, seen) => {
      const did = "did:key:z6MkTest";
      await c.agent(did);
      await c.reputation(did);
      assert.deepEqual(await c.searchAgents({ capability: "audit", q: "a b", limit: 3 }), [{ did: "did:key:x" }]);
      await c.putBountySpec(7, "the task");
      await c.inclusionProof("ab".repeat(32), 5);
      await c.registerDID("proof.jws.x");
      await c.logLeaves({ from: 4, subject: did, limit: 2 });
      await c.logLeaves();
      await c.jobs({ status: "funded", provider: "0xabc", after: 3, limit: 2 });
      await c.job(7);
      assert.deepEqual(
        seen.map((s) => `${s.method} ${s.url} ${s.type}`),
        [
          "GET /v1/agents/did%3Akey%3Az6MkTest ",
          "GET /v1/reputation/did%3Akey%3Az6MkTest ",
          "GET /v1/agents?capability=audit&q=a+b&limit=3 ",
          "PUT /v1/bounties/7/spec text/plain; charset=utf-8",
          `GET /v1/log/proof/inclusion?leaf=${"ab".repeat(32)}&size=5 `,
          "POST /v1/dids/register application/json",
          "GET /v1/log/leaves?from=4&subject=did%3Akey%3Az6MkTest&limit=2 ",
          "GET /v1/log/leaves?from=0 ",
          "GET /v1/jobs?status=funded&provider=0xabc&after=3&limit=2 ",
          "GET /v1/jobs/7 ",
        ],
      );
      assert.equal(seen[3].body, "the task");
      assert.deepEqual(JSON.parse(seen[5].body), { proof: "proof.jws.x" });
      assert.equal(c.rpcURL, c.base + "/v1/rpc");
    },
  );
});

test("client: an answer longer than the bound is refused as it streams in", async () => {
  await withServer(
    (_, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ pad: "x".repeat(5000) }));
    },
    async (c) => {
      const small = new Client(c.base, { maxAnswerBytes: 1000 });
      await assert.rejects(small.info(), /larger than 1000 bytes/);
      assert.equal(((await c.info()) as unknown as { pad: string }).pad.length, 5000);
    },
  );
});
