import { limitedAddress } from "../lib/address";
import { EXPIRING_ENTRY_BYTES } from "../lib/boundedCache";
import { asciiBytes, expiringIsolateCache, MAP_ENTRY_BYTES } from "../lib/isolateCaches";
import type { Db } from "../lib/db";
import { keyTypeOf } from "./format";
import { knownKey, type VerifiedKey, verifyKey } from "./verify";
import { log } from "../lib/log";
import { HOUR_MS } from "../lib/time";

/**
 * Keys the catalogue does not know, counted per client address. A well-formed key this isolate
 * has not seen costs a SHA-256 and a D1 read, and a stream of made-up keys brings a new one
 * every time (the isolate remembers a miss for KEY_CACHE_TTL_MS, but only for that very value).
 * Each such miss is counted against its caller (limitedAddress: the address, an IPv6 one by
 * its /64) by the KEY_MISSES rate-limiting binding (wrangler.toml: 100 a
 * minute, per location); once a caller is past it, this isolate refuses that caller's keys it
 * has not found live, for a minute, without reading D1. Keys found live keep working, and other
 * callers are not touched. Without an address (a request that did not come through
 * Cloudflare's edge) nothing is counted.
 */
const REFUSAL_S = 60;

/**
 * The headers of a refusal: a rate limit's, as the spec gives them to every 429 (the body is
 * each route's "Rate limit exceeded"), the address's limit spent until its minute is over.
 */
export function unknownKeysRefusal(now = Date.now()): Record<string, string> {
  return { "Retry-After": String(REFUSAL_S), "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": String(Math.ceil(now / 1000) + REFUSAL_S) };
}

/** Addresses past the limit, refused by this isolate until their minute is over. */
const refused = expiringIsolateCache<string, true>({
  name: "keys.refusedAddresses",
  holds: "an address past the limit on unknown keys",
  capacity: 4096,
  ttlMs: REFUSAL_S * 1000,
  entryBytes: asciiBytes(64) + 8 + EXPIRING_ENTRY_BYTES + MAP_ENTRY_BYTES,
});
/**
 * Keys this isolate has found live, for an hour: never refused, however their address stands,
 * once the key cache (KEY_CACHE_TTL_MS) has let them go and they take a read again.
 */
const seenLive = expiringIsolateCache<string, true>({
  name: "keys.seenLive",
  holds: "a key this isolate found live, never refused for its address",
  capacity: 10_000,
  ttlMs: HOUR_MS,
  entryBytes: asciiBytes(35) + 8 + EXPIRING_ENTRY_BYTES + MAP_ENTRY_BYTES,
});

export type AskedKey = VerifiedKey | null | "refused";

/**
 * verifyKey for a request: "refused" when its caller is past the limit and the key would take
 * a D1 read (and was never found live here). A miss is counted after the answer (`defer`), so
 * a refusal starts with the caller's next request.
 */
export async function verifyAskedKey(
  db: Db,
  env: Pick<Env, "KEY_MISSES">,
  request: Request,
  presented: string,
  defer: (work: Promise<unknown>) => void,
  now = Date.now(),
): Promise<AskedKey> {
  const address = request.headers.get("cf-connecting-ip");
  const caller = address === null ? null : limitedAddress(address);
  const readsDatabase = caller !== null && keyTypeOf(presented) !== null && knownKey(presented, now) === undefined;
  if (readsDatabase && refused.get(caller, now) && !seenLive.get(presented, now)) return "refused";
  const key = await verifyKey(db, presented, now);
  if (key) seenLive.set(presented, true, now);
  if (readsDatabase && key === null && env.KEY_MISSES) {
    const limiter = env.KEY_MISSES;
    defer(
      Promise.resolve()
        .then(() => limiter.limit({ key: caller }))
        .then(
          ({ success }) => {
            if (!success) refused.set(caller, true, Date.now());
          },
          (error: unknown) => log.error("keys.key_misses_limiter_failed", { error }),
        ),
    );
  }
  return key;
}
