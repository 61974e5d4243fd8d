import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiClients } from "../../schema";
import { setMcpAccess } from "../../src/accounts/accounts";
import { planLimits } from "../../src/limits/plans";
import { countMcpRequest, mcpWindows, type Toolset } from "../../src/limits/mcpLimits";
import { limiterNames, rateLimiterFor } from "../../src/limits/rateLimiterClient";
import { findLogo } from "../../src/catalogue/logos";
import { REQUEST_TOO_LARGE } from "../../src/mcp/delivery";
import { db } from "../helpers/catalogue";
import { company } from "./helpers";
import { BASE, callMcp, mcpAccount, tokensFor } from "../oauth/helpers";
import { freezeClock } from "../helpers/clock";
import { errorBody } from "../helpers/errors";

const RESOURCE_METADATA = `resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`;

async function signedIn(plan: "free" | "launch" | "growth" | "enterprise" = "free") {
  const account = await mcpAccount(plan);
  const tokens = await tokensFor(account.email);
  return { account, token: tokens.access_token };
}

/** Counts `n` requests straight into the account's limiter, as that many earlier calls would have. */
async function spend(accountId: string, plan: "free" | "launch" | "growth" | "enterprise", toolset: Toolset, n: number) {
  const limiter = rateLimiterFor(env, limiterNames.mcp(accountId));
  const decision = await limiter.consume(mcpWindows(plan, toolset), n);
  expect(decision.allowed).toBe(true);
}

describe("/mcp: authentication", () => {
  it.each([
    ["no header", {}],
    ["another scheme", { Authorization: "Basic dXNlcjpwYXNz" }],
    ["an empty bearer", { Authorization: "Bearer " }],
    ["an API key instead of a token", { Authorization: "Bearer pk_abcdefghijklmnopqrstuvwxyz012345" }],
    ["a secret key instead of a token", { Authorization: "Bearer sk_abcdefghijklmnopqrstuvwxyz012345" }],
  ])("%s → 401 Authorization required, pointing at the metadata", async (_, headers) => {
    const response = await callMcp(undefined, undefined, "/mcp", headers);
    expect(response.status).toBe(401);
    expect(await errorBody(response)).toEqual({ error: "Authorization required", code: "unauthorized" });
    const challenge = response.headers.get("www-authenticate")!;
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(RESOURCE_METADATA);
  });

  it.each([
    "not-a-token-format-we-issue",
    "eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl",
    // Long forgeries of our shape: they overflowed the storage key the token is looked up under (503).
    `${"x".repeat(600)}:a:b`,
    `acct:${"g".repeat(600)}:b`,
    `acct:AAAAAAAAAAAAAAAA:${"s".repeat(5000)}`,
  ])("a bearer not shaped like our tokens (%s) → 401 Authorization required, challenged as invalid_token", async (bearer) => {
    const response = await callMcp(bearer);
    expect(response.status).toBe(401);
    // Spec: "Invalid or expired token" is for expired or revoked tokens; this one never was one.
    expect(await errorBody(response)).toEqual({ error: "Authorization required", code: "unauthorized" });
    const challenge = response.headers.get("www-authenticate")!;
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(RESOURCE_METADATA);
  });

  it("a token of our shape that was never issued → 401 Invalid or expired token", async () => {
    const { account } = await signedIn();
    const response = await callMcp(`${account.id}:AAAAAAAAAAAAAAAA:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB`);
    expect(response.status).toBe(401);
    expect(await errorBody(response)).toEqual({ error: "Invalid or expired token", code: "unauthorized" });
    expect(response.headers.get("www-authenticate")).toContain(RESOURCE_METADATA);
  });

  it("the three-tool form asks for the same token", async () => {
    const response = await callMcp(undefined, undefined, "/mcp?toolset=three");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain(RESOURCE_METADATA);
  });
});

describe("/mcp: account checks", () => {
  it("403 when the account has no API client", async () => {
    const { account, token } = await signedIn("launch");
    await db.delete(apiClients).where(eq(apiClients.accountId, account.id));
    const response = await callMcp(token);
    expect(response.status).toBe(403);
    expect(await errorBody(response)).toEqual({ error: "No API client associated with this account", code: "forbidden" });
  });

  it("403 when MCP access is switched off for the account, and back on", async () => {
    const { account, token } = await signedIn("growth");
    await setMcpAccess(db, account.id, false);
    const refused = await callMcp(token);
    expect(refused.status).toBe(403);
    expect(await errorBody(refused)).toEqual({ error: "Your plan does not include MCP access", code: "forbidden" });
    await setMcpAccess(db, account.id, true);
    expect((await callMcp(token)).status).toBe(200);
  });

  it("every plan includes MCP", () => {
    for (const limits of Object.values(planLimits)) expect(limits.mcp.access).toBe(true);
  });
});

describe("/mcp: unexpected failures", () => {
  it("500 Internal MCP server error, with nothing of the cause on the wire", async () => {
    const { account, token } = await signedIn("launch");
    // A row no current code writes: a plan this deployment does not know.
    await env.DB.prepare("UPDATE accounts SET plan = 'legacy-gold' WHERE id = ?").bind(account.id).run();
    const response = await callMcp(token);
    expect(response.status).toBe(500);
    expect(await errorBody(response)).toEqual({ error: "Internal MCP server error", code: "internal" });
  });
});

describe("/mcp: limits", () => {
  it("Free: exactly 50 of 60 concurrent calls pass, the rest get the daily-limit message", async () => {
    const { token } = await signedIn("free");
    const responses = await Promise.all(Array.from({ length: 60 }, () => callMcp(token)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    const refused = responses.find((r) => r.status === 429)!;
    expect(await errorBody(refused)).toEqual({
      error: "Daily limit of 50 requests exceeded. Upgrade your plan for higher limits.",
      code: "rate_limited",
    });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
  });

  it("Free, three-tool form: the 20th call of the day passes, the 21st is refused with n = 20", async () => {
    const { account, token } = await signedIn("free");
    await spend(account.id, "free", "three", 19);
    expect((await callMcp(token, undefined, "/mcp?toolset=three")).status).toBe(200);
    const refused = await callMcp(token, undefined, "/mcp?toolset=three");
    expect(refused.status).toBe(429);
    expect(await errorBody(refused)).toEqual({
      error: "Daily limit of 20 requests exceeded. Upgrade your plan for higher limits.",
      code: "rate_limited",
    });
    // The seven-tool form still has its larger cap left on the same day's count.
    expect((await callMcp(token)).status).toBe(200);
  });

  it.each([
    ["launch", 1_000],
    ["growth", 10_000],
    ["enterprise", 100_000],
  ] as const)("%s: call %i of the minute passes, the next gets 429 with Retry-After: 60", async (plan, perMinute) => {
    // The calls must fall in the minute that was spent.
    freezeClock();
    const { account, token } = await signedIn(plan);
    expect(planLimits[plan].mcp.perMinute).toBe(perMinute);
    await spend(account.id, plan, "seven", perMinute - 1);
    expect((await callMcp(token)).status).toBe(200);
    const refused = await callMcp(token);
    expect(refused.status).toBe(429);
    expect(await errorBody(refused)).toEqual({ error: "Rate limit exceeded", code: "rate_limited" });
    expect(refused.headers.get("retry-after")).toBe("60");
  });

  it("Free's daily count resets at midnight UTC", async () => {
    const { account } = await mcpAccount("free").then((a) => ({ account: a }));
    const beforeMidnight = Date.UTC(2026, 10, 22, 23, 59, 59);
    for (let i = 0; i < 50; i++) expect((await countMcpRequest(env, account.id, "free", "seven", beforeMidnight)).allowed).toBe(true);
    const refused = await countMcpRequest(env, account.id, "free", "seven", beforeMidnight);
    expect(refused.allowed).toBe(false);
    expect(refused.resetAt).toBe(Date.UTC(2026, 10, 23));
    expect((await countMcpRequest(env, account.id, "free", "seven", Date.UTC(2026, 10, 23, 0, 0, 0))).allowed).toBe(true);
  });
});

describe("/mcp: batches", () => {
  const batchOf = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/list", params: {} }));
  const notifications = (n: number) => Array.from({ length: n }, () => ({ jsonrpc: "2.0", method: "notifications/initialized" }));
  const initialize = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  };
  const used = async (accountId: string, plan: "free" | "launch") =>
    (await rateLimiterFor(env, limiterNames.mcp(accountId)).usage(mcpWindows(plan, "seven")))[0]!.used;
  const usedToday = (accountId: string) => used(accountId, "free");
  const LEGACY = { "MCP-Protocol-Version": "2025-03-26" };

  it.each([
    ["101 messages", batchOf(101), -32600, "Invalid Request: Batch must not exceed 100 messages"],
    ["an element that is no JSON-RPC message", [...batchOf(3), 42], -32600, "Bad Request: JSON-RPC batch contains an invalid message"],
    ["initialize with other messages", [initialize, ...batchOf(2)], -32600, "Invalid Request: Only one initialization request is allowed"],
    ["no messages", [], -32600, "Bad Request: empty JSON-RPC batch"],
  ])("a batch the transport refuses whole (%s) gets its 400 and costs nothing", async (_, batch, code, message) => {
    const { account, token } = await signedIn("launch");
    const refused = await callMcp(token, batch, "/mcp", LEGACY);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ jsonrpc: "2.0", error: { code, message }, id: null });
    expect(await used(account.id, "launch")).toBe(0);
    // The same message alone is served, and counted.
    expect((await callMcp(token, batchOf(1), "/mcp", LEGACY)).status).toBe(200);
    expect(await used(account.id, "launch")).toBe(1);
  });

  it.each([
    ["an Accept without an event stream", { Accept: "application/json" }, 406],
    ["a Content-Type that is not JSON", { "Content-Type": "text/plain" }, 415],
    ["a protocol version it does not speak", { "MCP-Protocol-Version": "1999-01-01" }, 400],
  ])("a batch the transport refuses on its headers (%s) costs one call, not one a message", async (_, headers, status) => {
    const { account, token } = await signedIn("launch");
    const refused = await callMcp(token, batchOf(100), "/mcp", { ...LEGACY, ...headers });
    expect(refused.status).toBe(status);
    expect(await used(account.id, "launch")).toBe(1);
  });

  it("notifications in a batch run no tool and cost nothing; a call costs at least one", async () => {
    const { account, token } = await signedIn("free");
    const quiet = await callMcp(token, notifications(51), "/mcp", LEGACY);
    expect(quiet.status).toBe(202);
    expect(await usedToday(account.id)).toBe(1);
    const mixed = await callMcp(token, [...batchOf(3), ...notifications(2)], "/mcp", LEGACY);
    expect(mixed.status).toBe(200);
    expect(await usedToday(account.id)).toBe(4);
    // A lone notification is a call like any other.
    expect((await callMcp(token, notifications(1)[0], "/mcp", LEGACY)).status).toBe(202);
    expect(await usedToday(account.id)).toBe(5);
  });

  it("the calls of one batch carry at most 10 MB of base64 together, each still up to 5 MB", async () => {
    const { token } = await signedIn("launch");
    const big = await company("Batch Payload Co", ["batch-payload.com"]);
    // 3 MiB: 4 MiB of base64, under the 5 MB a call may carry; two fit in a request, three do not.
    await env.LOGOS.put((await findLogo(db, big.icon!))!.logo.masterKey, new Uint8Array(3 * 1024 * 1024));
    const calls = Array.from({ length: 4 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "get_logo", arguments: { logoId: big.icon, returnType: "base64" } },
    }));
    const answer = await callMcp(token, calls, "/mcp", LEGACY);
    expect(answer.status).toBe(200);
    const text = await answer.text();
    const answers = text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map(
        (line) =>
          JSON.parse(line.slice(6)) as {
            id: number;
            result: { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: { base64?: string } };
          },
      );
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3, 4]);
    const refused = answers.filter((a) => a.result.isError);
    expect(refused.map((a) => a.result.content[0]!.text)).toEqual([REQUEST_TOO_LARGE, REQUEST_TOO_LARGE]);
    const served = answers.filter((a) => !a.result.isError);
    expect(served.map((a) => a.result.structuredContent!.base64!.length)).toEqual([4 * 1024 * 1024, 4 * 1024 * 1024]);
    // Two logos' base64, each in text and structured content, and no more.
    expect(text.length).toBeLessThan(4 * 4.3 * 1024 * 1024);
  });

  it("row 1: a JSON-RPC batch counts each of its messages, and is refused whole past the daily cap", async () => {
    const { account, token } = await signedIn("free");
    await spend(account.id, "free", "seven", 40);
    const refused = await callMcp(token, batchOf(20), "/mcp", { "MCP-Protocol-Version": "2025-03-26" });
    expect(refused.status).toBe(429);
    expect(await errorBody(refused)).toEqual({
      error: "Daily limit of 50 requests exceeded. Upgrade your plan for higher limits.",
      code: "rate_limited",
    });
    expect(await usedToday(account.id)).toBe(40);

    const admitted = await callMcp(token, batchOf(10), "/mcp", { "MCP-Protocol-Version": "2025-03-26" });
    expect(admitted.status).toBeLessThan(300);
    expect(await usedToday(account.id)).toBe(50);
    expect((await callMcp(token)).status).toBe(429);
  });
});
