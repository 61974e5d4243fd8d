import { queueRechecks } from "../discovery/freshness";
import { createDb } from "../lib/db";
import { log } from "../lib/log";
import { readPurgeJournal } from "../purge/purge";
import { recheckClaims } from "./ownership";

/**
 * The Cron Trigger's run (wrangler.toml `[triggers] crons`, every 10 minutes), each part bounded
 * and on its own, so that one failing leaves the others (docs/corrections.md, "What it costs"):
 *
 *   discovered icons   at most RECHECKS_PER_RUN (100) re-checks queued (src/discovery/freshness.ts)
 *   owners' proofs     at most CLAIMS_PER_RUN (20) verified claims looked at again (./ownership.ts)
 *   purges             the journal read, so a CDN purge no isolate took on yet is made (src/purge/purge.ts)
 */
export async function runSchedule(env: Env, scheduledTime: number): Promise<void> {
  const now = scheduledTime;
  const [rechecks, claims, journal] = await Promise.allSettled([
    queueRechecks(env, now),
    recheckClaims(env, createDb(env.DB), now),
    readPurgeJournal(env, now),
  ]);
  for (const [part, outcome] of Object.entries({ rechecks, claims, journal }))
    if (outcome.status === "rejected") log.error("schedule.part_failed", { part, error: outcome.reason });
  log.info("schedule.run", {
    rechecksQueued: rechecks.status === "fulfilled" ? rechecks.value : null,
    claims: claims.status === "fulfilled" ? claims.value : null,
  });
}
