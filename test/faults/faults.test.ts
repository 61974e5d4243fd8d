import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, feedback, logos, stripeEvents } from "../../schema";
import { importCompanyLogo } from "../../src/catalogue/importLogo";
import { submitFeedback } from "../../src/feedback/feedback";
import { createDb } from "../../src/lib/db";
import { dependencyDeadline, Unavailable } from "../../src/lib/dependencies";
import { ok } from "../../src/lib/errors";
import { limiterNames, rateLimiterFor } from "../../src/limits/rateLimiterClient";
import { accountMonthWindow, keyMinuteWindow } from "../../src/limits/lookupLimits";
import { event, outcomeOf, signatureFor, subscription } from "../billing/helpers";
import { darkLogo40x20, vectorLogo40x20 } from "../fixtures/images";
import { addAccount, addKey, db } from "../helpers/catalogue";
import { assetKeyOf, BASE, fetchWith, freshCompany, freshKey } from "../lookup/helpers";
import { MCP_ACCEPT, mcpAccount, PASSWORD, tokensFor } from "../oauth/helpers";
import { brokenBucket, brokenDatabase, brokenImages, brokenKv, brokenObjects, type Fault, flakyDatabase } from "./bindings";
import { errorBody } from "../helpers/errors";

/**
 * Every route when what it depends on fails or does not answer: the generic message with 503
 * and Retry-After (retrying helps), never a stack trace; nothing half-written; and limits that
 * cannot be asked admit nothing.
 */
const manual = { redirect: "manual" } as const;

async function expectPlain503(response: Response) {
  expect(response.status).toBe(503);
  expect(response.headers.get("retry-after")).toBe("5");
  expect(await response.text()).toBe("Service temporarily unavailable");
}

async function expectJson503(response: Response, message = "Service temporarily unavailable. Try again later") {
  expect(response.status).toBe(503);
  expect(response.headers.get("retry-after")).toBe("5");
  expect(response.headers.get("cache-control")).toBe("no-store");
  expect(await errorBody(response)).toEqual({ error: message, code: "unavailable" });
}

const mcpCall = (
  token: string,
  vars: Partial<Env>,
  call = fetchWith,
  message: unknown = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
) =>
  call(vars, `${BASE}/mcp`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      Accept: MCP_ACCEPT,
      "MCP-Protocol-Version": "2025-06-18",
    },
    body: JSON.stringify(message),
  });

describe.each<Fault>(["fails", "hangs"])("when a dependency %s", (fault) => {
  /**
   * The Worker called with some bindings broken. A hang is given up on at the deadline, lowered
   * for this call only (500 ms) so the test stays quick while everything around it keeps the
   * real deadline. Within the call the healthy dependencies are held to it too: at 100 ms, a
   * fresh limiter or a D1 read on a loaded two-core machine sometimes missed it, and the lookup
   * answered 503 for a dependency that was not the broken one.
   */
  const whileBroken = async <T>(work: () => Promise<T>) => {
    const saved = dependencyDeadline.ms;
    if (fault === "hangs") dependencyDeadline.ms = 500;
    try {
      return await work();
    } finally {
      dependencyDeadline.ms = saved;
    }
  };
  const withBroken = (vars: Partial<Env>, url: string, init?: RequestInit) => whileBroken(() => fetchWith(vars, url, init));

  it("the lookup answers 503 when D1 does, and when the limiter does it admits nothing", async () => {
    const { domain } = await freshCompany();
    await expectPlain503(await withBroken({ DB: brokenDatabase(fault) }, `${BASE}/${domain}?token=${await freshKey()}`, manual));

    const token = await freshKey();
    await withBroken({ RATE_LIMITER: brokenObjects(env.RATE_LIMITER, fault) }, `${BASE}/${domain}?token=${token}`, manual).then(
      expectPlain503,
    );
  });

  it("a lookup of a domain the catalogue lacks answers the miss when its discovery coordinator does, within its wait", async () => {
    const vars = { DISCOVERY_COORDINATOR: brokenObjects(env.DISCOVERY_COORDINATOR, fault) };
    const response = await withBroken(
      vars,
      `${BASE}/not-catalogued-${crypto.randomUUID().slice(0, 8)}.com?token=${await freshKey()}&fallback=monogram`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-logo-source")).toBe("monogram");
    // Nothing was remembered: the monogram lasts only until the site may be asked again.
    expect(response.headers.get("cache-control")).toBe("public, max-age=60");
  });

  it("the lookup in bytes mode answers 503 when R2 or the Images binding does", async () => {
    for (const vars of [{ LOGOS: brokenBucket(fault) }, { IMAGES: brokenImages(fault) }] as Partial<Env>[]) {
      const { domain } = await freshCompany();
      await expectPlain503(await withBroken({ LOOKUP_RESPONSE: "bytes", ...vars }, `${BASE}/${domain}?token=${await freshKey()}`));
    }
  });

  it("/assets answers 503 when R2 or the Images binding does", async () => {
    for (const vars of [{ LOGOS: brokenBucket(fault) }, { IMAGES: brokenImages(fault) }]) {
      const { domain } = await freshCompany();
      const location = (await fetchWith({}, `${BASE}/${domain}?token=${await freshKey()}&size=77`, manual)).headers.get("location")!;
      expect(assetKeyOf(location)).not.toBeNull();
      await expectPlain503(await withBroken(vars, new URL(location, BASE).toString()));
    }
    // A vector, asked of its own key or of the master's with format=svg.
    const { domain } = await freshCompany({ image: vectorLogo40x20() });
    const token = await freshKey();
    const master = new URL((await fetchWith({}, `${BASE}/${domain}?token=${token}`, manual)).headers.get("location")!, BASE);
    const vector = new URL((await fetchWith({}, `${BASE}/${domain}?token=${token}&format=svg`, manual)).headers.get("location")!, BASE);
    expect(assetKeyOf(vector.toString())).toMatch(/\.svg$/);
    master.search = "?format=svg"; // unsigned: the route takes format from anyone
    for (const url of [vector, master]) await expectPlain503(await withBroken({ LOGOS: brokenBucket(fault) }, url.toString()));
  });

  it("the REST API answers JSON 503 when D1 or the limiter does", async () => {
    for (const vars of [{ DB: brokenDatabase(fault) }, { RATE_LIMITER: brokenObjects(env.RATE_LIMITER, fault) }] as Partial<Env>[]) {
      const key = await addKey((await addAccount("launch")).id, { type: "secret" });
      await expectJson503(await withBroken(vars, `${BASE}/v1/companies/search?q=acme`, { headers: { Authorization: `Bearer ${key}` } }));
    }
  });

  it("/health answers 503 naming the database when D1 does, within the deadline every D1 call has", async () => {
    const response = await withBroken({ DB: brokenDatabase(fault) }, `${BASE}/health`);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("30");
    expect(await response.json()).toEqual({ status: "degraded", database: "unavailable", storage: "ok", configuration: "ok" });
  });

  it("/health answers 503 naming the object storage when R2 does: lookups redirect to images it cannot serve", async () => {
    const response = await withBroken({ LOGOS: brokenBucket(fault) }, `${BASE}/health`);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("30");
    expect(await response.json()).toEqual({ status: "degraded", database: "ok", storage: "unavailable", configuration: "ok" });
  });

  it("/mcp answers its generic message with 503 when KV, D1 or the limiter does", async () => {
    const { access_token } = await tokensFor((await mcpAccount("launch")).email);
    for (const vars of [
      { OAUTH_KV: brokenKv(fault) },
      { DB: brokenDatabase(fault) },
      { RATE_LIMITER: brokenObjects(env.RATE_LIMITER, fault) },
    ] as Partial<Env>[]) {
      await expectJson503(await mcpCall(access_token, vars, withBroken), "Internal MCP server error");
    }
  });

  it("a tool that hands out a logo refuses with the quota's message, and /v1/usage counts no companies, when the company quota does", async () => {
    const account = await mcpAccount("launch");
    const { access_token } = await tokensFor(account.email);
    const { domain } = await freshCompany();
    const vars = { COMPANY_QUOTA: brokenObjects(env.COMPANY_QUOTA, fault) };
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "fetch_logo", arguments: { query: domain } } };
    // The tool runs while its answer streams: the body is read within the lowered deadline too.
    const answer = await whileBroken(async () => {
      const response = await mcpCall(access_token, vars, fetchWith, call);
      return { status: response.status, body: await response.text() };
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(/^data: (.*)$/m.exec(answer.body)![1]!)).toMatchObject({
      result: { isError: true, content: [{ type: "text", text: "Quota service temporarily unavailable. Try again later." }] },
    });

    const key = await addKey(account.id, { type: "secret" });
    const usage = await withBroken(vars, `${BASE}/v1/usage`, { headers: { Authorization: `Bearer ${key}` } });
    expect(usage.status).toBe(200);
    expect(await usage.json()).toMatchObject({ plan: "launch", companiesToday: null });
  });

  it("portal pages answer a 503 page when D1 does", async () => {
    const response = await withBroken({ DB: brokenDatabase(fault) }, `${BASE}/portal`, {
      headers: { Cookie: "__Host-session=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG" },
    });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(await response.text()).toContain("The portal is briefly unavailable");
  });

  it("portal sign-in answers JSON 503 when the limiter or D1 does", async () => {
    const { email } = await mcpAccount();
    for (const vars of [{ RATE_LIMITER: brokenObjects(env.RATE_LIMITER, fault) }, { DB: brokenDatabase(fault) }] as Partial<Env>[]) {
      const response = await withBroken(vars, `${BASE}/apiaas/login`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": `192.0.2.${Math.floor(Math.random() * 250)}` },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
      await expectJson503(response);
      expect(response.headers.get("set-cookie")).toBeNull();
    }
  });
});

describe("a transient fault of D1", () => {
  it("a read that meets one is asked again, and the lookup answers the logo", async () => {
    const { domain } = await freshCompany();
    const flaky = flakyDatabase(env.DB, 2);
    const response = await fetchWith({ DB: flaky }, `${BASE}/${domain}?token=${await freshKey()}`, manual);
    expect(response.status).toBe(302);
    expect(flaky.failed()).toBe(2);
  });

  it("one that lasts past the retries is answered 503", async () => {
    const { domain } = await freshCompany();
    await expectPlain503(await fetchWith({ DB: flakyDatabase(env.DB, 1_000) }, `${BASE}/${domain}?token=${await freshKey()}`, manual));
  });
});

describe("nothing half-written", () => {
  it("a webhook that meets a failing D1 records nothing, so Stripe's retry applies it", async () => {
    const account = await addAccount("free");
    const body = JSON.stringify(event("customer.subscription.created", subscription(account.id)));
    const deliver = async (vars: Partial<Env>) =>
      fetchWith(vars, `${BASE}/apiaas/billing/webhook`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Stripe-Signature": await signatureFor(body) },
        body,
      });
    await expectJson503(await deliver({ DB: brokenDatabase("fails") }));
    expect(
      await db
        .select()
        .from(stripeEvents)
        .where(eq(stripeEvents.id, JSON.parse(body).id)),
    ).toEqual([]);
    expect(await outcomeOf(deliver({}))).toBe("applied");
  });

  it("an import whose objects cannot be stored writes no rows and leaves no object", async () => {
    const failing = { ...brokenBucket("fails"), delete: (keys: string[]) => env.LOGOS.delete(keys) } as R2Bucket;
    const result = await importCompanyLogo(
      db,
      failing,
      {
        name: "Stranded Co",
        domains: ["stranded.example.com"],
        aliases: [],
        prominence: 0,
        variant: "icon",
        sourceSet: "test",
        licence: "CC0-1.0",
        sourceHash: "1".repeat(64),
      },
      async () => ok(darkLogo40x20()),
    );
    // The store's failure, not the input's: an import stops at it (run.ts).
    expect(result).toMatchObject({ ok: false, error: { code: "unavailable" } });
    expect(await db.select().from(logos)).toEqual([]);
    expect((await env.LOGOS.list({ prefix: "logos/stranded.example.com/" })).objects).toEqual([]);
  });

  it("feedback meeting a failing D1 is refused as unavailable", async () => {
    const account = await addAccount();
    const submit = submitFeedback(createDb(brokenDatabase("fails")), {
      accountId: account.id,
      clientId: account.clientId,
      oauthClientId: null,
      category: "bug",
      message: "lost?",
    });
    await expect(submit).rejects.toBeInstanceOf(Unavailable);
  });

  it("feedback whose write fails after its row was inserted stores nothing: the check, insert and count are one transaction", async () => {
    const account = await addAccount();
    // The real batch, failing at run time after the insert has run (malformed JSON raises).
    const failingLate = {
      prepare: (query: string) => env.DB.prepare(query),
      batch: (statements: D1PreparedStatement[]) => env.DB.batch([...statements, env.DB.prepare("SELECT json('{')")]),
    } as D1Database;
    const input = { accountId: account.id, clientId: account.clientId, oauthClientId: null, category: "bug" as const, message: "lost?" };
    await expect(submitFeedback(createDb(failingLate), input)).rejects.toBeInstanceOf(Unavailable);
    expect(await db.select().from(feedback).where(eq(feedback.accountId, account.id))).toEqual([]);
    // And the day's limit was not spent on it.
    expect(await submitFeedback(db, input)).toMatchObject({ ok: true, value: { remaining: 4 } });
  });

  it("a refused lookup is not counted: the limiter that could not be asked counted nothing", async () => {
    const account = await addAccount("free");
    const key = await addKey(account.id);
    const { domain } = await freshCompany();
    await expectPlain503(
      await fetchWith({ RATE_LIMITER: brokenObjects(env.RATE_LIMITER, "fails") }, `${BASE}/${domain}?token=${key}`, manual),
    );
    const row = await db.query.apiKeys.findFirst({ where: eq(apiKeys.accountId, account.id) });
    const [minute] = await rateLimiterFor(env, limiterNames.keyShard(row!.id, 0, 1)).usage([
      keyMinuteWindow({ plan: "free", perMinuteOverride: null }),
    ]);
    const [month] = await rateLimiterFor(env, limiterNames.lookups(account.id)).usage([accountMonthWindow("free")]);
    expect([minute!.used, month!.used]).toEqual([0, 0]);
  });

  it("a lookup the account's month could not count is refused, and the key's minute keeps nothing of it", async () => {
    const account = await addAccount("free");
    const key = await addKey(account.id);
    const { domain } = await freshCompany();
    const monthBroken = { RATE_LIMITER: brokenObjects(env.RATE_LIMITER, "fails", (name) => name === limiterNames.lookups(account.id)) };
    await expectPlain503(await fetchWith(monthBroken, `${BASE}/${domain}?token=${key}`, manual));
    const row = await db.query.apiKeys.findFirst({ where: eq(apiKeys.accountId, account.id) });
    const [minute] = await rateLimiterFor(env, limiterNames.keyShard(row!.id, 0, 1)).usage([
      keyMinuteWindow({ plan: "free", perMinuteOverride: null }),
    ]);
    expect(minute!.used).toBe(0);
    // With the month answering again, the key is served.
    expect((await fetchWith({}, `${BASE}/${domain}?token=${key}`, manual)).status).toBe(302);
  });
});
