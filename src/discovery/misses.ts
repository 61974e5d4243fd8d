import { and, eq, lte, or, sql } from "drizzle-orm";
import { discoveryMisses } from "../../schema";
import { EXPIRING_ENTRY_BYTES } from "../lib/boundedCache";
import { asciiBytes, expiringIsolateCache, MAP_ENTRY_BYTES, objectBytes, stringBytes } from "../lib/isolateCaches";
import type { Db } from "../lib/db";
import { MINUTE_MS } from "../lib/time";

/**
 * Miss memory: a domain whose site offered nothing usable is not fetched again for
 * DISCOVERY_MISS_TTL_S. Kept in D1 (operators see and clear it; it outlives any isolate or
 * object), and the isolate remembers what it read for a minute so repeated lookups of a
 * missing domain do not read D1 each time.
 *
 * Expired rows are swept as misses are written: each write looks at the SWEPT_PER_WRITE
 * oldest rows and deletes those expired, so the table holds about a TTL's worth of misses, and
 * a write reads a bounded number of rows (there is no index on `missed_until`; rowid order is
 * write order, since a miss written again is a new row).
 */
export interface RememberedMiss {
  missedUntil: number;
  siteName: string | null;
  brandColor: string | null;
}

const known = expiringIsolateCache<string, RememberedMiss | null>({
  name: "discovery.misses",
  holds: "a domain and the miss discovery remembers of it (until when, the site's name and colour), or null",
  capacity: 10_000,
  ttlMs: MINUTE_MS,
  maxBytes: 1024 * 1024,
  sizeOf: (domain, miss) =>
    asciiBytes(domain.length) +
    (miss ? objectBytes(3) + stringBytes(miss.siteName?.length ?? 0) + asciiBytes(miss.brandColor?.length ?? 0) : 8) +
    EXPIRING_ENTRY_BYTES +
    MAP_ENTRY_BYTES,
});

/** More than one: every write adds at most one row, so the sweep keeps ahead of them. */
const SWEPT_PER_WRITE = 16;

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
  const row = { domain, ...facts, missedUntil: new Date(now + ttlSeconds * 1000), checkedAt: new Date(now) };
  const oldest = sql`(SELECT rowid FROM ${discoveryMisses} ORDER BY rowid LIMIT ${SWEPT_PER_WRITE})`;
  // Deleted and inserted rather than updated: a domain missed again moves to the end of the
  // rowid order, where the sweep does not look at it until the rows before it are gone (a row
  // updated in place would keep its place, and a few domains missed day after day would stop
  // the sweep for good). Not one batch: a miss is remembered even when batches fail, and a
  // lookup between the two statements only joins the discovery writing them.
  await db
    .delete(discoveryMisses)
    .where(or(eq(discoveryMisses.domain, domain), and(lte(discoveryMisses.missedUntil, new Date(now)), sql`rowid IN ${oldest}`)));
  await db.insert(discoveryMisses).values(row).onConflictDoUpdate({ target: discoveryMisses.domain, set: row });
  known.set(domain, { missedUntil: row.missedUntil.getTime(), siteName: facts.siteName, brandColor: facts.brandColor }, now);
}

export async function forgetMiss(db: Db, domain: string): Promise<boolean> {
  known.delete(domain);
  const deleted = await db.delete(discoveryMisses).where(eq(discoveryMisses.domain, domain)).returning({ domain: discoveryMisses.domain });
  return deleted.length > 0;
}
