import { lte, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { retiredObjects } from "../../schema";
import type { CatalogueDb } from "../lib/db";
import { DAY_MS } from "../lib/time";

/**
 * The objects of an image a write replaced outlive it: a lookup's redirect to the logo's asset
 * is public for a day (the spec's `max-age=86400`), and the resolve caches add minutes, so a
 * page, browser or CDN holding a redirect from before the replacement must still find its
 * image. They are retired for two days, then deleted by a later catalogue write (an import,
 * a discovery, a re-render), at most RETIRED_PER_SWEEP at a time.
 */
export const RETIRED_FOR_MS = 2 * DAY_MS;
const RETIRED_PER_SWEEP = 1000;

/**
 * For a write's batch: `replaced` retired, and `stored` (the content-addressed keys the write
 * references, which an earlier write may have retired) taken off the list, in its transaction.
 */
export function retirements(db: CatalogueDb, replaced: string[], stored: string[], now: Date): BatchItem<"sqlite">[] {
  const statements: BatchItem<"sqlite">[] = [];
  if (stored.length > 0)
    statements.push(
      db.delete(retiredObjects).where(sql`${retiredObjects.key} IN (SELECT value FROM json_each(${JSON.stringify(stored)}))`),
    );
  if (replaced.length > 0) {
    const deleteAfter = now.getTime() + RETIRED_FOR_MS;
    statements.push(
      db
        .insert(retiredObjects)
        .select(
          db
            .select({ key: sql<string>`value`.as("key"), deleteAfter: sql<Date>`${deleteAfter}`.as("delete_after") })
            .from(sql`json_each(${JSON.stringify(replaced)})`)
            // SQLite parses an upsert's INSERT … SELECT only with a WHERE clause.
            .where(sql`true`),
        )
        .onConflictDoUpdate({ target: retiredObjects.key, set: { deleteAfter: sql`excluded.delete_after` } }),
    );
  }
  return statements;
}

/** Which of `keys` are retired: objects kept for redirects cached before their image was replaced. */
export async function retiredAmong(db: CatalogueDb, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db
    .select({ key: retiredObjects.key })
    .from(retiredObjects)
    .where(sql`${retiredObjects.key} IN (SELECT value FROM json_each(${JSON.stringify(keys)}))`);
  return new Set(rows.map((row) => row.key));
}

/**
 * Deletes the retired objects whose time has come, then their rows. A write that stores one of
 * the keys again meanwhile takes its row off the list, and the object it put stays deleted
 * only if it raced this sweep between its put and its commit: the same race any two writes of
 * one image have.
 */
export async function sweepRetired(db: CatalogueDb, bucket: { delete(keys: string[]): Promise<unknown> }, now: Date): Promise<number> {
  const due = (
    await db.select({ key: retiredObjects.key }).from(retiredObjects).where(lte(retiredObjects.deleteAfter, now)).limit(RETIRED_PER_SWEEP)
  ).map((row) => row.key);
  if (due.length === 0) return 0;
  await bucket.delete(due);
  await db
    .delete(retiredObjects)
    .where(sql`${retiredObjects.key} IN (SELECT value FROM json_each(${JSON.stringify(due)})) AND ${lte(retiredObjects.deleteAfter, now)}`);
  return due.length;
}
