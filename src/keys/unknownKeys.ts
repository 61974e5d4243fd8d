import { ExpiringCache } from "../lib/boundedCache";
import type { Db } from "../lib/db";
import { keyTypeOf } from "./format";
import { knownKey, type VerifiedKey, verifyKey } from "./verify";

/**
 * Keys the catalogue does not know, counted per client address. A well-formed key this isolate
 * has not seen costs a SHA-256 and a D1 read, and a stream of made-up keys brings a new one
 * every time (the isolate remembers a miss for KEY_CACHE_TTL_MS, but only for that very value).
 * Each such miss is counted against its caller (addressBlock: the address, an IPv6 one by its
 * /64) by the KEY_MISSES rate-limiting binding (wrangler.toml: 100 a
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
const refused = new ExpiringCache<string, true>(4096, REFUSAL_S * 1000);
/**
 * Keys this isolate has found live, for an hour: never refused, however their address stands,
 * once the key cache (KEY_CACHE_TTL_MS) has let them go and they take a read again.
 */
const seenLive = new ExpiringCache<string, true>(10_000, 3_600_000);

export type AskedKey = VerifiedKey | null | "refused";

/**
 * Who is counted for a request: its address (`CF-Connecting-IP`), an IPv6 one by its /64,
 * which one host or customer usually holds whole (counted address by address, 2^64 addresses
 * would be 2^64 limits), an IPv4-mapped one as the IPv4 address it is.
 */
export function addressBlock(address: string | null): string | null {
  if (!address?.includes(":")) return address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  const [head = "", tail] = address.toLowerCase().split("%")[0]!.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill("0"), ...tailGroups];
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}

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
  const caller = addressBlock(request.headers.get("cf-connecting-ip"));
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
          (error: unknown) => console.error("unknown keys: the KEY_MISSES limiter failed", error),
        ),
    );
  }
  return key;
}
