import { and, asc, eq, lt } from "drizzle-orm";
import { companyDomains, logos } from "../../schema";
import { DISCOVERED_SOURCE_SET } from "../catalogue/provenance";
import { readVars } from "../env";
import { createDb, type Db } from "../lib/db";
import { sha256Hex } from "../lib/encoding";
import { log } from "../lib/log";
import { DAY_MS } from "../lib/time";
import { ICON } from "./discover";
import { fetchLimited, NOT_MODIFIED, parseResolve } from "./fetcher";
import { discoverAndRecord } from "./run";

/**
 * Discovered icons kept fresh (docs/discovery.md#freshness): the Cron Trigger queues, at most
 * RECHECKS_PER_RUN a run, the discovered logos fetched RECHECK_AFTER_MS ago or more, oldest
 * first; the queue's consumer asks each icon's URL again with the validators it was fetched with
 * (If-None-Match, If-Modified-Since). A 304, or the same bytes, keeps the logo and moves its
 * fetch time on; different bytes mean the site changed its mark, and the site is read again as
 * a refresh does (src/discovery/run.ts), which replaces the logo and enters the change in the
 * public change log. An icon that does not answer is left to the 30-day refresh of lookups
 * (./onMiss.ts, refreshIfStale), which this keeps from firing for every logo it reaches in time.
 */
export const RECHECK_AFTER_MS = 7 * DAY_MS;
export const RECHECKS_PER_RUN = 100;

/** How discovery records an icon that was inline in its page (src/discovery/discover.ts): there is no URL to ask again. */
const INLINE = "(inline data: URL)";

/** Queues the re-checks due now; returns how many. */
export async function queueRechecks(env: Pick<Env, "DB" | "DISCOVERY_QUEUE">, now = Date.now()): Promise<number> {
  const due = await createDb(env.DB)
    .select({ domain: companyDomains.domain })
    .from(logos)
    .innerJoin(companyDomains, and(eq(companyDomains.companyId, logos.companyId), eq(companyDomains.isPrimary, true)))
    .where(and(eq(logos.sourceSet, DISCOVERED_SOURCE_SET), lt(logos.fetchedAt, new Date(now - RECHECK_AFTER_MS))))
    .orderBy(asc(logos.fetchedAt))
    .limit(RECHECKS_PER_RUN)
    .all();
  if (due.length > 0) await env.DISCOVERY_QUEUE.sendBatch(due.map(({ domain }) => ({ body: { domain, recheck: true } })));
  return due.length;
}

export type RecheckOutcome = "unchanged" | "replaced" | "kept" | "unreachable" | "fresh" | "none";

/** One queued re-check: the icon asked for again, conditionally; the site read again when it changed. */
export async function recheckDiscovered(env: Env, domain: string, now = Date.now()): Promise<RecheckOutcome> {
  const db = createDb(env.DB);
  const row = await db
    .select({
      id: logos.id,
      sourceUrl: logos.sourceUrl,
      sourceHash: logos.sourceHash,
      etag: logos.sourceEtag,
      lastModified: logos.sourceLastModified,
      fetchedAt: logos.fetchedAt,
    })
    .from(logos)
    .innerJoin(companyDomains, and(eq(companyDomains.companyId, logos.companyId), eq(companyDomains.isPrimary, true)))
    .where(and(eq(companyDomains.domain, domain), eq(logos.sourceSet, DISCOVERED_SOURCE_SET)))
    .get();
  if (!row) return "none";
  // Queued twice (a run before this one's message was taken): the first settled it.
  if (row.fetchedAt && now - row.fetchedAt.getTime() < RECHECK_AFTER_MS) return "fresh";
  const vars = readVars(env);
  if (row.sourceUrl === null || row.sourceUrl.endsWith(INLINE)) return refreshed(env, domain, now);
  const fetched = await fetchLimited(
    row.sourceUrl,
    { ...ICON, conditional: { ifNoneMatch: row.etag, ifModifiedSince: row.lastModified } },
    { resolve: parseResolve(vars.DISCOVERY_RESOLVE, vars.PUBLIC_BASE_URL) },
  );
  if (!fetched.ok && fetched.reason === NOT_MODIFIED) {
    await confirmed(db, row.id, now, {});
    return "unchanged";
  }
  if (!fetched.ok) {
    log.info("discovery.recheck_unreachable", { domain, reason: fetched.reason });
    return "unreachable";
  }
  if ((await sha256Hex(fetched.bytes)) === row.sourceHash) {
    await confirmed(db, row.id, now, { etag: fetched.etag, lastModified: fetched.lastModified });
    return "unchanged";
  }
  return refreshed(env, domain, now);
}

/** The icon is as it was: fetched and verified now, with the validators the site gave this time. */
async function confirmed(db: Db, logoId: number, now: number, validators: { etag?: string | null; lastModified?: string | null }) {
  await db
    .update(logos)
    .set({
      fetchedAt: new Date(now),
      verifiedAt: new Date(now),
      ...(validators.etag !== undefined ? { sourceEtag: validators.etag } : {}),
      ...(validators.lastModified !== undefined ? { sourceLastModified: validators.lastModified } : {}),
    })
    .where(eq(logos.id, logoId));
}

/** The site read again as a refresh does: a changed mark replaces the logo (and is logged), an unchanged one stays. */
async function refreshed(env: Env, domain: string, now: number): Promise<RecheckOutcome> {
  const report = await discoverAndRecord(env, domain, { refresh: true }, now);
  return report.chosen?.written === "updated" ? "replaced" : "kept";
}
