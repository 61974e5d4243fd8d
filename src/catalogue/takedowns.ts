import { inArray, or } from "drizzle-orm";
import { takedowns } from "../../schema";
import { EXPIRING_ENTRY_BYTES } from "../lib/boundedCache";
import type { CatalogueDb } from "../lib/db";
import { registrableDomain } from "../lib/domain";
import { asciiBytes, expiringIsolateCache, MAP_ENTRY_BYTES, objectBytes, stringBytes } from "../lib/isolateCaches";
import { MINUTE_MS } from "../lib/time";

/**
 * Whether a domain's logos may be served (docs/corrections.md, "Takedowns"): the read side,
 * which every surface asks (lookups, the asset route, the REST API, the MCP tools). Operators
 * add and remove takedowns (src/corrections/takedowns.ts). Takedowns are few, so each isolate
 * holds the whole list, read at most once a minute (and again after any purge): a lookup asks
 * a Map, never D1. A takedown is found by the domain it names and by its company's primary
 * domain, which names the company's objects (`logos/<primary>/…`).
 */
export const TAKEDOWNS_TTL_MS = MINUTE_MS;
/**
 * The most takedowns an isolate holds. Past it the list is partial: the warm path leaves every
 * lookup to the router, which asks D1 for the domains at hand (slower, never wrong).
 */
export const MAX_HELD_TAKEDOWNS = 1_000;
const REASON_CHARS = 200;

/** Domain (as named, and its company's primary) → the reason given; `partial` when the table holds more than MAX_HELD_TAKEDOWNS. */
export type TakedownList = ReadonlyMap<string, string> & { partial?: true };

const held = expiringIsolateCache<"all", TakedownList>({
  name: "catalogue.takedowns",
  holds: "every takedown: the domains named, their companies' primary domains, and the reasons",
  capacity: 1,
  ttlMs: TAKEDOWNS_TTL_MS,
  entryBytes:
    2 * MAX_HELD_TAKEDOWNS * (asciiBytes(253) + stringBytes(REASON_CHARS) + MAP_ENTRY_BYTES) +
    objectBytes(1) +
    EXPIRING_ENTRY_BYTES +
    MAP_ENTRY_BYTES,
  // Any purge drops the list: a takedown just added names a domain the old list does not.
  ofDomain: () => true,
});

/** The whole list this isolate holds, or undefined when it has none fresh or a partial one (the warm path then leaves the lookup to the router). */
export function knownTakedowns(now = Date.now()): TakedownList | undefined {
  const list = held.get("all", now);
  return list?.partial ? undefined : list;
}

/** The list, read from D1 when this isolate holds none fresh. */
export async function takedownList(db: CatalogueDb, now = Date.now()): Promise<TakedownList> {
  const known = held.get("all", now);
  if (known) return known;
  const rows = await db
    .select({ domain: takedowns.domain, primaryDomain: takedowns.primaryDomain, reason: takedowns.reason })
    .from(takedowns)
    .limit(MAX_HELD_TAKEDOWNS + 1)
    .all();
  const list: Map<string, string> & { partial?: true } = new Map<string, string>();
  if (rows.length > MAX_HELD_TAKEDOWNS) {
    rows.pop();
    list.partial = true;
  }
  for (const row of rows) {
    const reason = row.reason.slice(0, REASON_CHARS);
    list.set(row.domain, reason);
    list.set(row.primaryDomain, reason);
  }
  held.set("all", list, now);
  return list;
}

/** The reason a host's logos are taken down (itself, its registrable domain, or the company it resolved to), if one is. */
export function takenDownIn(list: TakedownList, ...domains: (string | null | undefined)[]): string | undefined {
  // Most deployments take nothing down: every warm lookup asks, and parsing a domain's public
  // suffix is a sizeable part of its CPU.
  if (list.size === 0) return undefined;
  for (const [index, domain] of domains.entries()) {
    if (!domain || domains.indexOf(domain) !== index) continue;
    const reason = list.get(domain) ?? list.get(registrableDomain(domain) ?? domain);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/** takenDownIn against the list this isolate holds, read first if needed (and past it, when it is partial). */
export async function takedownOf(db: CatalogueDb, ...domains: (string | null | undefined)[]): Promise<string | undefined> {
  const list = await takedownList(db);
  const found = takenDownIn(list, ...domains);
  if (found !== undefined || !list.partial) return found;
  const named = [...new Set(domains.flatMap((d) => (d ? [d, registrableDomain(d) ?? d] : [])))];
  return named.length === 0 ? undefined : (await takedownRows(db, named, true))[0]?.reason;
}

/** Of `primaryDomains` (companies' primary domains), those taken down: for search results. */
export async function takenDownAmong(db: CatalogueDb, primaryDomains: string[]): Promise<Set<string>> {
  const list = await takedownList(db);
  const found = new Set(primaryDomains.filter((domain) => list.has(domain)));
  if (list.partial && primaryDomains.length > 0)
    for (const row of await takedownRows(db, primaryDomains, true)) found.add(row.primaryDomain);
  return found;
}

/** The rows themselves, for operators: never cached. */
export function listTakedownRows(db: CatalogueDb) {
  return db.select().from(takedowns).orderBy(takedowns.domain).all();
}

/** The takedowns naming these domains (or, `byPrimary`, their companies' primary domains too), read past the isolate's list. */
export function takedownRows(db: CatalogueDb, domains: string[], byPrimary = false) {
  return db
    .select()
    .from(takedowns)
    .where(
      byPrimary ? or(inArray(takedowns.domain, domains), inArray(takedowns.primaryDomain, domains)) : inArray(takedowns.domain, domains),
    )
    .all();
}

/** What a taken-down logo's surfaces say: the spec's lookups in plain text, JSON in its `error`. */
export const takenDownMessage = (domain: string, reason: string) => `Logo of ${domain} taken down: ${reason}`;
