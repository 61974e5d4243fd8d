import { forgetCachedResolution, RESOLVE_TTL_SECONDS } from "../catalogue/resolveLogo";
import { domainCacheTag } from "../lib/cacheTags";
import { checkedVars } from "../env";
import { clock } from "../lib/context";
import { createDb } from "../lib/db";
import { purgeDomainHere } from "../lib/isolateCaches";
import { log } from "../lib/log";
import { SECOND_MS } from "../lib/time";
import { purgeCdn } from "./cdn";
import { claimCdnPurge, journalAfter, type JournalRow, lastJournalId, releaseCdnPurge, requestPurge } from "./journal";

/**
 * Purging a domain (docs/corrections.md#purge): every cached answer the service controls about
 * it dropped, wherever it is held.
 *
 *   this isolate      every isolate cache that holds answers for a domain
 *                     (src/lib/isolateCaches.ts, purgeDomainHere): at once
 *   other isolates    they cannot be reached from here; each reads the purge journal every
 *                     PURGE_POLL_MS after a request's answer (followPurges) and drops the
 *                     domain then. An isolate that serves no request holds nothing anyone sees;
 *                     past that, its caches' TTLs bound what it holds (a minute at most for
 *                     resolutions, ten seconds for overrides)
 *   Cache API         this data centre's resolution of the domain at once; every other data
 *                     centre's when one of its isolates reads the journal, and, on a zone, by
 *                     the cache tag every entry carries (`logo-domain:<domain>`). Rendered images
 *                     and asset answers are named by content-addressed keys, so a changed logo is
 *                     never answered from them; a takedown is refused before them
 *   the CDN           Cloudflare's purge API, by tag and by prefix (./cdn.ts), once per purge:
 *                     by the first isolate to see its journal row
 *
 * So a change made anywhere reaches every isolate that serves traffic within PURGE_POLL_MS (and
 * the time its answer takes): "within seconds". The operator tools (Node) only write the
 * journal (./journal.ts, requestPurge).
 */
export const PURGE_POLL_MS = 10 * SECOND_MS;

/** Purges `domains` everywhere: the journal, this isolate and data centre now, the CDN. */
export async function purgeDomains(env: Env, domains: string[], now = clock.now()): Promise<void> {
  const unique = [...new Set(domains)];
  if (unique.length === 0) return;
  const ids = await requestPurge(createDb(env.DB), unique, now);
  await Promise.all(unique.map(purgeHere));
  await purgeCdnOf(
    env,
    unique.map((domain, i) => ({ id: ids[i]!, domain })),
    now,
  );
}

/** This isolate's caches and this data centre's cached resolution. */
async function purgeHere(domain: string): Promise<void> {
  purgeDomainHere(domain);
  await forgetCachedResolution(domain);
}

/** The CDN purge of journal rows nobody has done yet, claimed row by row so that one isolate does each. */
async function purgeCdnOf(env: Env, rows: Pick<JournalRow, "id" | "domain">[], now: number): Promise<void> {
  const vars = checkedVars(env);
  if (!vars.ok || vars.value.CDN_PURGE_ZONE_ID === "" || !env.CDN_PURGE_API_TOKEN) return;
  const db = createDb(env.DB);
  const claimed: typeof rows = [];
  for (const row of rows) if (await claimCdnPurge(db, row.id, now)) claimed.push(row);
  if (claimed.length === 0) return;
  const outcome = await purgeCdn(vars.value, env.CDN_PURGE_API_TOKEN, [...new Set(claimed.map((row) => row.domain))]);
  if (outcome === "failed") for (const row of claimed) await releaseCdnPurge(db, row.id);
  else
    log.info("purge.cdn", { domains: claimed.map((row) => row.domain), outcome, tags: claimed.map((row) => domainCacheTag(row.domain)) });
}

/** Where this isolate is in the journal: when it reads next, and the last row it has read. */
const follower: { nextRead: number; lastId: number | undefined } = { nextRead: 0, lastId: undefined };

/**
 * Reads the journal after an answer, at most every PURGE_POLL_MS per isolate: one comparison
 * on the way of every request (the warm lookup's too), one D1 read per isolate every ten
 * seconds after it, never in a request's way.
 */
export function followPurges(env: Env, defer: (work: Promise<unknown>) => void, now = clock.now()): void {
  // A clock set back (tests move it) reads again rather than waiting out a time it will not see.
  if (now < follower.nextRead && follower.nextRead - now <= PURGE_POLL_MS) return;
  follower.nextRead = now + PURGE_POLL_MS;
  defer(readJournal(env, now).catch((error) => log.warn("purge.journal_unread", { error })));
}

async function readJournal(env: Env, now: number): Promise<void> {
  const db = createDb(env.DB);
  // A new isolate has nothing to drop of its own, but its data centre's Cache API may still
  // hold what purges of the last few minutes were about.
  const rows = await journalAfter(db, follower.lastId, now, RESOLVE_TTL_SECONDS * SECOND_MS);
  if (rows.length === 0) {
    follower.lastId ??= await lastJournalId(db);
    return;
  }
  const domains = [...new Set(rows.map((row) => row.domain))];
  await Promise.all(domains.map(purgeHere));
  follower.lastId = rows.at(-1)!.id;
  await purgeCdnOf(
    env,
    rows.filter((row) => row.cdnPurgedAt === null),
    now,
  );
}

/** Reads the journal now, whenever it was last read: for the scheduled run and the tests. */
export async function readPurgeJournal(env: Env, now = clock.now()): Promise<void> {
  follower.nextRead = now + PURGE_POLL_MS;
  await readJournal(env, now);
}

/** Forgets where this isolate is in the journal, as a new isolate would be: for tests, whose database is emptied under a running isolate. */
export function forgetJournalPosition(): void {
  follower.nextRead = 0;
  follower.lastId = undefined;
}
