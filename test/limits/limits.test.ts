import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { admitCompanies, checkCompanies, companyQuotaFor } from "../../src/limits/companyQuotaClient";
import { accountMonthWindow } from "../../src/limits/lookupLimits";
import { DAY_MS, windowStart } from "../../src/limits/periods";
import { limiterNames, rateLimiterFor } from "../../src/limits/rateLimiterClient";

const minute = [{ name: "lookup", period: "minute" as const, limit: 10 }];
const at = (iso: string) => Date.parse(iso);

describe("RateLimiter", () => {
  it("lets exactly the limit through when 30 calls arrive at once", async () => {
    const limiter = rateLimiterFor(env, "key:concurrent");
    const now = at("2026-11-22T10:00:30Z");
    const decisions = await Promise.all(Array.from({ length: 30 }, () => limiter.consume(minute, 1, now)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0 && d.refusedBy === "lookup")).toBe(true);
    expect(decisions.map((d) => d.resetAt)).toEqual(Array(30).fill(at("2026-11-22T10:01:00Z")));
  });

  it("counts down remaining and starts again in the next window", async () => {
    const limiter = rateLimiterFor(env, "key:windows");
    const first = await limiter.consume(minute, 1, at("2026-11-22T10:00:00Z"));
    expect(first).toEqual({ allowed: true, remaining: 9, resetAt: at("2026-11-22T10:01:00Z") });
    await limiter.consume(minute, 9, at("2026-11-22T10:00:59Z"));
    expect((await limiter.consume(minute, 1, at("2026-11-22T10:00:59.999Z"))).allowed).toBe(false);
    expect(await limiter.consume(minute, 1, at("2026-11-22T10:01:00Z"))).toMatchObject({ allowed: true, remaining: 9 });
  });

  it("counts a request stamped in a window that has just ended in the one already begun", async () => {
    const limiter = rateLimiterFor(env, "key:late");
    await limiter.consume(minute, 10, at("2026-11-22T10:00:50Z"));
    await limiter.consume(minute, 9, at("2026-11-22T10:01:01Z"));
    // Stamped 10:00:59 (another colo's clock, a round trip), arriving after 10:01 has begun here.
    expect(await limiter.consume(minute, 1, at("2026-11-22T10:00:59Z"))).toMatchObject({
      allowed: true,
      remaining: 0,
      resetAt: at("2026-11-22T10:02:00Z"),
    });
    expect((await limiter.consume(minute, 1, at("2026-11-22T10:00:59Z"))).allowed).toBe(false);
    expect((await limiter.consume(minute, 1, at("2026-11-22T10:01:30Z"))).allowed).toBe(false);
  });

  it("counts nothing when any window refuses", async () => {
    const limiter = rateLimiterFor(env, "key:two-windows");
    const windows = [
      { name: "minute", period: "minute" as const, limit: 100 },
      { name: "month", period: "month" as const, limit: 3 },
    ];
    const now = at("2026-11-30T23:59:00Z");
    for (let i = 0; i < 3; i++) expect((await limiter.consume(windows, 1, now)).allowed).toBe(true);
    expect(await limiter.consume(windows, 1, now)).toEqual({
      allowed: false,
      remaining: 0,
      resetAt: at("2026-12-01T00:00:00Z"),
      refusedBy: "month",
    });
    expect(await limiter.usage(windows, now)).toEqual([
      { name: "minute", used: 3, limit: 100, resetAt: at("2026-12-01T00:00:00Z") },
      { name: "month", used: 3, limit: 3, resetAt: at("2026-12-01T00:00:00Z") },
    ]);
  });

  it("says when a retry can succeed: the month's end once the minute and the month are spent together", async () => {
    const limiter = rateLimiterFor(env, "key:spent-together");
    const windows = [
      { name: "minute", period: "minute" as const, limit: 10 },
      { name: "month", period: "month" as const, limit: 1_000 },
    ];
    const now = at("2026-11-22T10:00:05Z");
    await limiter.consume([windows[1]!], 990, now);
    expect(await limiter.consume(windows, 10, now)).toEqual({ allowed: true, remaining: 0, resetAt: at("2026-12-01T00:00:00Z") });
    expect(await limiter.consume(windows, 1, now)).toEqual({
      allowed: false,
      remaining: 0,
      resetAt: at("2026-12-01T00:00:00Z"),
      refusedBy: "month",
    });
    // The minute alone refusing still says the minute's end.
    expect(await limiter.consume(minute, 10, now)).toMatchObject({ allowed: true, remaining: 0, resetAt: at("2026-11-22T10:01:00Z") });
    expect(await limiter.consume(minute, 1, now)).toMatchObject({ allowed: false, resetAt: at("2026-11-22T10:01:00Z") });
  });
});

describe("RateLimiter storage", () => {
  // What the object stores: its SQLite tables, and whether its alarm is set.
  const stored = (limiter: ReturnType<typeof rateLimiterFor>) =>
    runInDurableObject(limiter, async (_, state) => ({
      tables: state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master")
        .toArray()
        .map((row) => row.name),
      alarm: await state.storage.getAlarm(),
    }));
  const signIn = [
    { name: "sign-in", period: "minute" as const, limit: 10 },
    { name: "sign-in-day", period: "day" as const, limit: 100 },
  ];

  it("is deleted, alarm and all, once its windows are over, and counts from nothing when its name comes back", async () => {
    // An email typed once at sign-in, on a day now past.
    const limiter = rateLimiterFor(env, limiterNames.signInAccount("typed-once@example.com"));
    expect((await limiter.consume(signIn, 10, at("2026-11-22T10:00:30Z"))).allowed).toBe(true);
    expect(await stored(limiter)).toMatchObject({ tables: expect.arrayContaining(["windows"]), alarm: expect.any(Number) });
    expect(await runDurableObjectAlarm(limiter)).toBe(true);
    expect(await stored(limiter)).toEqual({ tables: [], alarm: null });
    expect(await limiter.consume(signIn, 1)).toMatchObject({ allowed: true, remaining: 9 });
  });

  it("keeps a window not yet over, and a key's days of history, and wakes again to look", async () => {
    const now = Date.now();
    const account = rateLimiterFor(env, limiterNames.lookups("kept"));
    await account.consume([accountMonthWindow("free")], 5, now);
    expect(await runDurableObjectAlarm(account)).toBe(true);
    expect(await account.usage([accountMonthWindow("free")], now)).toMatchObject([{ used: 5 }]);
    expect((await stored(account)).alarm).toEqual(expect.any(Number));
    // A key last used yesterday: its minute is long over, its day is kept for usage reports.
    const key = rateLimiterFor(env, limiterNames.keyShard("kept", 0, 1));
    await key.consume([{ name: "lookup-minute", period: "minute", limit: 600 }], 3, now - DAY_MS, "lookup");
    expect(await runDurableObjectAlarm(key)).toBe(true);
    expect(await key.history("lookup", [windowStart("day", now - DAY_MS)])).toEqual([3]);
    expect((await stored(key)).alarm).toEqual(expect.any(Number));
  });
});

describe("CompanyQuota", () => {
  it("counts each company once per UTC day and admits a batch whole or not at all", async () => {
    const quota = companyQuotaFor(env, "account:1");
    const now = at("2026-11-22T23:00:00Z");
    expect(await quota.admit([1, 2, 2, 3], 4, now)).toEqual({ allowed: true, current: 3, limit: 4, resetAt: at("2026-11-23T00:00:00Z") });
    expect(await quota.admit([1, 2], 4, now)).toMatchObject({ allowed: true, current: 3 });
    expect(await quota.admit([4, 5], 4, now)).toMatchObject({ allowed: false, current: 3 });
    expect(await quota.admit([4], 4, now)).toMatchObject({ allowed: true, current: 4 });
    expect(await quota.admit([5], 4, at("2026-11-23T00:00:00Z"))).toMatchObject({ allowed: true, current: 1 });
  });

  it("counts a call stamped just before midnight, arriving after the next day began here, in that day", async () => {
    const quota = companyQuotaFor(env, "account:late");
    expect(await quota.admit([1, 2], 2, at("2026-11-22T23:59:00Z"))).toMatchObject({ allowed: true, current: 2 });
    expect(await quota.admit([3], 2, at("2026-11-23T00:00:01Z"))).toMatchObject({ allowed: true, current: 1 });
    expect(await quota.admit([4, 5], 2, at("2026-11-22T23:59:59Z"))).toMatchObject({
      allowed: false,
      current: 1,
      resetAt: at("2026-11-24T00:00:00Z"),
    });
    expect(await quota.admit([4], 2, at("2026-11-22T23:59:59Z"))).toMatchObject({ allowed: true, current: 2 });
    expect(await quota.history([at("2026-11-22T00:00:00Z"), at("2026-11-23T00:00:00Z")])).toEqual([2, 2]);
  });

  it("reports today's count without counting anything", async () => {
    const quota = companyQuotaFor(env, "account:3");
    const now = at("2026-11-22T12:00:00Z");
    expect(await quota.usage(now)).toBe(0);
    await quota.admit([7, 8], 2, now);
    expect(await quota.usage(now)).toBe(2);
    expect(await quota.usage(now)).toBe(2);
    // Reading left the last place free: a repeat is still admitted, a third company is not.
    expect(await quota.admit([8], 2, now)).toMatchObject({ allowed: true, current: 2 });
    expect(await quota.admit([9], 2, now)).toMatchObject({ allowed: false, current: 2 });
    expect(await quota.usage(at("2026-11-23T00:00:00Z"))).toBe(0);
  });

  it("still serves the companies counted today after a downgrade to a plan whose limit is below today's count", async () => {
    const now = at("2026-11-22T12:00:00Z");
    const companies = Array.from({ length: 40 }, (_, i) => i + 1);
    expect(await admitCompanies(env, "downgraded", "launch", companies, now)).toEqual({ ok: true, value: { current: 40, limit: 1_000 } });
    // Now on Free (30 a day): a company already fetched today costs nothing again.
    expect(await checkCompanies(env, "downgraded", "free", [7, 40], now)).toEqual({ ok: true, value: { current: 40, limit: 30 } });
    expect(await admitCompanies(env, "downgraded", "free", [7, 40], now)).toEqual({ ok: true, value: { current: 40, limit: 30 } });
    // A new one is still refused, and with it the batch it came in.
    expect(await admitCompanies(env, "downgraded", "free", [7, 41], now)).toMatchObject({ ok: false, error: { code: "rate_limited" } });
    expect(await companyQuotaFor(env, "downgraded").usage(now)).toBe(40);
  });

  it("is exact under concurrency", async () => {
    const quota = companyQuotaFor(env, "account:2");
    const now = at("2026-11-22T12:00:00Z");
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => quota.admit([i + 1], 30, now)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(30);
  });
});

describe("daily history for usage reports", () => {
  const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

  it("counts admitted requests per UTC day under a counter, gives back released ones, and never counts refusals", async () => {
    const limiter = rateLimiterFor(env, "key:history");
    const windows = [{ name: "lookup-minute", period: "minute" as const, limit: 5 }];
    await limiter.consume(windows, 3, at("2026-11-21T23:59:10Z"), "lookup");
    expect((await limiter.consume(windows, 3, at("2026-11-21T23:59:20Z"), "lookup")).allowed).toBe(false);
    const leased = await limiter.lease(windows, 10, at("2026-11-22T00:00:05Z"), "lookup");
    expect(leased.granted).toBe(1);
    await limiter.consume(windows, 2, at("2026-11-22T08:00:00Z"), "lookup");
    // A counter of its own, and calls naming none, stay out of it.
    await limiter.consume(windows, 1, at("2026-11-22T09:00:00Z"), "other");
    await limiter.consume(windows, 1, at("2026-11-22T09:00:00Z"));
    await limiter.release(windows, 1, leased.starts, { counter: "lookup", grantedAt: at("2026-11-22T00:00:05Z") });
    expect(await limiter.history("lookup", [day("2026-11-20"), day("2026-11-21"), day("2026-11-22")])).toEqual([0, 3, 2]);
    expect(await limiter.history("other", [day("2026-11-22")])).toEqual([1]);
  });

  it("keeps at least 90 days of history", async () => {
    const limiter = rateLimiterFor(env, "key:history-retention");
    const quota = companyQuotaFor(env, "history-retention");
    const first = day("2026-08-01");
    await limiter.consume([], 4, first + 3_600_000, "mcp_request");
    await quota.admit([1, 2], 30, first + 3_600_000);
    const ninetyDaysLater = first + 90 * 86_400_000;
    await limiter.consume([], 1, ninetyDaysLater, "mcp_request");
    await quota.admit([3], 30, ninetyDaysLater);
    expect(await limiter.history("mcp_request", [first, ninetyDaysLater])).toEqual([4, 1]);
    expect(await quota.history([first, first + 86_400_000, ninetyDaysLater])).toEqual([2, 0, 1]);
    // Past the kept days, a day is forgotten by the next write.
    const later = first + 101 * 86_400_000;
    await limiter.consume([], 1, later, "mcp_request");
    await quota.admit([4], 30, later);
    expect(await limiter.history("mcp_request", [first, ninetyDaysLater, later])).toEqual([0, 1, 1]);
    expect(await quota.history([first, ninetyDaysLater, later])).toEqual([0, 1, 1]);
  });

  it("counts each day's unique companies, not the calls that touched them", async () => {
    const quota = companyQuotaFor(env, "history-unique");
    const now = at("2026-11-22T10:00:00Z");
    await quota.admit([1, 2], 30, now);
    await quota.admit([2, 3], 30, now);
    await quota.admit([3], 30, now);
    expect(await quota.history([day("2026-11-22")])).toEqual([3]);
  });
});
