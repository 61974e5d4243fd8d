import { and, eq, type SQL, sql } from "drizzle-orm";
import { accounts, apiKeys, type KeyType, logoOverrides, type LookupFallback, type Plan } from "../../schema";
import { EXPIRING_ENTRY_BYTES } from "../lib/boundedCache";
import { asciiBytes, expiringIsolateCache, MAP_ENTRY_BYTES, objectBytes } from "../lib/isolateCaches";
import type { Db } from "../lib/db";
import { hashKey, keyTypeOf } from "./format";

export interface VerifiedKey {
  id: string;
  accountId: string;
  type: KeyType;
  plan: Plan;
  /** Whether the account's owner confirmed its email address (its discovery budget depends on it). */
  emailConfirmed: boolean;
  allowedOrigins: string[];
  requireAttribution: boolean;
  perMinuteOverride: number | null;
  /** The key's answer to a domain without a logo when the URL does not say (null: 404). */
  fallback: LookupFallback | null;
  /**
   * Whether the key's account has pinned any logo of its own (src/corrections/overrides.ts): read
   * with the key, so the lookups of every other account never look for one, on the warm path or off it.
   */
  overrides: boolean;
}

/**
 * How long an isolate trusts what it read about a key. Lookups must not wait on D1 on every
 * request; the price is that a revocation or plan change reaches a warm isolate within this time.
 */
export const KEY_CACHE_TTL_MS = 10_000;
// Keyed by the presented value, so a warm lookup costs no hashing; it lives only in isolate
// memory, like the request that brought it.
const cache = expiringIsolateCache<string, VerifiedKey | null>({
  name: "keys.verified",
  holds: "a presented key and its record (account, plan, allowed origins), or null for none",
  capacity: 10_000,
  ttlMs: KEY_CACHE_TTL_MS,
  // A publishable key may name a hundred allowed origins: entries are held to bytes, not count alone.
  maxBytes: 4 * 1024 * 1024,
  sizeOf: (presented, key) =>
    asciiBytes(presented.length) +
    (key
      ? objectBytes(9) +
        asciiBytes(key.id.length) +
        asciiBytes(key.accountId.length) +
        objectBytes(key.allowedOrigins.length) +
        key.allowedOrigins.reduce((sum, origin) => sum + asciiBytes(origin.length), 0)
      : 8) +
    EXPIRING_ENTRY_BYTES +
    MAP_ENTRY_BYTES,
});

/** What this isolate knows of a key without asking D1: the key, null, or undefined (not known). */
export function knownKey(presented: string, now = Date.now()): VerifiedKey | null | undefined {
  return cache.get(presented, now);
}

/**
 * Forgets a key in this isolate (after revoking it): its next request here goes back to D1.
 * Other isolates still trust what they read for up to KEY_CACHE_TTL_MS.
 */
export function forgetKey(keyId: string): void {
  cache.deleteWhere((key) => key?.id === keyId);
}

/**
 * Forgets an account's keys in this isolate (its overrides changed, so their records say
 * otherwise now). Other isolates read them again within KEY_CACHE_TTL_MS.
 */
export function forgetAccountKeys(accountId: string): void {
  cache.deleteWhere((key) => key?.accountId === accountId);
}

/** The live key behind a presented value, or null for anything unknown, malformed or revoked. */
export async function verifyKey(db: Db, presented: string, now = Date.now()): Promise<VerifiedKey | null> {
  const known = knownKey(presented, now);
  if (known !== undefined) return known;
  if (keyTypeOf(presented) === null) return null;
  const key = liveKey(await keyRecord(db, eq(apiKeys.keyHash, await hashKey(presented))));
  cache.set(presented, key, now);
  return key;
}

/**
 * A live key of an account by its id, for the account's own pages (the portal's playground),
 * which know keys by id and never hold the key itself.
 */
export async function accountKey(db: Db, accountId: string, keyId: string): Promise<VerifiedKey | null> {
  return liveKey(await keyRecord(db, and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId))!));
}

function liveKey(row: Awaited<ReturnType<typeof keyRecord>>): VerifiedKey | null {
  if (!row || row.revokedAt !== null) return null;
  const { revokedAt: _revoked, overrides, emailConfirmedAt, ...key } = row;
  return { ...key, overrides: Boolean(overrides), emailConfirmed: emailConfirmedAt !== null };
}

function keyRecord(db: Db, which: SQL) {
  return db
    .select({
      id: apiKeys.id,
      accountId: apiKeys.accountId,
      type: apiKeys.type,
      plan: accounts.plan,
      emailConfirmedAt: accounts.emailConfirmedAt,
      allowedOrigins: apiKeys.allowedOrigins,
      requireAttribution: apiKeys.requireAttribution,
      perMinuteOverride: apiKeys.perMinuteOverride,
      fallback: apiKeys.fallback,
      overrides: sql<number>`EXISTS (SELECT 1 FROM ${logoOverrides} WHERE ${logoOverrides.accountId} = ${apiKeys.accountId})`,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(which)
    .get();
}
