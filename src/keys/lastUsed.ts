import { and, eq, isNull, lt, or } from "drizzle-orm";
import { apiKeys } from "../../schema";
import { EXPIRING_ENTRY_BYTES } from "../lib/boundedCache";
import { asciiBytes, expiringIsolateCache, MAP_ENTRY_BYTES } from "../lib/isolateCaches";
import type { Db } from "../lib/db";
import { log } from "../lib/log";
import { MINUTE_MS } from "../lib/time";

/**
 * "Last used" of a key, to within a few minutes. A warm lookup never writes anything: the
 * use is noted only where a request already left isolate memory (a new limiter lease, a key
 * read from D1, a REST call), and then at most once per key and isolate every
 * LAST_USED_INTERVAL_MS, the write itself deferred past the answer.
 */
export const LAST_USED_INTERVAL_MS = 5 * MINUTE_MS;

const noted = expiringIsolateCache<string, true>({
  name: "keys.lastUsedNoted",
  holds: "a key's id whose use this isolate recorded lately",
  capacity: 10_000,
  ttlMs: LAST_USED_INTERVAL_MS,
  entryBytes: asciiBytes(36) + 8 + EXPIRING_ENTRY_BYTES + MAP_ENTRY_BYTES,
});

export function noteKeyUse(db: Db, keyId: string, defer: (work: Promise<unknown>) => void, now = Date.now()): void {
  if (noted.get(keyId, now)) return;
  noted.set(keyId, true, now);
  const stale = new Date(now - LAST_USED_INTERVAL_MS);
  // Another isolate may have written it meanwhile: the condition keeps that a no-op.
  const write = db
    .update(apiKeys)
    .set({ lastUsedAt: new Date(now) })
    .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, stale))))
    .run()
    .catch((error: unknown) => log.warn("keys.last_use_not_recorded", { error }));
  defer(write);
}
