import { planLimits } from "./plans";
import type { VerifiedKey } from "../keys/verify";
import { BoundedCache } from "../lib/boundedCache";
import { windowStart } from "./periods";
import type { LimitDecision, LimitWindow } from "./rateLimiter";
import { askLimiter, limiterNames } from "./rateLimiterClient";
import { type WindowUsage, windowUsage } from "./usage";

/**
 * Lookup limits of a key: its per-minute limit (the key's override, else its plan's) and its
 * plan's monthly quota.
 *
 * Shards. One Durable Object handles a few hundred calls a second. Thanks to leases (below) a
 * limiter sees one call per hundreds of requests, so one object carries a key up to
 * SHARD_CAPACITY a minute, well past Enterprise's 100,000; beyond that a key's limits are
 * split over ceil(perMinute / SHARD_CAPACITY) objects, each owning a fixed share of both
 * windows (shares add up to the limits exactly). A request starts at the isolate's current
 * shard and, when that share is spent, tries the others; it is refused only when every shard
 * has refused.
 *
 * Leases. Waiting on the object for every lookup would cost more than the lookup itself, so
 * an isolate takes requests from the object in batches (RateLimiter.lease, up to LEASE_SIZE
 * and at most 1/64 of what is left) and spends them
 * without asking again until the batch is gone or the minute is over; the unspent rest of an
 * old batch goes back to the month's count when the isolate next leases. Leased requests are
 * counted when granted, so a key is never admitted past its limit; batches shrink to single
 * requests within 64 requests of the limit, so the last ones are counted one by one. An
 * isolate that is evicted, or never serves the key again, gives nothing back, so its batches
 * start at one request and each is twice what the isolate served of the key in the minute so
 * far (or, the minute's first, in the minute before): a key served sparsely, by many isolates,
 * is counted as it is used, and a busy one reaches LEASE_SIZE within eight batches.
 *
 * Remaining counts (X-RateLimit-Remaining) are exact for a key served by one isolate from one
 * shard and an estimate otherwise.
 */
export const SHARD_CAPACITY_PER_MINUTE = 1_000_000;
/**
 * Most requests one isolate takes from a limiter at once. At 100 the limiter calls were still
 * a tenth of a warm lookup's CPU (npm run bench); at 1,000 they are noise. Grants stay within
 * 1/64 of what is left, so this size is reached only by keys with 64,000 requests to spare.
 */
export const LEASE_SIZE = 1000;

/** The daily history lookups are counted under (RateLimiter `counter`), for usage reports. */
export const LOOKUP_COUNTER = "lookup";

export function lookupWindows(key: Pick<VerifiedKey, "plan" | "perMinuteOverride">): LimitWindow[] {
  const plan = planLimits[key.plan].lookup;
  return [
    { name: "lookup-minute", period: "minute", limit: key.perMinuteOverride ?? plan.perMinute },
    { name: "lookup-month", period: "month", limit: plan.perMonth },
  ];
}

/** How many RateLimiter objects share a key's limits: one per SHARD_CAPACITY a minute. */
function shardCount(windows: LimitWindow[], capacity = SHARD_CAPACITY_PER_MINUTE): number {
  return Math.max(1, Math.ceil(windows[0]!.limit / capacity));
}

/** Shard `index` of `count`'s part of a limit: the parts differ by at most one and sum to it. */
export function shareOf(limit: number, index: number, count: number): number {
  return Math.floor(limit / count) + (index < limit % count ? 1 : 0);
}

interface Lease {
  /** The limits it was granted under; a plan or override change starts a new lease. */
  signature: string;
  limiter: string;
  shard: number;
  shards: number;
  windows: LimitWindow[];
  grantedAt: number;
  minute: number;
  /** Requests granted in its minute (the leases of a minute merge), and of those not yet spent. */
  granted: number;
  tokens: number;
  /** What the limiter had left after the grant. */
  remaining: number;
  resetAt: number;
}

const leases = new BoundedCache<string, Lease>(10_000);

export interface LookupLimitOptions {
  now?: number;
  shardCapacity?: number;
  leaseSize?: number;
  /** Runs work the answer need not wait for (ExecutionContext.waitUntil). */
  defer?: (work: Promise<unknown>) => void;
}

/** Spends one request of this isolate's lease for the key, when it holds one for this minute. */
export function spendLease(key: VerifiedKey, now = Date.now()): LimitDecision | undefined {
  return spendFrom(key.id, signatureOf(key), windowStart("minute", now));
}

/** The limits a lease was granted under, as a string; kept per key record, which the isolate keeps too. */
const signatures = new WeakMap<VerifiedKey, string>();
function signatureOf(key: VerifiedKey): string {
  let signature = signatures.get(key);
  if (signature === undefined) signatures.set(key, (signature = JSON.stringify(lookupWindows(key))));
  return signature;
}

function spendFrom(keyId: string, signature: string, minute: number): LimitDecision | undefined {
  const lease = leases.get(keyId);
  if (!lease || lease.tokens === 0 || lease.minute !== minute || lease.signature !== signature) return undefined;
  lease.tokens--;
  return { allowed: true, remaining: lease.remaining + lease.tokens, resetAt: lease.resetAt };
}

export async function consumeLookup(env: Env, key: VerifiedKey, options: LookupLimitOptions = {}): Promise<LimitDecision> {
  const now = options.now ?? Date.now();
  const windows = lookupWindows(key);
  const signature = JSON.stringify(windows);
  const minute = windowStart("minute", now);
  const spend = () => spendFrom(key.id, signature, minute);

  const fromLease = spend();
  if (fromLease) return fromLease;
  const decision = await acquire(env, key.id, windows, signature, minute, now, options);
  if (decision?.allowed) return decision;
  // Refused everywhere; requests running alongside may still have left leased ones here.
  return spend() ?? decision ?? { allowed: false, remaining: 0, resetAt: minute + 60_000 };
}

/**
 * Takes a new lease for this request. An isolate keeps to one shard while it has room (the
 * shard of its last lease), so that requests missing the lease at the same moment all lease
 * from the same limiter and their grants merge. (They cannot wait for one another: workerd
 * does not let a request await I/O that another request started.)
 */
async function acquire(
  env: Env,
  keyId: string,
  windows: LimitWindow[],
  signature: string,
  minute: number,
  now: number,
  options: LookupLimitOptions,
): Promise<LimitDecision | undefined> {
  const giveBack = (lease: Lease) => askLimiter(env, lease.limiter, (limiter) => limiter.release(lease.windows, lease.tokens, lease.grantedAt, LOOKUP_COUNTER));
  const release = async (lease: Lease | undefined) => {
    if (!lease || lease.tokens === 0) return;
    const released = giveBack(lease);
    if (options.defer) options.defer(released);
    else await released;
  };

  const last = leases.get(keyId);
  // What this minute, or the one before, served: an isolate back after an idle spell starts at one again.
  const recent = last !== undefined && last.signature === signature && minute - last.minute <= 60_000;
  const spentLast = recent ? last.granted - last.tokens : 0;
  const want = Math.min(options.leaseSize ?? LEASE_SIZE, Math.max(1, 2 * spentLast));
  const shards = shardCount(windows, options.shardCapacity);
  const first = last && last.shards === shards ? last.shard : Math.floor(Math.random() * shards);
  let refusal: LimitDecision | undefined;
  for (let round = 0; round < 2; round++) {
    for (let step = 0; step < shards; step++) {
      const index = (first + step) % shards;
      const name = limiterNames.keyShard(keyId, index, shards);
      const share = windows.map((w) => ({ ...w, limit: shareOf(w.limit, index, shards) }));
      const decision = await askLimiter(env, name, (limiter) => limiter.lease(share, want, now, LOOKUP_COUNTER));
      if (decision.allowed) {
        const remaining = decision.remaining * shards;
        const lease = { signature, limiter: name, shard: index, shards, windows: share, grantedAt: now, minute, granted: decision.granted, tokens: decision.granted - 1, remaining, resetAt: decision.resetAt };
        // A lease of another minute, limits or shard is over: its unspent rest goes back.
        await release(keep(keyId, lease));
        return { allowed: true, remaining: remaining + (leases.get(keyId)?.tokens ?? 0), resetAt: decision.resetAt };
      }
      refusal = decision;
    }
    // Refused while this isolate still holds the unspent rest of an earlier lease, which no
    // request can spend now (another minute, other limits) but which counts against the month:
    // it goes back first, and the limiters are asked once more. Without this, an isolate refused
    // once would hold its rest, and the key be refused for the rest of the month for requests
    // it never served.
    // (A request running beside this one may have given it back already: asked again all the same.)
    const stale = leases.get(keyId);
    if (round > 0 || !stale || (stale.minute === minute && stale.signature === signature)) break;
    const unspent = { ...stale };
    stale.tokens = 0;
    if (unspent.tokens > 0) await giveBack(unspent);
  }
  return refusal;
}

/**
 * Stores a new lease, merging it into one that another request of this isolate took from the
 * same limiter meanwhile. Returns the lease that is no longer kept, whose rest must be released.
 */
function keep(keyId: string, lease: Lease): Lease | undefined {
  const current = leases.get(keyId);
  if (current && current.signature === lease.signature && current.minute === lease.minute && current.limiter === lease.limiter) {
    current.granted += lease.granted;
    current.tokens += lease.tokens;
    current.remaining = Math.min(current.remaining, lease.remaining);
    return undefined;
  }
  // A lease pushed out of a full isolate is over too.
  const dropped = leases.set(keyId, lease);
  return current ?? dropped?.[1];
}

/**
 * A key's lookups in its current minute and month, summed over its shards. Requests leased
 * to isolates count as used the moment they are leased; this isolate's own unspent ones are
 * taken off, as X-RateLimit-Remaining takes them off, so the figures are exact for a key one
 * isolate serves, and may run ahead by up to one lease per other isolate.
 */
export async function lookupUsage(
  env: Env,
  key: Pick<VerifiedKey, "id" | "plan" | "perMinuteOverride">,
  now = Date.now(),
): Promise<{ minute: WindowUsage; month: WindowUsage }> {
  const windows = lookupWindows(key);
  const shards = shardCount(windows);
  const perShard = await Promise.all(
    Array.from({ length: shards }, (_, index) =>
      askLimiter(env, limiterNames.keyShard(key.id, index, shards), (limiter) =>
        limiter.usage(
          windows.map((w) => ({ ...w, limit: shareOf(w.limit, index, shards) })),
          now,
        ),
      ),
    ),
  );
  const lease = leases.get(key.id);
  const unspent = lease && lease.minute === windowStart("minute", now) ? lease.tokens : 0;
  const [minute, month] = windows.map((window, i) =>
    windowUsage({
      used: Math.max(0, perShard.reduce((sum, shard) => sum + (shard[i]?.used ?? 0), 0) - unspent),
      limit: window.limit,
      resetAt: perShard[0]?.[i]?.resetAt ?? now,
    }),
  );
  return { minute: minute!, month: month! };
}

/**
 * A key's lookups on each of the given UTC days, summed over its shards. Like the month's
 * count, a day counts requests when an isolate leases them; what a lease did not spend is
 * given back to the day it was leased in when the isolate next takes one.
 */
export async function lookupHistory(env: Env, key: Pick<VerifiedKey, "id" | "plan" | "perMinuteOverride">, days: number[]): Promise<number[]> {
  const shards = shardCount(lookupWindows(key));
  const perShard = await Promise.all(
    Array.from({ length: shards }, (_, index) => askLimiter(env, limiterNames.keyShard(key.id, index, shards), (limiter) => limiter.history(LOOKUP_COUNTER, days))),
  );
  return days.map((_, i) => perShard.reduce((sum, shard) => sum + (shard[i] ?? 0), 0));
}
