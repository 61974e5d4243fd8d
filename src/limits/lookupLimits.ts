import { planLimits } from "../billing/plans";
import type { VerifiedKey } from "../keys/verify";
import type { LimitDecision, LimitWindow } from "./rateLimiter";

/**
 * Lookup limits of a key: its per-minute limit (the key's override, else its plan's) and its
 * plan's monthly quota.
 *
 * One Durable Object handles a few hundred calls a second, and Enterprise allows 100,000 a
 * minute (about 1,700 a second) on one key. So a key's limits are split over
 * ceil(perMinute / SHARD_CAPACITY) RateLimiter objects, each owning a fixed share of both
 * windows (shares add up to the limits exactly). A request starts at a random shard and, when
 * that share is spent, tries the others in turn; it is refused only when every shard has
 * refused. Shares never grow back within a window, so the key admits exactly its limit, never
 * more, and never refuses while any share is left. Keys up to SHARD_CAPACITY a minute (every
 * plan but the largest) have one object and exact remaining counts; for sharded keys
 * X-RateLimit-Remaining is the answering shard's remainder scaled by the shard count.
 */
export const SHARD_CAPACITY_PER_MINUTE = 12_000;

export function lookupWindows(key: VerifiedKey): LimitWindow[] {
  const plan = planLimits[key.plan].lookup;
  return [
    { name: "lookup-minute", period: "minute", limit: key.perMinuteOverride ?? plan.perMinute },
    { name: "lookup-month", period: "month", limit: plan.perMonth },
  ];
}

/** Shard `index` of `count`'s part of a limit: the parts differ by at most one and sum to it. */
export function shareOf(limit: number, index: number, count: number): number {
  return Math.floor(limit / count) + (index < limit % count ? 1 : 0);
}

export async function consumeLookup(
  env: Env,
  key: VerifiedKey,
  now = Date.now(),
  shardCapacity = SHARD_CAPACITY_PER_MINUTE,
): Promise<LimitDecision> {
  const windows = lookupWindows(key);
  const shards = Math.max(1, Math.ceil(windows[0]!.limit / shardCapacity));
  const first = Math.floor(Math.random() * shards);
  let refusal: LimitDecision | undefined;
  for (let step = 0; step < shards; step++) {
    const index = (first + step) % shards;
    const name = shards === 1 ? `key:${key.id}` : `key:${key.id}:shard:${index}:of:${shards}`;
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
    const share = windows.map((w) => ({ ...w, limit: shareOf(w.limit, index, shards) }));
    const decision = await limiter.consume(share, 1, now);
    if (decision.allowed) return { ...decision, remaining: decision.remaining * shards };
    refusal = decision;
  }
  return refusal!;
}
