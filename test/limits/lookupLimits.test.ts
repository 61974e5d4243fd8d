import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { VerifiedKey } from "../../src/keys/verify";
import { consumeLookup, lookupWindows, shareOf } from "../../src/limits/lookupLimits";

const key = (id: string, perMinuteOverride: number | null, plan: VerifiedKey["plan"] = "free"): VerifiedKey => ({
  id,
  accountId: "account",
  type: "publishable",
  plan,
  allowedOrigins: [],
  requireAttribution: false,
  perMinuteOverride,
});

describe("lookup limits", () => {
  it("take the key's override before the plan's per-minute figure, and the plan's monthly quota", () => {
    expect(lookupWindows(key("a", null))).toEqual([
      { name: "lookup-minute", period: "minute", limit: 600 },
      { name: "lookup-month", period: "month", limit: 500_000 },
    ]);
    expect(lookupWindows(key("a", 42, "enterprise"))[0]!.limit).toBe(42);
  });

  it("split a limit into shares that differ by at most one and add up to it", () => {
    for (const [limit, count] of [[10, 3], [100_000, 9], [7, 7], [5, 1]] as const) {
      const shares = Array.from({ length: count }, (_, i) => shareOf(limit, i, count));
      expect(shares.reduce((a, b) => a + b, 0)).toBe(limit);
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
    }
  });

  it("admit exactly the limit across shards under concurrency", async () => {
    const now = Date.parse("2026-11-22T10:00:10Z");
    // Capacity 4 a shard: a limit of 10 spreads over three objects (4 + 3 + 3).
    const decisions = await Promise.all(Array.from({ length: 30 }, () => consumeLookup(env, key("sharded", 10), now, 4)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0)).toBe(true);
  });

  it("never refuse while any shard has room", async () => {
    const now = Date.parse("2026-11-22T10:00:20Z");
    const results: boolean[] = [];
    for (let i = 0; i < 12; i++) results.push((await consumeLookup(env, key("sequential", 12), now, 3)).allowed);
    expect(results).toEqual(Array(12).fill(true));
    expect((await consumeLookup(env, key("sequential", 12), now, 3)).allowed).toBe(false);
  });
});
