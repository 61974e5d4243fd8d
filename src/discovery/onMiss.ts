import { DISCOVERED_REFRESH_MS, type StoredLogoSource } from "../catalogue/provenance";
import { readVars } from "../env";
import { asciiBytes, isolateCache, MAP_ENTRY_BYTES } from "../lib/isolateCaches";
import { type CatalogueDb, catalogueWriter, createDb } from "../lib/db";
import { registrableDomain } from "../lib/domain";
import { type DiscoveryRequester, discoveryAsker, knownSpent, rememberSpent } from "../limits/discoveryLimits";
import { askDiscovery } from "./coordinatorClient";
import { rememberedMiss } from "./misses";
import { queueRefresh } from "./queue";
import { log } from "../lib/log";
import { DAY_MS } from "../lib/time";

/**
 * What every surface that takes a domain (the lookup routes, the REST lookup, the MCP tools)
 * does when the catalogue has no logo for it: ask the domain's coordinator to discover one,
 * waiting at most DISCOVERY_BUDGET_MS, within the budgets of discoveries of the asking account,
 * its address and the deployment (src/limits/discoveryLimits.ts). Never throws: a discovery
 * that fails is a miss.
 *
 * A budget the isolate knows is spent for the day answers at once, a miss nothing remembers:
 * no Durable Object is asked and no database read. The isolate learns it from the coordinator's
 * answer when a discovery is refused.
 */
export type MissAnswer =
  | { found: true }
  | {
      found: false;
      /** What the site said of itself when it was looked at, for the monogram. */
      site: { name: string | null; brandColor: string | null } | null;
      /**
       * When the site may be asked again (Unix ms), so an answer standing in for its logo lasts
       * no longer: a remembered miss's end; `now` while a discovery is under way or after one
       * failed; null when it never is (discovery off, no registrable domain).
       */
      retryAt: number | null;
    };

const NEVER_ASKED: MissAnswer = { found: false, site: null, retryAt: null };

export async function discoverOnMiss(env: Env, host: string, requester: DiscoveryRequester, now = Date.now()): Promise<MissAnswer> {
  const vars = readVars(env);
  const domain = registrableDomain(host);
  if (vars.DISCOVERY === "off" || !domain) return NEVER_ASKED;
  const asker = discoveryAsker(vars, requester);
  if (knownSpent(asker, now)) return { found: false, site: null, retryAt: now };
  try {
    const miss = await rememberedMiss(createDb(env.DB), domain, now);
    if (miss) return { found: false, site: { name: miss.siteName, brandColor: miss.brandColor }, retryAt: miss.missedUntil };
    // Counted against the asker's daily budget only if it starts a discovery that fetches the
    // site; past the budget the answer is a miss nothing remembers (missedUntil null).
    const outcome = await askDiscovery(env, domain, { budgetMs: vars.DISCOVERY_BUDGET_MS, asker });
    if (outcome.status === "found") return { found: true };
    if (outcome.status === "pending") return { found: false, site: null, retryAt: now };
    if (outcome.budgetSpent) rememberSpent(asker, outcome.budgetSpent);
    return { found: false, site: { name: outcome.siteName, brandColor: outcome.brandColor }, retryAt: outcome.missedUntil ?? now };
  } catch (error) {
    log.error("discovery.unavailable", { domain, error });
    // Nothing remembered it: the next lookup asks again.
    return { found: false, site: null, retryAt: now };
  }
}

/**
 * discoverOnMiss for a caller that reads the catalogue again when a logo was found: the
 * session to read it with (one on the primary, where the discovery wrote and a replica may not
 * have caught up yet), or null when nothing was found.
 */
export async function discoveredCatalogue(env: Env, host: string, requester: DiscoveryRequester): Promise<CatalogueDb | null> {
  return (await discoverOnMiss(env, host, requester)).found ? catalogueWriter(env.DB) : null;
}

// One refresh request per domain and isolate a day is plenty: the queue does the rest.
const refreshAsked = isolateCache<string, number>({
  name: "discovery.refreshAsked",
  holds: "a domain whose stale discovered logo this isolate asked to refresh, and when",
  capacity: 4_000,
  entryBytes: asciiBytes(253) + 8 + MAP_ENTRY_BYTES,
});

/**
 * A discovered logo older than 30 days is served as it is and fetched again in the
 * background. Cheap enough for the warm path: a comparison, and a queue message at most once
 * a day per domain and isolate.
 */
export function refreshIfStale(
  env: Env,
  logo: { source: StoredLogoSource; fetchedAt: number | null; domain: string },
  defer: (work: Promise<unknown>) => void,
  now = Date.now(),
): void {
  if (logo.source !== "discovered" || logo.fetchedAt === null || now - logo.fetchedAt < DISCOVERED_REFRESH_MS) return;
  if (readVars(env).DISCOVERY === "off" || (refreshAsked.get(logo.domain) ?? 0) > now - DAY_MS) return;
  refreshAsked.set(logo.domain, now);
  defer(queueRefresh(env, logo.domain).catch((error) => log.error("discovery.refresh_not_queued", { domain: logo.domain, error })));
}
