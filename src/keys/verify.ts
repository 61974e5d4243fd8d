import { eq } from "drizzle-orm";
import { accounts, apiKeys, type KeyType, type LookupFallback, type Plan } from "../../schema";
import { ExpiringCache } from "../lib/boundedCache";
import type { Db } from "../lib/db";
import { hashKey, keyTypeOf } from "./format";

export interface VerifiedKey {
  id: string;
  accountId: string;
  type: KeyType;
  plan: Plan;
  allowedOrigins: string[];
  requireAttribution: boolean;
  perMinuteOverride: number | null;
  /** The key's answer to a domain without a logo when the URL does not say (null: 404). */
  fallback: LookupFallback | null;
}

/**
 * How long an isolate trusts what it read about a key. Lookups must not wait on D1 on every
 * request; the price is that a revocation or plan change reaches a warm isolate within this time.
 */
export const KEY_CACHE_TTL_MS = 10_000;
// Keyed by the presented value, so a warm lookup costs no hashing; it lives only in isolate
// memory, like the request that brought it.
const cache = new ExpiringCache<string, VerifiedKey | null>(10_000, KEY_CACHE_TTL_MS);

/** What this isolate knows of a key without asking D1: the key, null, or undefined (not known). */
export function knownKey(presented: string, now = Date.now()): VerifiedKey | null | undefined {
  return cache.get(presented, now);
}

/** The live key behind a presented value, or null for anything unknown, malformed or revoked. */
export async function verifyKey(db: Db, presented: string, now = Date.now()): Promise<VerifiedKey | null> {
  const known = knownKey(presented, now);
  if (known !== undefined) return known;
  if (keyTypeOf(presented) === null) return null;
  const keyHash = await hashKey(presented);

  const row = await db
    .select({
      id: apiKeys.id,
      accountId: apiKeys.accountId,
      type: apiKeys.type,
      plan: accounts.plan,
      allowedOrigins: apiKeys.allowedOrigins,
      requireAttribution: apiKeys.requireAttribution,
      perMinuteOverride: apiKeys.perMinuteOverride,
      fallback: apiKeys.fallback,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(eq(apiKeys.keyHash, keyHash))
    .get();
  let key: VerifiedKey | null = null;
  if (row) {
    const { revokedAt, ...live } = row;
    if (revokedAt === null) key = live;
  }
  cache.set(presented, key, now);
  return key;
}
