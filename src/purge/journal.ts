import { and, asc, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import { cachePurges } from "../../schema";
import type { CatalogueDb } from "../lib/db";
import { DAY_MS } from "../lib/time";

/**
 * The purge journal (schema: `cache_purges`): a purge of a domain is a row, and every isolate
 * reads the rows after the last one it saw (src/purge/purge.ts, followPurges), so a purge
 * requested anywhere (an operator's command on the Node side, a request served by another
 * isolate) reaches every isolate's memory and every data centre's Cache API that has a live
 * isolate. Only D1: the operator tools write here too.
 */
const JOURNAL_KEPT_MS = DAY_MS;

export interface JournalRow {
  id: number;
  domain: string;
  createdAt: Date;
  cdnPurgedAt: Date | null;
}

/** Records purges of `domains`; rows older than a day go as new ones come. Returns the rows' ids. */
export async function requestPurge(db: CatalogueDb, domains: string[], now = Date.now()): Promise<number[]> {
  const unique = [...new Set(domains)].filter((domain) => domain.length > 0);
  if (unique.length === 0) return [];
  const [inserted] = await db.batch([
    db
      .insert(cachePurges)
      .values(unique.map((domain) => ({ domain, createdAt: new Date(now) })))
      .returning({ id: cachePurges.id }),
    db.delete(cachePurges).where(lt(cachePurges.createdAt, new Date(now - JOURNAL_KEPT_MS))),
  ]);
  return inserted.map((row) => row.id);
}

/** The most rows an isolate reads at a time. */
const READ_AT_ONCE = 500;

/**
 * The rows after `afterId`, oldest first; or, for an isolate that has read none yet (`afterId`
 * undefined), those of the last `lookBackMs`: what its data centre's Cache API may still hold.
 * Should the table hold fewer rows than `afterId` (a database reset under a running isolate,
 * as the tests do), every row is after it.
 */
export function journalAfter(db: CatalogueDb, afterId: number | undefined, now: number, lookBackMs: number): Promise<JournalRow[]> {
  const where =
    afterId === undefined
      ? gt(cachePurges.createdAt, new Date(now - lookBackMs))
      : or(gt(cachePurges.id, afterId), sql`(SELECT coalesce(max(${cachePurges.id}), 0) FROM ${cachePurges}) < ${afterId}`);
  return db.select().from(cachePurges).where(where).orderBy(asc(cachePurges.id)).limit(READ_AT_ONCE).all();
}

/** The newest row's id (0 for none): where an isolate that found nothing recent starts. */
export async function lastJournalId(db: CatalogueDb): Promise<number> {
  const row = await db.get<{ id: number | null }>(sql`SELECT max(${cachePurges.id}) AS id FROM ${cachePurges}`);
  return row?.id ?? 0;
}

/** Takes a row's CDN purge on, unless another isolate took it: true for the one that did. */
export async function claimCdnPurge(db: CatalogueDb, id: number, now: number): Promise<boolean> {
  const claimed = await db
    .update(cachePurges)
    .set({ cdnPurgedAt: new Date(now) })
    .where(and(eq(cachePurges.id, id), isNull(cachePurges.cdnPurgedAt)))
    .returning({ id: cachePurges.id });
  return claimed.length > 0;
}

/** Gives a claimed CDN purge back when it failed, for the next isolate to try. */
export async function releaseCdnPurge(db: CatalogueDb, id: number): Promise<void> {
  await db.update(cachePurges).set({ cdnPurgedAt: null }).where(eq(cachePurges.id, id));
}
