import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { feedback } from "../../schema";
import { findLogo } from "../../src/catalogue/logos";
import { catalogueReader, createDb } from "../../src/lib/db";
import { admitCompanies, companyQuotaFor } from "../../src/limits/companyQuotaClient";
import type { ToolContext } from "../../src/mcp/context";
import { serveMcp } from "../../src/mcp/server";
import { db } from "../helpers/catalogue";
import { BASE, mcpAccount } from "../oauth/helpers";
import { MAX_REQUEST_BASE64_CHARS } from "../../src/mcp/delivery";
import { agent, company, failure, structured } from "./helpers";

/**
 * The unique-company quota (Free: 30 a UTC day) across the tools that hand out logos, at its
 * boundary and under concurrency, and the feedback limit under concurrency.
 */
const nextMidnight = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
};

/** Counts `ids` as companies the account already touched today, as earlier calls would have. */
async function touched(accountId: string, ids: number[]) {
  const quota = companyQuotaFor(env, accountId);
  expect((await quota.admit(ids, 30)).allowed).toBe(true);
}

const others = (n: number) => Array.from({ length: n }, (_, i) => 1_000_000 + i);

describe("daily unique companies", () => {
  it("the 30th company is served, the 31st refused with the count and the reset time; repeats stay free", async () => {
    const a = await company("Quota A", ["quota-a.com"]);
    const b = await company("Quota B", ["quota-b.com"]);
    const { account, call, client } = await agent("free");
    await touched(account.id, others(29));

    const thirtieth = structured<{ _meta: { usage: { companies: unknown } } }>(await call("get_company_logos", { companyId: a.companyId }));
    expect(thirtieth._meta.usage.companies).toEqual({ current: 30, limit: 30 });
    const refused = `Daily company limit (30) exceeded. You've accessed 30 unique companies today. Resets at ${nextMidnight()}.`;
    for (const [tool, args] of [
      ["get_logo", { logoId: b.icon }],
      ["fetch_logo", { query: "quota-b.com" }],
      ["get_company_logos", { companyId: b.companyId }],
      ["insert_logo", { query: "Quota B" }],
      ["fetch_logos", { domains: ["quota-b.com"] }],
    ] as const) {
      expect(failure(await call(tool, args)), tool).toBe(refused);
    }
    // Reading the logo as a resource hands it out too, and is refused the same way.
    await expect(client.readResource({ uri: `qt://logo/${b.icon}` })).rejects.toThrow(refused);

    // The company already counted today can be fetched again, by any tool.
    expect(structured(await call("get_logo", { logoId: a.icon })).logoId).toBe(a.icon);
    expect(structured(await call("fetch_logo", { query: "Quota A" })).logoId).toBe(a.icon);
    // Search never counts.
    expect(structured<{ results: unknown[] }>(await call("search_logos", { query: "Quota" })).results).toHaveLength(2);
  });

  it("a batch counts each company once, and is admitted whole or not at all", async () => {
    const names = ["batch-q1.com", "batch-q2.com", "batch-q3.com"];
    for (const name of names) await company(name, [name]);
    const { account, call } = await agent("free");
    await touched(account.id, others(27));

    // Three domains, two companies (one named twice): 2 new companies fit in the 3 left.
    const twice = structured<{ summary: unknown }>(
      await call("fetch_logos", { domains: ["batch-q1.com", "www.batch-q1.com", "batch-q2.com"] }),
    );
    expect(twice.summary).toEqual({ requested: 3, resolved: 3, failed: 0 });
    const usage = await admitCompanies(env, account.id, "free", []);
    expect(usage).toEqual({ ok: true, value: { current: 29, limit: 30 } });

    // q2 again plus q3 and one more unknown-to-quota company would be 31: refused whole.
    const extra = await company("batch-q4.com", ["batch-q4.com"]);
    expect(failure(await call("fetch_logos", { domains: ["batch-q2.com", "batch-q3.com", "batch-q4.com"] }))).toMatch(
      /^Daily company limit \(30\) exceeded/,
    );
    expect(await admitCompanies(env, account.id, "free", [])).toEqual({ ok: true, value: { current: 29, limit: 30 } });
    expect(extra.icon).toBeDefined();
  });

  it("is exact under concurrency: of 12 simultaneous calls for distinct companies with 5 left, exactly 5 succeed", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push((await company(`Concurrent ${i}`, [`concurrent-${i}.com`])).icon!);
    const { account, call } = await agent("free");
    await touched(account.id, others(25));

    const results = await Promise.all(ids.map((logoId) => call("get_logo", { logoId })));
    expect(results.filter((r) => !r.isError)).toHaveLength(5);
    expect(
      results.filter((r) => r.isError).every((r) => failure(r).startsWith("Daily company limit (30) exceeded. You've accessed 30")),
    ).toBe(true);
  });

  it("is per account: another account's use does not count", async () => {
    const a = await company("Own Quota", ["own-quota.com"]);
    const first = await agent("free");
    await touched(first.account.id, others(30));
    expect(failure(await first.call("get_logo", { logoId: a.icon }))).toMatch(/^Daily company limit/);
    const second = await agent("free");
    expect(structured(await second.call("get_logo", { logoId: a.icon })).logoId).toBe(a.icon);
  });

  it("paid plans have their own figures", async () => {
    const a = await company("Growth Co", ["growth-quota.com"]);
    const { call } = await agent("growth");
    const listed = structured<{ _meta: { usage: { companies: unknown; requests: { limit: number } } } }>(
      await call("get_company_logos", { companyId: a.companyId }),
    );
    expect(listed._meta.usage.companies).toEqual({ current: 1, limit: 10_000 });
    expect(listed._meta.usage.requests.limit).toBe(10_000);
  });

  it("row 10: insert_logo counts the company only once its upload succeeded; a refused call uploads nothing", async () => {
    const unlucky = await company("Upload Fails Quota Co", ["upload-fails-quota.com"], { full: true });
    const { account, call } = await agent("free");
    expect(failure(await call("insert_logo", { query: "upload-fails-quota.com" }))).toBe("Failed to insert logo. Try again later");
    expect(await companyQuotaFor(env, account.id).usage()).toBe(0);

    const uploadsOf = async (domain: string, logoId: number | undefined) =>
      (await (await fetch(`${env.ANTHROPIC_BASE_URL}/_uploads?filename=logo-${domain}-${logoId}.png`)).json()) as unknown[];
    const fine = await company("Insert Quota Co", ["insert-quota.com"], { full: true });
    expect(structured(await call("insert_logo", { query: "insert-quota.com" })).file_id).toMatch(/^file_/);
    expect(await companyQuotaFor(env, account.id).usage()).toBe(1);
    expect(await uploadsOf("insert-quota.com", fine.full)).toHaveLength(1);

    await touched(account.id, others(29));
    const late = await company("Late Quota Co", ["late-quota.com"], { full: true });
    expect(failure(await call("insert_logo", { query: "late-quota.com" }))).toMatch(/^Daily company limit \(30\) exceeded/);
    expect(await uploadsOf("late-quota.com", late.full)).toEqual([]);
    expect(unlucky.full).toBeDefined();
  });

  it("row 10: of two concurrent insert_logo calls for the last place, one succeeds and the other leaves no file behind", async () => {
    const { account, call } = await agent("free");
    await touched(account.id, others(29));
    const rivals = [
      await company("Rival One Co", ["rival-one.com"], { full: true }),
      await company("Rival Two Co", ["rival-two.com"], { full: true }),
    ];
    const results = await Promise.all([call("insert_logo", { query: "rival-one.com" }), call("insert_logo", { query: "rival-two.com" })]);
    expect(results.filter((r) => !r.isError)).toHaveLength(1);
    const loser = results.findIndex((r) => r.isError);
    expect(failure(results[loser]!)).toMatch(/^Daily company limit \(30\) exceeded/);
    const files = (await (
      await fetch(
        `${env.ANTHROPIC_BASE_URL}/_uploads?filename=logo-${["rival-one.com", "rival-two.com"][loser]}-${rivals[loser]!.full}.png`,
      )
    ).json()) as { deleted: boolean }[];
    expect(files.every((file) => file.deleted)).toBe(true);
  });

  it("a logo that is not handed out costs no quota: a failed read, data over 5 MB, a batch refused for its size", async () => {
    const masterOf = async (logoId: number | undefined) => (await findLogo(db, logoId!))!.logo.masterKey;
    const gone = await company("Unread Quota Co", ["unread-quota.com"]);
    await env.LOGOS.delete(await masterOf(gone.icon));
    const huge = await company("Huge Quota Co", ["huge-quota.com"]);
    await env.LOGOS.put(await masterOf(huge.icon), new Uint8Array(3_932_161));
    const halves = ["half-quota-1.com", "half-quota-2.com"];
    for (const domain of halves) await env.LOGOS.put(await masterOf((await company(domain, [domain])).icon), new Uint8Array(2_500_000));
    const fine = await company("Read Quota Co", ["read-quota.com"]);
    const { account, call, client } = await agent("free");
    const used = () => companyQuotaFor(env, account.id).usage();

    expect(failure(await call("get_logo", { logoId: gone.icon, returnType: "base64" }))).toBe(
      "Unable to retrieve image. Try again or use returnType: 'url'",
    );
    expect(failure(await call("get_logo", { logoId: huge.icon, returnType: "base64" }))).toBe(
      "Logo file exceeds 5MB. Use returnType: 'url' instead",
    );
    expect(failure(await call("fetch_logo", { query: "huge-quota.com", returnType: "base64" }))).toBe(
      "Logo file exceeds 5MB. Use returnType: 'url' instead",
    );
    await expect(client.readResource({ uri: `qt://logo/${huge.icon}` })).rejects.toThrow("Rendered logo exceeds 5MB");
    expect(failure(await call("fetch_logos", { domains: halves, returnType: "base64" }))).toBe(
      "Aggregate base64 payload size exceeds 5MB limit",
    );
    expect(await used()).toBe(0);

    // In a batch, only the entries handed out count.
    const batch = structured<{ summary: unknown }>(
      await call("fetch_logos", { domains: ["unread-quota.com", "read-quota.com"], returnType: "base64" }),
    );
    expect(batch.summary).toEqual({ requested: 2, resolved: 1, failed: 1 });
    expect(await used()).toBe(1);
    // A URL is handed out whether or not the bytes are there, and counts.
    expect(structured(await call("get_logo", { logoId: gone.icon })).logoId).toBe(gone.icon);
    expect(await used()).toBe(2);
    expect(fine.icon).toBeDefined();
  });

  it("three-tool get_logo in url mode counts the company only once its URL is signed", async () => {
    const unsigned = await company("Unsigned Quota Co", ["unsigned-quota.com"]);
    const account = await mcpAccount("free");
    // The MCP server as /mcp builds it for this account, on a deployment without SIGNED_URL_SECRET.
    const ctx: ToolContext = {
      caller: {
        accountId: account.id,
        clientId: "client",
        oauthClientId: "agent",
        plan: "free",
        emailConfirmed: true,
        address: null,
        toolset: "three",
        base: BASE,
        requests: null,
      },
      env: Object.create(env, { SIGNED_URL_SECRET: { value: undefined } }) as Env,
      db: createDb(env.DB),
      overrides: async () => new Map(),
      catalogue: catalogueReader(env.DB),
      defer: () => undefined,
      base64Left: MAX_REQUEST_BASE64_CHARS,
    };
    const client = new Client({ name: "quota-tests", version: "1.0.0" }, { versionNegotiation: { mode: "legacy" } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { fetch: (input, init) => serveMcp(new Request(input, init), ctx) }),
    );
    const result = (await client.callTool({ name: "get_logo", arguments: { logoId: unsigned.icon, returnType: "url" } })) as CallToolResult;
    expect(failure(result)).toBe("Unable to generate signed URL. Try again later");
    expect(await companyQuotaFor(env, account.id).usage()).toBe(0);
    await client.close();
  });

  it("an unreachable quota service refuses with the spec's message", async () => {
    const broken = {
      idFromName: () => {
        throw new Error("namespace unavailable");
      },
    } as unknown as Env["COMPANY_QUOTA"];
    expect(await admitCompanies({ COMPANY_QUOTA: broken }, "acct", "free", [1])).toEqual({
      ok: false,
      error: { code: "unavailable", message: "Quota service temporarily unavailable. Try again later." },
    });
  });
});

describe("feedback under concurrency", () => {
  it("of 9 simultaneous submissions, exactly 5 are stored", async () => {
    const { account, call } = await agent("free");
    const results = await Promise.all(
      Array.from({ length: 9 }, (_, i) => call("send_feedback", { category: "bug", message: `report ${i}` })),
    );
    expect(results.filter((r) => !r.isError)).toHaveLength(5);
    expect(results.filter((r) => r.isError).map(failure)).toEqual(Array(4).fill("Daily feedback limit (5) exceeded. Try again tomorrow."));
    expect(await db.select().from(feedback).where(eq(feedback.accountId, account.id))).toHaveLength(5);
    const remaining = results.filter((r) => !r.isError).map((r) => structured<{ remaining: number }>(r).remaining);
    expect(remaining.sort()).toEqual([0, 1, 2, 3, 4]);
  });
});
