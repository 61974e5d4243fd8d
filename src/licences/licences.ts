import { count } from "drizzle-orm";
import { Hono } from "hono";
import { logos } from "../../schema";
import type { AppEnv } from "../env";
import { createDb, type Db } from "../lib/db";
import { cachedResponse, storeResponse } from "../lib/dependencies";
import { sourceSets } from "./sources";

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

async function countLogos(db: Db): Promise<Counts> {
  return db
    .select({ sourceSet: logos.sourceSet, licence: logos.licence, logos: count() })
    .from(logos)
    .groupBy(logos.sourceSet, logos.licence)
    .all();
}

export function licencesReport(counts: Counts) {
  const bySet = Map.groupBy(counts, (row) => row.sourceSet);
  const tally = (rows: Counts = []) => ({
    logos: rows.reduce((n, row) => n + row.logos, 0),
    licences: Object.fromEntries(rows.map((row) => [row.licence, row.logos])),
  });
  const bundled = new Set<string>(sourceSets.map((s) => s.id));
  return {
    sets: sourceSets.map((source) => ({
      sourceSet: source.id,
      title: source.title,
      licence: source.licence,
      licenceUrl: source.licenceUrl,
      link: source.link,
      attribution: source.attribution,
      ...tally(bySet.get(source.id)),
    })),
    // Logos imported from manifests or found by discovery carry the licence their importer gave.
    others: [...bySet].filter(([id]) => !bundled.has(id)).map(([sourceSet, rows]) => ({ sourceSet, ...tally(rows) })),
    trademarks: TRADEMARKS,
  };
}

export const licences = new Hono<AppEnv>().get("/licences", async (c) => {
  const cached = await cachedResponse("licences", CACHE_KEY);
  if (cached) return c.json(await cached.json(), 200, { "Cache-Control": `public, max-age=${CACHE_SECONDS}` });
  const report = licencesReport(await countLogos(createDb(c.env.DB)));
  c.executionCtx.waitUntil(storeResponse("licences", CACHE_KEY, Response.json(report, { headers: { "Cache-Control": `max-age=${CACHE_SECONDS}` } })));
  return c.json(report, 200, { "Cache-Control": `public, max-age=${CACHE_SECONDS}` });
});
