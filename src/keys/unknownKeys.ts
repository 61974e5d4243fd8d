import { ExpiringCache } from "../lib/boundedCache";
import type { Db } from "../lib/db";
import { keyTypeOf } from "./format";
import { knownKey, type VerifiedKey, verifyKey } from "./verify";

/**
 * Keys the catalogue does not know, counted per client address. A well-formed key this isolate
 * has not seen costs a SHA-256 and a D1 read, and a stream of made-up keys brings a new one
 * every time (the isolate remembers a miss for KEY_CACHE_TTL_MS, but only for that very value).
 * Each such miss is counted against the caller's address (`CF-Connecting-IP`; for IPv6, its
 * /64) by the KEY_MISSES rate-limiting binding (wrangler.toml: 100 a minute, per location);
 * once an address is past it, this isolate refuses that address's keys it does not already know, for a minute,
 * without reading D1. Keys it knows keep working, and other addresses are not touched. Without
 * an address (a request that did not come through Cloudflare's edge) nothing is counted.
 */
export const UNKNOWN_KEYS_REFUSED = "Too many unknown keys from this address; try again in a minute";
export const UNKNOWN_KEYS_RETRY_AFTER_S = 60;

/** Addresses past the limit, refused by this isolate until their minute is over. */
const refused = new ExpiringCache<string, true>(4096, UNKNOWN_KEYS_RETRY_AFTER_S * 1000);

export type AskedKey = VerifiedKey | null | "refused";

/**
 * What one caller holds: an IPv4 address, or the /64 of an IPv6 one, which a single host or
 * customer usually has whole (counted address by address, 2^64 addresses would be 2^64 limits).
 */
export function addressBlock(address: string | null): string | null {
  if (!address?.includes(":")) return address;
  const [head = "", tail] = address.toLowerCase().split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill("0"), ...tailGroups];
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}

/**
 * verifyKey for a request: "refused" when its address is past the limit and the key would take
 * a D1 read. A miss is counted after the answer (`defer`), so a refusal starts with the
 * address's next request.
 */
export async function verifyAskedKey(
  db: Db,
  env: Pick<Env, "KEY_MISSES">,
  request: Request,
  presented: string,
  defer: (work: Promise<unknown>) => void,
  now = Date.now(),
): Promise<AskedKey> {
  const address = addressBlock(request.headers.get("cf-connecting-ip"));
  const readsDatabase = address !== null && keyTypeOf(presented) !== null && knownKey(presented, now) === undefined;
  if (readsDatabase && refused.get(address, now)) return "refused";
  const key = await verifyKey(db, presented, now);
  if (readsDatabase && key === null && env.KEY_MISSES) {
    defer(
      env.KEY_MISSES.limit({ key: address }).then(
        ({ success }) => {
          if (!success) refused.set(address, true, Date.now());
        },
        (error: unknown) => console.error("unknown keys: the KEY_MISSES limiter failed", error),
      ),
    );
  }
  return key;
}
