import { cors } from "hono/cors";
import { and, count, eq, ne, or } from "drizzle-orm";
import { Hono } from "hono";
import { companies, companyDomains, logos } from "../../schema";
import type { AppEnv } from "../lib/context";
import type { Db } from "../lib/db";
import { cachedResponse, storeResponse } from "../lib/dependencies";
import { CHANGES, sourceSets } from "./sources";
import { DAY_S } from "../lib/time";

/**
 * GET /licences: under which licence each logo is served and the credit each licence asks for,
 * with the live count of logos per source set and licence. Public, like the logos themselves.
 */
export const TRADEMARKS =
  "The brands the logos depict are trademarks of their respective owners, and their use is subject to each owner's brand guidelines. " +
  "A logo's licence covers the drawing, not the trademark; showing a logo implies no endorsement by, or affiliation with, its owner.";

// A GROUP BY over every logo: cheap for the bundled catalogue, a scan at a million logos, so
// the answer is shared through the Cache API for a few minutes.
const CACHE_SECONDS = 300;
const CACHE_KEY = "https://licences.logo-lookup.internal/v1";

type Counts = Array<{ sourceSet: string; licence: string; logos: number }>;
/** A logo of a bundled set under a licence other than its set's (simple-icons' projects' own logos). */
type Exception = { sourceSet: string; licence: string; companyName: string; domain: string };

async function countLogos(db: Db): Promise<Counts> {
  return db
    .select({ sourceSet: logos.sourceSet, licence: logos.licence, logos: count() })
    .from(logos)
    .groupBy(logos.sourceSet, logos.licence)
    .all();
}

// Some hundred logos in the bundled catalogue; bounded all the same, since an operator's
// imports may stamp a bundled set's id on rows of their own.
const MAX_EXCEPTIONS = 1_000;

async function licenceExceptions(db: Db): Promise<Exception[]> {
  return db
    .select({ sourceSet: logos.sourceSet, licence: logos.licence, companyName: companies.name, domain: companyDomains.domain })
    .from(logos)
    .innerJoin(companies, eq(companies.id, logos.companyId))
    .innerJoin(companyDomains, and(eq(companyDomains.companyId, logos.companyId), eq(companyDomains.isPrimary, true)))
    .where(or(...sourceSets.map((set) => and(eq(logos.sourceSet, set.id), ne(logos.licence, set.licence)))))
    .orderBy(logos.sourceSet, companies.name, logos.id)
    .limit(MAX_EXCEPTIONS)
    .all();
}

/** The licence's text on SPDX's list, where every id a logo records is published. */
const spdxUrl = (licence: string) => `https://spdx.org/licenses/${encodeURIComponent(licence)}.html`;

/**
 * A logo under its project's own licence is credited one by one: CC BY and CC BY-SA ask for the
 * author, the licence's address and the changes made; MIT, Apache and GPL for their notice,
 * which the licence's address names.
 */
function credit(exception: Exception, set: { title: string; link: string }) {
  return {
    companyName: exception.companyName,
    domain: exception.domain,
    licence: exception.licence,
    licenceUrl: spdxUrl(exception.licence),
    attribution: `${exception.companyName} logo from ${set.title} (${set.link}), licensed under ${exception.licence} (${spdxUrl(exception.licence)}). ${CHANGES}`,
  };
}

export function licencesReport(counts: Counts, exceptions: Exception[] = []) {
  const bySet = Map.groupBy(counts, (row) => row.sourceSet);
  const tally = (rows: Counts = []) => ({
    logos: rows.reduce((n, row) => n + row.logos, 0),
    licences: Object.fromEntries(rows.map((row) => [row.licence, row.logos])),
  });
  const bundled = new Set<string>(sourceSets.map((s) => s.id));
  const exceptionsBySet = Map.groupBy(exceptions, (row) => row.sourceSet);
  return {
    sets: sourceSets.map((source) => ({
      sourceSet: source.id,
      title: source.title,
      licence: source.licence,
      licenceUrl: source.licenceUrl,
      link: source.link,
      attribution: source.attribution,
      ...tally(bySet.get(source.id)),
      // Logos of the set under a licence of their own, each with the credit that licence asks for.
      credits: (exceptionsBySet.get(source.id) ?? []).map((exception) => credit(exception, source)),
    })),
    // Logos imported from manifests or found by discovery carry the licence their importer gave.
    others: [...bySet].filter(([id]) => !bundled.has(id)).map(([sourceSet, rows]) => ({ sourceSet, ...tally(rows) })),
    trademarks: TRADEMARKS,
  };
}

const PUBLIC = { "Cache-Control": `public, max-age=${CACHE_SECONDS}` };

// Any page may read it, as any page may show the logos it credits: a simple GET needs no
// preflight; one that sends a header of its own gets one.
export const licences = new Hono<AppEnv>().use(cors({ origin: "*", allowMethods: ["GET"], maxAge: DAY_S })).get("/", async (c) => {
  const cached = await cachedResponse("licences", CACHE_KEY);
  if (cached) return c.json(await cached.json(), 200, PUBLIC);
  const db = c.var.ctx.db;
  const [counts, exceptions] = await Promise.all([countLogos(db), licenceExceptions(db)]);
  const report = licencesReport(counts, exceptions);
  c.var.ctx.defer(
    storeResponse("licences", CACHE_KEY, Response.json(report, { headers: { "Cache-Control": `max-age=${CACHE_SECONDS}` } })),
  );
  return c.json(report, 200, PUBLIC);
});
