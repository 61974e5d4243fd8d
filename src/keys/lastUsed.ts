import { and, eq, isNull, lt, or } from "drizzle-orm";
import { apiKeys } from "../../schema";
import { ExpiringCache } from "../lib/boundedCache";
import type { Db } from "../lib/db";

/**
 * "Last used" of a key, to within a few minutes. A warm lookup never writes anything: the
 * use is noted only where a request already left isolate memory (a new limiter lease, a key
 * read from D1, a REST call), and then at most once per key and isolate every
 * LAST_USED_INTERVAL_MS, the write itself deferred past the answer.
 */
export const LAST_USED_INTERVAL_MS = 5 * 60_000;

const noted = new ExpiringCache<string, true>(10_000, LAST_USED_INTERVAL_MS);

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
    .catch((error: unknown) => console.warn("keys: last use not recorded", error instanceof Error ? error.message : error));
  defer(write);
}
