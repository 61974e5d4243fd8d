import { eq } from "drizzle-orm";
import { discoveryMisses } from "../../schema";
import { ExpiringCache } from "../lib/boundedCache";
import type { Db } from "../lib/db";

/**
 * Miss memory: a domain whose site offered nothing usable is not fetched again for
 * DISCOVERY_MISS_TTL_S. Kept in D1 (operators see and clear it; it outlives any isolate or
 * object), and the isolate remembers what it read for a minute so repeated lookups of a
 * missing domain do not read D1 each time.
 */
export interface RememberedMiss {
  missedUntil: number;
  siteName: string | null;
  brandColor: string | null;
}

const known = new ExpiringCache<string, RememberedMiss | null>(20_000, 60_000);

export async function rememberedMiss(db: Db, domain: string, now = Date.now()): Promise<RememberedMiss | null> {
  let miss = known.get(domain, now);
  if (miss === undefined) {
    const row = await db.select().from(discoveryMisses).where(eq(discoveryMisses.domain, domain)).get();
    miss = row ? { missedUntil: row.missedUntil.getTime(), siteName: row.siteName, brandColor: row.brandColor } : null;
    known.set(domain, miss, now);
  }
  return miss && miss.missedUntil > now ? miss : null;
}

export async function rememberMiss(
  db: Db,
  domain: string,
  facts: { reason: string; siteName: string | null; brandColor: string | null },
  ttlSeconds: number,
  now = Date.now(),
): Promise<void> {
  const row = { ...facts, missedUntil: new Date(now + ttlSeconds * 1000), checkedAt: new Date(now) };
  await db
    .insert(discoveryMisses)
    .values({ domain, ...row })
    .onConflictDoUpdate({ target: discoveryMisses.domain, set: row });
  known.set(domain, { missedUntil: row.missedUntil.getTime(), siteName: facts.siteName, brandColor: facts.brandColor }, now);
}

export async function forgetMiss(db: Db, domain: string): Promise<boolean> {
  known.delete(domain);
  const deleted = await db.delete(discoveryMisses).where(eq(discoveryMisses.domain, domain)).returning({ domain: discoveryMisses.domain });
  return deleted.length > 0;
}
