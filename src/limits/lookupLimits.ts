import type { Plan } from "../../schema";
import { planLimits } from "./plans";
import type { VerifiedKey } from "../keys/verify";
import { asciiBytes, isolateCache, MAP_ENTRY_BYTES, objectBytes } from "../lib/isolateCaches";
import { windowStart } from "./periods";
import type { LeaseDecision, LimitDecision, LimitWindow } from "./rateLimiter";
import { askLimiter, limiterNames } from "./rateLimiterClient";
import { type WindowUsage, windowUsage } from "./usage";
import { MINUTE_MS } from "../lib/time";

/**
 * Lookup limits: a key's per-minute limit (the key's override, else its plan's), counted per
 * key, and the plan's monthly quota, counted per account: every key of an account, revoked
 * ones included, draws on the one month, so neither more keys nor a new key is more quota.
 *
 * Shards. One Durable Object handles a few hundred calls a second. Thanks to leases (below) a
 * limiter sees one call per hundreds of requests, so one object carries a key up to
 * SHARD_CAPACITY a minute, well past Enterprise's 100,000; beyond that a key's minute is
 * split over ceil(perMinute / SHARD_CAPACITY) objects, each owning a fixed share of it (shares
 * add up to the limit exactly). A request starts at the isolate's current shard and, when
 * that share is spent, tries the others; it is refused only when every shard has refused.
 * The account's month is one object (`limiterNames.lookups`), asked once per lease.
 *
 * Leases. Waiting on the objects for every lookup would cost more than the lookup itself, so
 * an isolate takes requests in batches (RateLimiter.lease, up to LEASE_SIZE and at most 1/64
 * of what is left), first from the key's minute and then, as many as that granted, from the
 * account's month, and spends them without asking again until the batch is gone or the
 * minute is over; the unspent rest of an old batch goes back to both when the isolate next
 * leases. Leased requests are counted when granted, so neither limit is ever passed; batches
 * shrink to single requests within 64 requests of a limit, so the last ones are counted one
 * by one. An isolate that is evicted, or never serves the key again, gives nothing back, so
 * its batches start at one request and each is twice what the isolate served of the key in
 * the minute so far (or, the minute's first, in the minute before): a key served sparsely, by
 * many isolates, is counted as it is used, and a busy one reaches LEASE_SIZE within eight
 * batches.
 *
 * Remaining counts (X-RateLimit-Remaining) are of the tighter of the two: exact for a key
 * served alone (no other key of its account in use) by one isolate from one shard, an
 * estimate otherwise.
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

/** A key's per-minute window, counted in the key's own objects. */
export function keyMinuteWindow(key: Pick<VerifiedKey, "plan" | "perMinuteOverride">): LimitWindow {
  return { name: "lookup-minute", period: "minute", limit: key.perMinuteOverride ?? planLimits[key.plan].lookup.perMinute };
}

/** An account's monthly quota, counted in the account's lookup object for all its keys. */
export function accountMonthWindow(plan: Plan): LimitWindow {
  return { name: "lookup-month", period: "month", limit: planLimits[plan].lookup.perMonth };
}

/** How many RateLimiter objects share a key's minute: one per SHARD_CAPACITY a minute. */
function shardCount(minute: LimitWindow, capacity = SHARD_CAPACITY_PER_MINUTE): number {
  return Math.max(1, Math.ceil(minute.limit / capacity));
}

/** Shard `index` of `count`'s part of a limit: the parts differ by at most one and sum to it. */
export function shareOf(limit: number, index: number, count: number): number {
  return Math.floor(limit / count) + (index < limit % count ? 1 : 0);
}

interface Lease {
  /** The limits it was granted under; a plan or override change starts a new lease. */
  signature: string;
  /** The key's shard that granted it, and that shard's part of the minute. */
  limiter: string;
  shard: number;
  shards: number;
  minuteShare: LimitWindow;
  /** The account's month object, and the month window, that granted it too. */
  accountLimiter: string;
  month: LimitWindow;
  /**
   * When it was granted (the day of the key's history it counts in), and the starts of the
   * key's minute and the account's month the limiters counted it in. Stamped just before a
   * minute ends, a lease is counted in the next when another request has begun that one at the
   * limiter: it is that minute's, to be spent and given back there.
   */
  grantedAt: number;
  minute: number;
  monthStart: number;
  /** Requests granted in its minute (the leases of a minute merge), and of those not yet spent. */
  granted: number;
  tokens: number;
  /** What the limiters had left after the grant, the tighter of the two. */
  remaining: number;
  resetAt: number;
}

const leases = isolateCache<string, Lease>({
  name: "limits.leases",
  holds: "a key's id and the share of its minute this isolate holds",
  capacity: 10_000,
  entryBytes: asciiBytes(36) + objectBytes(7) + MAP_ENTRY_BYTES,
});

/**
 * How long an isolate, refused by an account's month, refuses that account's lookups without
 * asking again. A spent month would otherwise cost three limiter calls a refused request, all
 * month, for every hotlink of the account's pages, and the month is one object per account.
 */
export const MONTH_SPENT_MEMORY_MS = 1000;
const monthsSpent = isolateCache<string, { until: number; limit: number; resetAt: number }>({
  name: "limits.monthsSpent",
  holds: "an account whose month is spent, refused without asking until a second has passed",
  capacity: 10_000,
  entryBytes: asciiBytes(36) + objectBytes(3) + MAP_ENTRY_BYTES,
});

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
  if (signature === undefined) signatures.set(key, (signature = limitsSignature(key)));
  return signature;
}

function limitsSignature(key: Pick<VerifiedKey, "accountId" | "plan" | "perMinuteOverride">): string {
  return JSON.stringify([key.accountId, keyMinuteWindow(key), accountMonthWindow(key.plan)]);
}

function spendFrom(keyId: string, signature: string, minute: number): LimitDecision | undefined {
  const lease = leases.get(keyId);
  if (!lease || lease.tokens === 0 || lease.minute !== minute || lease.signature !== signature) return undefined;
  lease.tokens--;
  return { allowed: true, remaining: lease.remaining + lease.tokens, resetAt: lease.resetAt };
}

export async function consumeLookup(env: Env, key: VerifiedKey, options: LookupLimitOptions = {}): Promise<LimitDecision> {
  const now = options.now ?? Date.now();
  const signature = limitsSignature(key);
  const minute = windowStart("minute", now);
  const spend = () => spendFrom(key.id, signature, minute);

  const fromLease = spend();
  if (fromLease) return fromLease;
  const decision = await acquire(env, key, signature, minute, now, options);
  if (decision?.allowed) return decision;
  // Refused everywhere; requests running alongside may still have left leased ones here.
  return spend() ?? decision ?? { allowed: false, remaining: 0, resetAt: minute + MINUTE_MS };
}

/** Gives `count` requests back to the key's shard (its minute and its day) and to the account's month. */
function giveBack(env: Env, lease: Lease, count: number): Promise<unknown> {
  return Promise.all([giveBackToKey(env, lease, count), giveBackToMonth(env, lease, count)]);
}

/** Gives `count` requests back to the key's shard alone: its minute and its day. */
function giveBackToKey(env: Env, lease: Pick<Lease, "limiter" | "minuteShare" | "minute" | "grantedAt">, count: number): Promise<void> {
  return askLimiter(env, lease.limiter, (limiter) =>
    limiter.release([lease.minuteShare], count, [lease.minute], { counter: LOOKUP_COUNTER, grantedAt: lease.grantedAt }),
  );
}

function giveBackToMonth(env: Env, lease: Pick<Lease, "accountLimiter" | "month" | "monthStart">, count: number): Promise<void> {
  return askLimiter(env, lease.accountLimiter, (limiter) => limiter.release([lease.month], count, [lease.monthStart]));
}

/**
 * A give-back the answer need not wait for: left to run after it (waitUntil) where it can be,
 * awaited otherwise. One that fails is lost: the count runs ahead of what was served, never
 * behind, and the request it came with is answered all the same.
 */
async function afterwards(work: Promise<unknown>, options: LookupLimitOptions): Promise<void> {
  const settled = work.catch(() => undefined);
  if (options.defer) options.defer(settled);
  else await settled;
}

/**
 * Gives an old lease's unspent rest back before a retry, waiting for both, since the retry
 * asks both again: the key's part never failing the request (afterwards), the month's kept on
 * the lease when the month does not answer, to go back another time. True when it went back.
 */
async function returnRest(env: Env, lease: Lease): Promise<boolean> {
  const unspent = lease.tokens;
  lease.tokens = 0;
  const [, toMonth] = await Promise.allSettled([afterwards(giveBackToKey(env, lease, unspent), {}), giveBackToMonth(env, lease, unspent)]);
  if (toMonth.status === "fulfilled") return true;
  lease.tokens += unspent;
  return false;
}

/**
 * Takes a new lease for this request: from the key's minute, then as many as that granted
 * from the account's month, giving the key's back what the month would not grant. An isolate
 * keeps to one shard while it has room (the shard of its last lease), so that requests
 * missing the lease at the same moment all lease from the same limiter and their grants merge.
 * (They cannot wait for one another: workerd does not let a request await I/O that another
 * request started.)
 */
async function acquire(
  env: Env,
  key: VerifiedKey,
  signature: string,
  minute: number,
  now: number,
  options: LookupLimitOptions,
): Promise<LimitDecision | undefined> {
  const release = async (lease: Lease | undefined) => {
    if (lease && lease.tokens > 0) await afterwards(giveBack(env, lease, lease.tokens), options);
  };

  const minuteWindow = keyMinuteWindow(key);
  const month = accountMonthWindow(key.plan);
  const accountLimiter = limiterNames.lookups(key.accountId);
  const spent = monthsSpent.get(accountLimiter);
  if (spent && now < spent.until && spent.limit === month.limit)
    return { allowed: false, remaining: 0, resetAt: spent.resetAt, refusedBy: month.name };
  const last = leases.get(key.id);
  // What this minute, or the one before, served: an isolate back after an idle spell starts at one again.
  const recent = last !== undefined && last.signature === signature && minute - last.minute <= MINUTE_MS;
  const spentLast = recent ? last.granted - last.tokens : 0;
  const want = Math.min(options.leaseSize ?? LEASE_SIZE, Math.max(1, 2 * spentLast));
  const shards = shardCount(minuteWindow, options.shardCapacity);
  const first = last && last.shards === shards ? last.shard : Math.floor(Math.random() * shards);
  let refusal: LimitDecision | undefined;
  for (let round = 0; round < 2; round++) {
    for (let step = 0; step < shards; step++) {
      const index = (first + step) % shards;
      const granting = {
        limiter: limiterNames.keyShard(key.id, index, shards),
        minuteShare: { ...minuteWindow, limit: shareOf(minuteWindow.limit, index, shards) },
        accountLimiter,
        month,
        grantedAt: now,
      };
      const ofKey = await askLimiter(env, granting.limiter, (limiter) => limiter.lease([granting.minuteShare], want, now, LOOKUP_COUNTER));
      if (!ofKey.allowed) {
        refusal = ofKey;
        continue;
      }
      // The minute the shard counted it in: `minute`, or the next, already begun there.
      const grantedIn = { ...granting, minute: ofKey.starts[0]! };
      let ofMonth: LeaseDecision;
      try {
        ofMonth = await askLimiter(env, accountLimiter, (limiter) => limiter.lease([month], ofKey.granted, now));
      } catch (error) {
        // Nothing is served: what the key's shard counted goes back (if it answers).
        await afterwards(giveBackToKey(env, grantedIn, ofKey.granted), options);
        throw error;
      }
      // Refused by the month, the key's shard is asked again after the retry's give-backs: it
      // must have taken this back by then, so the give-back is waited for (never failing).
      if (ofMonth.granted < ofKey.granted)
        await afterwards(giveBackToKey(env, grantedIn, ofKey.granted - ofMonth.granted), ofMonth.allowed ? options : {});
      if (!ofMonth.allowed) {
        refusal = ofMonth;
        break;
      }
      // The tighter of the two: the key's whole minute (its shards') or the account's month;
      // when both are spent at once, the month's end is when a retry can succeed.
      const minuteLeft = ofKey.remaining * shards + (ofKey.granted - ofMonth.granted);
      const tighter =
        ofMonth.remaining <= minuteLeft
          ? { remaining: ofMonth.remaining, resetAt: ofMonth.resetAt }
          : { remaining: minuteLeft, resetAt: ofKey.resetAt };
      const lease: Lease = {
        signature,
        ...grantedIn,
        shard: index,
        shards,
        monthStart: ofMonth.starts[0]!,
        granted: ofMonth.granted,
        tokens: ofMonth.granted - 1,
        ...tighter,
      };
      // A lease of another minute, limits or shard is over: its unspent rest goes back.
      await release(keep(key.id, lease));
      return { allowed: true, remaining: tighter.remaining + (leases.get(key.id)?.tokens ?? 0), resetAt: tighter.resetAt };
    }
    // Refused while this isolate still holds unspent rests that no request can spend now but
    // that still count: they go back first, and the limiters are asked once more. Without
    // this, an isolate refused once would hold them, and the account be refused for the rest
    // of the month for requests it never served. What goes back: this key's rest under other
    // limits in this very minute (counted in the minute that may have refused), and, when the
    // month refused, every rest of the account's earlier minutes, any key's (a refusal by the
    // key's minute gains nothing from those).
    if (round > 0) break;
    const own = leases.get(key.id);
    const byMonth = refusal?.refusedBy === month.name;
    const rests = [...(byMonth ? leases.values() : own ? [own] : [])].filter(
      (lease) =>
        lease.tokens > 0 &&
        lease.accountLimiter === accountLimiter &&
        (lease.minute !== minute ? byMonth : lease === own && lease.signature !== signature),
    );
    if (rests.length === 0) break;
    const returned = await Promise.all(rests.map((lease) => returnRest(env, lease)));
    if (!returned.includes(true)) break;
  }
  // Never past the month's end: the next month's first requests are asked for, not refused.
  if (refusal?.refusedBy === month.name)
    monthsSpent.set(accountLimiter, {
      until: Math.min(now + MONTH_SPENT_MEMORY_MS, refusal.resetAt),
      limit: month.limit,
      resetAt: refusal.resetAt,
    });
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
 * A key's lookups in its current minute and its account's this month (every key's). Requests
 * leased to isolates count as used the moment they are leased; this isolate's own unspent ones
 * of the key are taken off, as X-RateLimit-Remaining takes them off, so the figures are exact
 * for a key one isolate serves, and may run ahead by up to one lease per other isolate and key.
 */
export async function lookupUsage(
  env: Env,
  key: Pick<VerifiedKey, "id" | "accountId" | "plan" | "perMinuteOverride">,
  now = Date.now(),
): Promise<{ minute: WindowUsage; month: WindowUsage }> {
  const [minute, month] = await Promise.all([keyMinuteUsage(env, key, now), accountLookupUsage(env, key.accountId, key.plan, now)]);
  return { minute, month: { ...month, used: Math.max(0, month.used - unspentHere(key.id, now)) } };
}

/** A key's lookups in its current minute, summed over its shards, less this isolate's unspent lease. */
export async function keyMinuteUsage(
  env: Env,
  key: Pick<VerifiedKey, "id" | "plan" | "perMinuteOverride">,
  now = Date.now(),
): Promise<WindowUsage> {
  const minuteWindow = keyMinuteWindow(key);
  const shards = shardCount(minuteWindow);
  const perShard = await Promise.all(
    Array.from({ length: shards }, (_, index) =>
      askLimiter(env, limiterNames.keyShard(key.id, index, shards), (limiter) =>
        limiter.usage([{ ...minuteWindow, limit: shareOf(minuteWindow.limit, index, shards) }], now),
      ),
    ),
  );
  return windowUsage({
    used: Math.max(0, perShard.reduce((sum, shard) => sum + (shard[0]?.used ?? 0), 0) - unspentHere(key.id, now)),
    limit: minuteWindow.limit,
    resetAt: perShard[0]?.[0]?.resetAt ?? now,
  });
}

/** An account's lookups this month, all its keys together (revoked ones too), against its plan's monthly quota. */
export async function accountLookupUsage(env: Env, accountId: string, plan: Plan, now = Date.now()): Promise<WindowUsage> {
  const [month] = await askLimiter(env, limiterNames.lookups(accountId), (limiter) => limiter.usage([accountMonthWindow(plan)], now));
  return windowUsage(month!);
}

/** What this isolate holds of the key's lease for the present minute, counted but not served. */
function unspentHere(keyId: string, now: number): number {
  const lease = leases.get(keyId);
  return lease && lease.minute === windowStart("minute", now) ? lease.tokens : 0;
}

/**
 * A key's lookups on each of the given UTC days, summed over its shards. Like the month's
 * count, a day counts requests when an isolate leases them; what a lease did not spend is
 * given back to the day it was leased in when the isolate next takes one.
 */
export async function lookupHistory(
  env: Env,
  key: Pick<VerifiedKey, "id" | "plan" | "perMinuteOverride">,
  days: number[],
): Promise<number[]> {
  const shards = shardCount(keyMinuteWindow(key));
  const perShard = await Promise.all(
    Array.from({ length: shards }, (_, index) =>
      askLimiter(env, limiterNames.keyShard(key.id, index, shards), (limiter) => limiter.history(LOOKUP_COUNTER, days)),
    ),
  );
  return days.map((_, i) => perShard.reduce((sum, shard) => sum + (shard[i] ?? 0), 0));
}
