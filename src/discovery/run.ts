import { and, eq, gt, inArray } from "drizzle-orm";
import { companyDomains, logos } from "../../schema";
import { DISCOVERED_REFRESH_MS, DISCOVERED_SOURCE_SET } from "../catalogue/provenance";
import { recordChanges } from "../catalogue/changes";
import { findCompanyByDomain } from "../catalogue/companies";
import { readVars } from "../env";
import { createDb, type Db } from "../lib/db";
import { type DiscoveryAsker, type SpentBudget, spendDiscovery } from "../limits/discoveryLimits";
import { type CurrentLogo, discoverDomain, type DiscoveryReport, score } from "./discover";
import { parseResolve } from "./fetcher";
import { forgetMiss, rememberedMiss, rememberMiss } from "./misses";
import { log } from "../lib/log";
import { requestPurge } from "../purge/journal";

/**
 * One discovery of one registrable domain, as the coordinator runs it: nothing is fetched
 * when the domain is settled already (the catalogue has it, or its miss is remembered),
 * unless this is the 30-day refresh of a discovered logo. Misses are remembered by cause: a
 * site that answered with nothing usable for DISCOVERY_MISS_TTL_S (a refresh of a logo another
 * refresh has just fetched again does nothing either); one that did not answer as itself (no
 * answer, a 5xx, a bot check or a parking page) for UNANSWERED_MISS_TTL_S, minutes, since an
 * outage says nothing of the site's icon; a discovery that failed (a bug, D1 or R2 down) for
 * FAILED_MISS_TTL_S at most. Lookups meanwhile do not each fetch the site again, yet the
 * domain is tried again soon.
 */
export type DiscoveryOutcome =
  | { status: "found"; companyId: number }
  | {
      status: "nothing";
      reason: string;
      siteName: string | null;
      brandColor: string | null;
      /** Until when the miss is remembered (Unix ms); null when it is not (a refresh, a discovery that failed). */
      missedUntil: number | null;
      /** A budget of the asker's (its account's, its address's, the deployment's) was spent for the day: nothing was fetched. */
      budgetSpent?: SpentBudget;
    };

const FAILED_MISS_TTL_S = 600;
export const UNANSWERED_MISS_TTL_S = 300;

export async function runDiscovery(
  env: Env,
  domain: string,
  options: { refresh: boolean; asker?: DiscoveryAsker | undefined },
  now = Date.now(),
): Promise<DiscoveryOutcome> {
  const db = createDb(env.DB);
  if (!options.refresh) {
    const company = await findCompanyByDomain(db, domain);
    if (company) return { status: "found", companyId: company.companyId };
    const miss = await rememberedMiss(db, domain, now);
    if (miss)
      return {
        status: "nothing",
        reason: "remembered miss",
        siteName: miss.siteName,
        brandColor: miss.brandColor,
        missedUntil: miss.missedUntil,
      };
  } else {
    // Every isolate serving a stale logo queues its refresh, and lookups see the old fetch
    // time for minutes (caches): the first refresh settles it, the others find it fresh.
    const fresh = await freshDiscoveredLogo(db, domain, now);
    if (fresh) return { status: "found", companyId: fresh.companyId };
  }
  // Only a discovery that will fetch the site is counted (a limiter that does not answer
  // fails it, as limits fail closed); past the day's budget nothing is fetched or remembered.
  const spent = options.asker ? await spendDiscovery(env, options.asker, now) : ({ allowed: true } as const);
  if (!spent.allowed) {
    return {
      status: "nothing",
      reason: `the ${spent.budget}'s discoveries for the day are spent`,
      siteName: null,
      brandColor: null,
      missedUntil: null,
      budgetSpent: { budget: spent.budget, resetAt: spent.resetAt },
    };
  }
  let report: DiscoveryReport;
  try {
    report = await discoverAndRecord(env, domain, options, now);
  } catch (error) {
    if (!options.refresh) {
      const ttl = Math.min(FAILED_MISS_TTL_S, readVars(env).DISCOVERY_MISS_TTL_S);
      await rememberMiss(db, domain, { reason: "discovery failed", siteName: null, brandColor: null }, ttl, now).catch((unremembered) =>
        log.error("discovery.failure_not_remembered", { domain, error: unremembered }),
      );
    }
    // The coordinator logs it and answers a miss.
    throw error;
  }
  if (report.outcome === "found") return { status: "found", companyId: report.chosen!.companyId };
  const missedUntil = options.refresh ? null : now + missTtl(report, readVars(env)) * 1000;
  return {
    status: "nothing",
    reason: report.reason ?? "no usable icon",
    siteName: report.page ? report.name : null,
    brandColor: report.brandColor,
    missedUntil,
  };
}

/**
 * Discovers now, whatever is settled, and records the outcome: a found logo clears the
 * domain's remembered miss; nothing found is remembered, except by a refresh, which keeps the
 * logo it has and notes that the site was asked (refreshed). What operators run
 * (`npm run admin -- discover`), and the coordinator's work.
 */
export async function discoverAndRecord(
  env: Env,
  domain: string,
  options: { refresh: boolean },
  now = Date.now(),
): Promise<DiscoveryReport> {
  const db = createDb(env.DB);
  const vars = readVars(env);
  const current = options.refresh ? await currentDiscoveredLogo(db, domain) : undefined;
  const report = await discoverDomain(env, db, domain, parseResolve(vars.DISCOVERY_RESOLVE, vars.PUBLIC_BASE_URL), new Date(now), current);
  log.info("discovery.outcome", { ...summary(report), refresh: options.refresh });
  if (report.outcome === "found") {
    await forgetMiss(db, domain);
    // A refresh that replaced the icon: entered in the public change log, and the domain's cached answers purged.
    if (options.refresh && report.chosen?.written === "updated") {
      await recordChanges(db, [{ domain, change: "icon", detail: "the site's icon changed", method: "refresh" }], new Date(now));
      await requestPurge(db, [domain], now);
    }
  } else if (options.refresh) {
    // An icon that could not be stored is tried again by the next day's lookups.
    if (!report.storageFailed) await refreshed(db, domain, now);
  } else {
    const facts = { reason: report.reason ?? "no usable icon", siteName: report.page ? report.name : null, brandColor: report.brandColor };
    await rememberMiss(db, domain, facts, missTtl(report, vars), now);
  }
  return report;
}

/** A site with nothing usable is remembered for the day; one that did not answer, or whose icon could not be stored, briefly. */
function missTtl(report: DiscoveryReport, vars: ReturnType<typeof readVars>): number {
  if (report.storageFailed) return Math.min(FAILED_MISS_TTL_S, vars.DISCOVERY_MISS_TTL_S);
  if (report.unanswered) return Math.min(UNANSWERED_MISS_TTL_S, vars.DISCOVERY_MISS_TTL_S);
  return vars.DISCOVERY_MISS_TTL_S;
}

/** The domain's discovered logo as a refresh must match it (discoverDomain), if it has one. */
async function currentDiscoveredLogo(db: Db, domain: string): Promise<CurrentLogo | undefined> {
  const row = await db
    .select({ width: logos.width, height: logos.height, format: logos.format, sourceUrl: logos.sourceUrl })
    .from(logos)
    .innerJoin(companyDomains, eq(companyDomains.companyId, logos.companyId))
    .where(and(eq(companyDomains.domain, domain), eq(logos.sourceSet, DISCOVERED_SOURCE_SET)))
    .get();
  return (
    row && { score: score("link icon", { width: row.width, height: row.height, vector: row.format === "svg" }), sourceUrl: row.sourceUrl }
  );
}

/** The domain's company, when its discovered logo was fetched within DISCOVERED_REFRESH_MS. */
async function freshDiscoveredLogo(db: Db, domain: string, now: number): Promise<{ companyId: number } | undefined> {
  return db
    .select({ companyId: logos.companyId })
    .from(logos)
    .innerJoin(companyDomains, eq(companyDomains.companyId, logos.companyId))
    .where(
      and(
        eq(companyDomains.domain, domain),
        eq(logos.sourceSet, DISCOVERED_SOURCE_SET),
        gt(logos.fetchedAt, new Date(now - DISCOVERED_REFRESH_MS)),
      ),
    )
    .get();
}

/**
 * A refresh that found nothing (or no answer) keeps the discovered logo, and moves its fetch
 * time on all the same: the logo is asked about again in 30 days. Left as it was, the logo
 * would stay stale, and every isolate serving it would queue a crawl of the site every day.
 */
async function refreshed(db: Db, domain: string, now: number): Promise<void> {
  const owner = db.select({ id: companyDomains.companyId }).from(companyDomains).where(eq(companyDomains.domain, domain));
  await db
    .update(logos)
    .set({ fetchedAt: new Date(now) })
    .where(and(inArray(logos.companyId, owner), eq(logos.sourceSet, DISCOVERED_SOURCE_SET)));
}

/** What the logs keep of a discovery: enough to tell why, without every candidate's detail. */
function summary(report: DiscoveryReport) {
  return {
    domain: report.domain,
    outcome: report.outcome,
    reason: report.reason,
    nameSource: report.nameSource,
    chosen: report.chosen?.url.slice(0, 200),
    candidates: report.candidates.length,
    requests: report.spent.requests,
    bytes: report.spent.bytes,
  };
}
