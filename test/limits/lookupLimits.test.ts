import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { VerifiedKey } from "../../src/keys/verify";
import {
  accountMonthWindow,
  consumeLookup,
  keyMinuteWindow,
  LEASE_SIZE,
  lookupUsage,
  MONTH_SPENT_MEMORY_MS,
  shareOf,
} from "../../src/limits/lookupLimits";
import type { RateLimiter } from "../../src/limits/rateLimiter";
import { limiterNames, rateLimiterFor } from "../../src/limits/rateLimiterClient";
import { brokenObjects } from "../faults/bindings";

// Each key of its own account unless told: the month is the account's.
const key = (
  id: string,
  perMinuteOverride: number | null,
  plan: VerifiedKey["plan"] = "free",
  accountId = `account-${id}`,
): VerifiedKey => ({
  id,
  accountId,
  type: "publishable",
  plan,
  emailConfirmed: true,
  allowedOrigins: [],
  requireAttribution: false,
  perMinuteOverride,
  fallback: null,
  overrides: false,
});

describe("lookup limits", () => {
  it("take the key's override before the plan's per-minute figure, and the plan's monthly quota", () => {
    expect(keyMinuteWindow(key("a", null))).toEqual({ name: "lookup-minute", period: "minute", limit: 600 });
    expect(accountMonthWindow("free")).toEqual({ name: "lookup-month", period: "month", limit: 500_000 });
    expect(keyMinuteWindow(key("a", 42, "enterprise")).limit).toBe(42);
  });

  it("split a limit into shares that differ by at most one and add up to it", () => {
    for (const [limit, count] of [
      [10, 3],
      [100_000, 9],
      [7, 7],
      [5, 1],
    ] as const) {
      const shares = Array.from({ length: count }, (_, i) => shareOf(limit, i, count));
      expect(shares.reduce((a, b) => a + b, 0)).toBe(limit);
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
    }
  });

  it("admit exactly the limit across shards under concurrency", async () => {
    const now = Date.parse("2026-11-22T10:00:10Z");
    // Capacity 4 a shard: a limit of 10 spreads over three objects (4 + 3 + 3).
    const decisions = await Promise.all(
      Array.from({ length: 30 }, () => consumeLookup(env, key("sharded", 10), { now, shardCapacity: 4 })),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0)).toBe(true);
  });

  it("never refuse while any shard has room", async () => {
    const now = Date.parse("2026-11-22T10:00:20Z");
    const results: boolean[] = [];
    for (let i = 0; i < 12; i++) results.push((await consumeLookup(env, key("sequential", 12), { now, shardCapacity: 3 })).allowed);
    expect(results).toEqual(Array(12).fill(true));
    expect((await consumeLookup(env, key("sequential", 12), { now, shardCapacity: 3 })).allowed).toBe(false);
  });
});

describe("leases", () => {
  const usage = async (id: string, k: VerifiedKey, now: number) => [
    ...(await rateLimiterFor(env, limiterNames.keyShard(id, 0, 1)).usage([keyMinuteWindow(k)], now)),
    ...(await rateLimiterFor(env, limiterNames.lookups(k.accountId)).usage([accountMonthWindow(k.plan)], now)),
  ];

  it("start at one request, grow to twice what the minute served up to LEASE_SIZE, and serve a batch without asking again", async () => {
    const k = key("leased", 100_000, "enterprise");
    const now = Date.parse("2026-11-22T11:00:05Z");
    const used = async () => (await usage("leased", k, now))[0]!.used;
    // An isolate evicted after its first request has counted only that request.
    expect((await consumeLookup(env, k, { now })).allowed).toBe(true);
    expect(await used()).toBe(1);
    // Batches of 2, 6, 18, … 486: twice what was served so far, each counted once, when granted.
    let served = 1;
    for (let batch = 2; batch < LEASE_SIZE; batch = 2 * served) {
      expect((await consumeLookup(env, k, { now })).allowed).toBe(true);
      expect(await used()).toBe(served + batch);
      for (let i = 1; i < batch; i++) expect((await consumeLookup(env, k, { now })).allowed).toBe(true);
      expect(await used()).toBe((served += batch));
    }
    // Then LEASE_SIZE, and no more.
    await consumeLookup(env, k, { now });
    expect(await used()).toBe(served + LEASE_SIZE);
  }, 30_000);

  it("give the unspent rest back to the month when the minute ends, and lease what was spent", async () => {
    const k = key("released", 100_000, "enterprise");
    const month = (at: number) => usage("released", k, at).then((windows) => windows[1]!.used);
    const minute1 = Date.parse("2026-11-22T11:00:58Z");
    await consumeLookup(env, k, { now: minute1 });
    await consumeLookup(env, k, { now: minute1 });
    // A batch of one, spent, then a batch of two (twice one), half spent.
    expect(await month(minute1)).toBe(3);
    const minute2 = Date.parse("2026-11-22T11:01:00Z");
    await consumeLookup(env, k, { now: minute2 });
    // The two requests of the first minute, and a batch of four: twice what that minute served.
    expect(await month(minute2)).toBe(2 + 4);
  });

  it("start again at one request after an idle spell, whatever the isolate served before", async () => {
    const k = key("idle", 100_000, "enterprise");
    const month = (at: number) => usage("idle", k, at).then((windows) => windows[1]!.used);
    const busy = Date.parse("2026-11-22T11:00:05Z");
    for (let i = 0; i < 100; i++) await consumeLookup(env, k, { now: busy });
    const counted = await month(busy);
    // An hour later, one lookup: the last batch's rest goes back, and one request is leased.
    const later = Date.parse("2026-11-22T12:00:05Z");
    await consumeLookup(env, k, { now: later });
    expect(await month(later)).toBe(100 + 1);
    expect(counted).toBeGreaterThanOrEqual(100);
  });

  it("never admit past the limit, however requests interleave", async () => {
    const k = key("interleaved", 1_000);
    const now = Date.parse("2026-11-22T11:02:10Z");
    const decisions = await Promise.all(Array.from({ length: 2_000 }, () => consumeLookup(env, k, { now })));
    const admitted = decisions.filter((d) => d.allowed).length;
    expect(admitted).toBeLessThanOrEqual(1_000);
    expect(admitted).toBeGreaterThanOrEqual(1_000 - 64);
    expect((await usage("interleaved", k, now))[0]!.used).toBeLessThanOrEqual(1_000);
    // 2,000 calls into one Durable Object: on a busy two-core machine this took over the 5 s default.
  }, 30_000);

  it("give an earlier minute's unspent rest back before refusing, so the month never counts requests no one served", async () => {
    // Free's month (500,000), and a minute wide enough to spend all of it at once.
    const k = key("stale-rest", 1_000_000);
    const month = (at: number) => usage("stale-rest", k, at).then((windows) => windows[1]!.used);
    const minute1 = Date.parse("2026-11-22T11:10:05Z");
    for (let i = 0; i < 10; i++) expect((await consumeLookup(env, k, { now: minute1 })).allowed).toBe(true);
    const unspent = (await month(minute1)) - 10;
    expect(unspent).toBeGreaterThan(0);
    // Other isolates spend every request the month has left.
    const minute2 = Date.parse("2026-11-22T11:11:05Z");
    expect(
      (await rateLimiterFor(env, limiterNames.lookups(k.accountId)).consume([accountMonthWindow("free")], 500_000 - 10 - unspent, minute2))
        .allowed,
    ).toBe(true);
    // This isolate's rest was never served: it goes back, and is what the next requests get.
    for (let i = 0; i < unspent; i++) expect((await consumeLookup(env, k, { now: minute2 })).allowed, `request ${i}`).toBe(true);
    expect((await consumeLookup(env, k, { now: minute2 })).allowed).toBe(false);
    expect(await month(minute2)).toBe(500_000);
  });

  it("serve a key its whole minute when a lease stamped just before it was counted in it", async () => {
    const k = key("late-lease", 6_400);
    // This isolate serves 27 requests, in batches of 1, 2, 6 and 18, all spent.
    const before = Date.parse("2026-11-22T15:00:30Z");
    for (let i = 0; i < 27; i++) expect((await consumeLookup(env, k, { now: before })).allowed).toBe(true);
    // Another isolate begins 15:01 at the key's limiter; then this isolate's next request, stamped
    // 15:00:59.990, leases a batch of 54, which the limiter counts in 15:01.
    expect(
      (
        await rateLimiterFor(env, limiterNames.keyShard(k.id, 0, 1)).consume(
          [keyMinuteWindow(k)],
          1,
          Date.parse("2026-11-22T15:01:00.010Z"),
          "lookup",
        )
      ).allowed,
    ).toBe(true);
    expect((await consumeLookup(env, k, { now: Date.parse("2026-11-22T15:00:59.990Z") })).allowed).toBe(true);
    const now = Date.parse("2026-11-22T15:01:30Z");
    expect(await lookupUsage(env, k, now)).toMatchObject({ minute: { used: 2 }, month: { used: 28 } });
    // The batch's 53 unspent are this minute's, served before the key is refused.
    let served = 2;
    while (served < 7_000 && (await consumeLookup(env, k, { now })).allowed) served++;
    expect(served).toBe(6_400);
  });

  it("give what the month would not grant back to the minute the key's limiter counted it in", async () => {
    const k = key("late-month", 6_400);
    const before = Date.parse("2026-11-22T15:10:30Z");
    for (let i = 0; i < 27; i++) expect((await consumeLookup(env, k, { now: before })).allowed).toBe(true);
    // Other keys of the account leave one request in the month.
    expect(
      (await rateLimiterFor(env, limiterNames.lookups(k.accountId)).consume([accountMonthWindow("free")], 500_000 - 27 - 1, before))
        .allowed,
    ).toBe(true);
    expect(
      (
        await rateLimiterFor(env, limiterNames.keyShard(k.id, 0, 1)).consume(
          [keyMinuteWindow(k)],
          1,
          Date.parse("2026-11-22T15:11:00.010Z"),
          "lookup",
        )
      ).allowed,
    ).toBe(true);
    // The key's limiter counts 54 in 15:11, the month grants one: 53 go back to 15:11.
    expect((await consumeLookup(env, k, { now: Date.parse("2026-11-22T15:10:59.990Z") })).allowed).toBe(true);
    expect((await lookupUsage(env, k, Date.parse("2026-11-22T15:11:30Z"))).minute.used).toBe(2);
  });

  it("count requests one by one near the limit", async () => {
    const k = key("near-limit", 10);
    const now = Date.parse("2026-11-22T11:03:10Z");
    await consumeLookup(env, k, { now });
    expect((await usage("near-limit", k, now))[0]!.used).toBe(1);
  });
});

/** The environment, with the key's (one) limiter object giving requests back as `release` does; every other call as it is. */
function keyReleasing(
  k: VerifiedKey,
  release: (stub: DurableObjectStub<RateLimiter>, args: Parameters<RateLimiter["release"]>) => Promise<void>,
): Env {
  const shard = env.RATE_LIMITER.idFromName(limiterNames.keyShard(k.id, 0, 1));
  return {
    ...env,
    RATE_LIMITER: {
      idFromName: (name: string) => env.RATE_LIMITER.idFromName(name),
      get: (id: DurableObjectId) => {
        const stub = env.RATE_LIMITER.get(id);
        if (!id.equals(shard)) return stub;
        return {
          lease: (...args: Parameters<typeof stub.lease>) => stub.lease(...args),
          usage: (...args: Parameters<typeof stub.usage>) => stub.usage(...args),
          release: (...args: Parameters<RateLimiter["release"]>) => release(stub, args),
        };
      },
    },
  } as unknown as Env;
}

describe("the monthly quota", () => {
  const month = (accountId: string, now: number) =>
    rateLimiterFor(env, limiterNames.lookups(accountId))
      .usage([accountMonthWindow("free")], now)
      .then((w) => w[0]!.used);
  const minute = (k: VerifiedKey, now: number) =>
    rateLimiterFor(env, limiterNames.keyShard(k.id, 0, 1))
      .usage([keyMinuteWindow(k)], now)
      .then((w) => w[0]!.used);

  it("is the account's: every key draws on one month, and a new key starts no month of its own", async () => {
    const now = Date.parse("2026-11-22T12:30:05Z");
    const [first, second] = [key("shared-a", null, "free", "shared"), key("shared-b", null, "free", "shared")];
    // Other keys of the account have spent all but three of the month.
    expect(
      (await rateLimiterFor(env, limiterNames.lookups("shared")).consume([accountMonthWindow("free")], 500_000 - 3, now)).allowed,
    ).toBe(true);
    expect((await consumeLookup(env, first, { now })).allowed).toBe(true);
    expect((await consumeLookup(env, first, { now })).allowed).toBe(true);
    // A key created now is no way round it.
    expect((await consumeLookup(env, second, { now })).allowed).toBe(true);
    const refused = await consumeLookup(env, second, { now });
    expect(refused).toMatchObject({ allowed: false, remaining: 0, resetAt: Date.parse("2026-12-01T00:00:00Z") });
    expect((await consumeLookup(env, first, { now })).allowed).toBe(false);
    expect(await month("shared", now)).toBe(500_000);
    // Each key's minute counts only what it served: the refused request's grant went back.
    expect([await minute(first, now), await minute(second, now)]).toEqual([2, 1]);
    // Another account's keys are untouched.
    expect((await consumeLookup(env, key("elsewhere", null), { now })).allowed).toBe(true);
  });

  it("takes back what another key of the account leased in an earlier minute and never spent, before refusing", async () => {
    // Free's month, and minutes wide enough to lease from it in large batches.
    const [busy, other] = [key("rests-a", 1_000_000, "free", "rests"), key("rests-b", 1_000_000, "free", "rests")];
    const minute1 = Date.parse("2026-11-22T12:50:05Z");
    for (let i = 0; i < 10; i++) expect((await consumeLookup(env, busy, { now: minute1 })).allowed).toBe(true);
    const unspent = (await month("rests", minute1)) - 10;
    expect(unspent).toBeGreaterThan(0);
    // Other isolates spend every request the month has left.
    const minute2 = Date.parse("2026-11-22T12:51:05Z");
    expect(
      (await rateLimiterFor(env, limiterNames.lookups("rests")).consume([accountMonthWindow("free")], 500_000 - 10 - unspent, minute2))
        .allowed,
    ).toBe(true);
    // The busy key's rest was never served: the other key gets it.
    for (let i = 0; i < unspent; i++) expect((await consumeLookup(env, other, { now: minute2 })).allowed, `request ${i}`).toBe(true);
    expect((await consumeLookup(env, other, { now: minute2 })).allowed).toBe(false);
    expect(await month("rests", minute2)).toBe(500_000);
  });

  it("once spent, refuses the account for a second without asking, then asks again", async () => {
    const k = key("spent", null);
    const now = Date.parse("2026-11-22T13:00:05Z");
    const account = rateLimiterFor(env, limiterNames.lookups(k.accountId));
    expect((await account.consume([accountMonthWindow("free")], 500_000, now)).allowed).toBe(true);
    expect(await consumeLookup(env, k, { now })).toMatchObject({ allowed: false, resetAt: Date.parse("2026-12-01T00:00:00Z") });
    // Another isolate gives one back: this one does not know for a second.
    await account.release([accountMonthWindow("free")], 1, [Date.parse("2026-11-01T00:00:00Z")]);
    expect((await consumeLookup(env, k, { now: now + MONTH_SPENT_MEMORY_MS - 1 })).allowed).toBe(false);
    expect((await consumeLookup(env, k, { now: now + MONTH_SPENT_MEMORY_MS })).allowed).toBe(true);
  });

  it("forgets a spent month when the next one begins, though refused less than a second before it", async () => {
    const k = key("month-end", null);
    const lastMoment = Date.parse("2026-11-30T23:59:59.500Z");
    expect(
      (await rateLimiterFor(env, limiterNames.lookups(k.accountId)).consume([accountMonthWindow("free")], 500_000, lastMoment)).allowed,
    ).toBe(true);
    expect(await consumeLookup(env, k, { now: lastMoment })).toMatchObject({ allowed: false, resetAt: Date.parse("2026-12-01T00:00:00Z") });
    expect(await consumeLookup(env, k, { now: Date.parse("2026-12-01T00:00:00.300Z") })).toMatchObject({
      allowed: true,
      resetAt: Date.parse("2026-12-01T00:01:00Z"),
    });
  });

  it("says the month's end when the key's minute and the account's month run out together", async () => {
    const k = key("together", 5);
    const now = Date.parse("2026-11-22T13:10:05Z");
    expect(
      (await rateLimiterFor(env, limiterNames.lookups(k.accountId)).consume([accountMonthWindow("free")], 500_000 - 5, now)).allowed,
    ).toBe(true);
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await consumeLookup(env, k, { now }));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(decisions.at(-2)!.resetAt).toBe(Date.parse("2026-12-01T00:00:00Z"));
  });

  it("refuses, not fails, when another key's limiter cannot take back that key's rest", async () => {
    const [busy, other] = [key("unreachable-a", 1_000_000, "free", "unreachable"), key("unreachable-b", 1_000_000, "free", "unreachable")];
    const minute1 = Date.parse("2026-11-22T13:20:05Z");
    for (let i = 0; i < 10; i++) await consumeLookup(env, busy, { now: minute1 });
    const minute2 = Date.parse("2026-11-22T13:21:05Z");
    expect(
      (
        await rateLimiterFor(env, limiterNames.lookups("unreachable")).consume(
          [accountMonthWindow("free")],
          500_000 - (await month("unreachable", minute1)),
          minute2,
        )
      ).allowed,
    ).toBe(true);
    const busyBroken = {
      ...env,
      RATE_LIMITER: brokenObjects(env.RATE_LIMITER, "fails", (name) => name === limiterNames.keyShard(busy.id, 0, 1)),
    };
    // The month takes the busy key's rest back, though the busy key's own object does not answer.
    expect((await consumeLookup(busyBroken, other, { now: minute2 })).allowed).toBe(true);
  });

  it("answers a request the month admitted, though the key's limiter cannot take back what the month would not grant", async () => {
    const k = key("surplus", null);
    const now = Date.parse("2026-11-22T13:30:05Z");
    // A hundred left in the month: the month grants one at a time, the key two.
    expect(
      (await rateLimiterFor(env, limiterNames.lookups(k.accountId)).consume([accountMonthWindow("free")], 500_000 - 100, now)).allowed,
    ).toBe(true);
    const releaseFails = keyReleasing(k, () => Promise.reject(new Error("release failed")));
    expect((await consumeLookup(releaseFails, k, { now })).allowed).toBe(true);
    expect((await consumeLookup(releaseFails, k, { now })).allowed).toBe(true);
    expect(await month(k.accountId, now)).toBe(500_000 - 100 + 2);
  });

  it("retries a month refusal with the key's minute as it was, what the month would not grant taken back first", async () => {
    const [k, other] = [key("slow-a", 3, "free", "slow"), key("slow-b", 1_000_000, "free", "slow")];
    const minute1 = Date.parse("2026-11-22T13:40:05Z");
    for (let i = 0; i < 10; i++) await consumeLookup(env, other, { now: minute1 });
    const minute2 = Date.parse("2026-11-22T13:41:05Z");
    // The month is spent, but for the other key's rest; this key has served two of its three this minute.
    expect(
      (
        await rateLimiterFor(env, limiterNames.lookups("slow")).consume(
          [accountMonthWindow("free")],
          500_000 - (await month("slow", minute1)),
          minute2,
        )
      ).allowed,
    ).toBe(true);
    expect((await rateLimiterFor(env, limiterNames.keyShard(k.id, 0, 1)).consume([keyMinuteWindow(k)], 2, minute2)).allowed).toBe(true);
    // The key's object takes its time to take a request back.
    const slowRelease = keyReleasing(k, async (stub, args) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return stub.release(...args);
    });
    const deferred: Promise<unknown>[] = [];
    expect((await consumeLookup(slowRelease, k, { now: minute2, defer: (work) => deferred.push(work) })).allowed).toBe(true);
    await Promise.all(deferred);
  });

  it("reports the account's month beside the key's own minute, and the tighter of the two as remaining", async () => {
    const now = Date.parse("2026-11-22T12:40:05Z");
    const [first, second] = [key("reported-a", null, "free", "reported"), key("reported-b", null, "free", "reported")];
    for (let i = 0; i < 3; i++) await consumeLookup(env, first, { now, leaseSize: 1 });
    const last = await consumeLookup(env, second, { now, leaseSize: 1 });
    // Free: 600 a minute per key, 500,000 a month for the account.
    expect(last.remaining).toBe(599);
    expect(await lookupUsage(env, second, now)).toMatchObject({
      minute: { used: 1, limit: 600 },
      month: { used: 4, limit: 500_000, resetsAt: "2026-12-01T00:00:00.000Z" },
    });
    expect(
      (await rateLimiterFor(env, limiterNames.lookups("reported")).consume([accountMonthWindow("free")], 500_000 - 4 - 10, now)).allowed,
    ).toBe(true);
    expect((await consumeLookup(env, second, { now, leaseSize: 1 })).remaining).toBe(9);
  });
});
