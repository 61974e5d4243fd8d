import { BoundedCache, ExpiringCache } from "./boundedCache";
import { RecentBytes } from "./recent";

/**
 * Every cache an isolate keeps between requests, in one list: its name, what it holds, how many
 * entries (or bytes) it keeps, and the most one entry can take. Together, full of their largest
 * entries at once (what strangers' junk requests would make of them), they stay within
 * ISOLATE_CACHE_BUDGET_BYTES, half of the isolate's 128 MB: the other half is the requests'
 * (an image being resized is a few megabytes). test/lib/isolateCaches.test.ts holds them to it.
 *
 * A cache made inside a function, for one piece of work, is no isolate cache and is not listed.
 * WeakMaps keyed by objects these caches hold are not listed either: their entries go with them.
 *
 * Sizes follow one model, deliberately generous (V8's real figures are smaller):
 *   a string of n characters      2n + 24 bytes (two bytes a character: any text a person wrote)
 *   an ASCII string of n          n + 24 bytes (URLs as the runtime gives them, domains, keys, hashes)
 *   a number, boolean or null     8 bytes in its slot
 *   an object                     24 bytes, and 16 a field (slot and hidden-class share)
 *   a Map entry                   64 bytes beside its key and value
 */
export const ISOLATE_MEMORY_BYTES = 128 * 1024 * 1024;
export const ISOLATE_CACHE_BUDGET_BYTES = ISOLATE_MEMORY_BYTES / 2;

/** Bytes of a string of up to `chars` characters, by the model above. */
export const stringBytes = (chars: number) => 2 * chars + 24;
/** Bytes of an object of `fields` fields, beside what its strings take. */
export const objectBytes = (fields: number) => 24 + 16 * fields;
export const MAP_ENTRY_BYTES = 64;
/** An ASCII string (URLs, domains, keys, hashes: V8 keeps them a byte a character) of up to `chars` characters. */
export const asciiBytes = (chars: number) => chars + 24;

interface Described {
  /** Unique, `room.what`: the name tests and logs use. */
  name: string;
  /** What an entry is, in a few words. */
  holds: string;
  /** Entries kept at most (for a byte cache, see isolateByteCache). */
  capacity: number;
}

/**
 * What a cache holds of a domain, for a purge (purgeDomainHere): whether an entry answers for
 * the domain (its logo, its objects, what is known of it). A cache without it holds nothing a
 * domain's purge must drop (parsed URLs, keys, limits).
 */
type OfDomain<K, V> = (key: K, value: V, domain: string) => boolean;

/** A cache whose entries each take at most `entryBytes`, key and value together, by the model above. */
export interface CountedCacheSpec<K = unknown, V = unknown> extends Described {
  entryBytes: number;
  ofDomain?: OfDomain<K, V>;
}

/** A cache whose entries vary in size: held to `maxBytes` by `sizeOf` as well as to its capacity. */
export interface SizedCacheSpec<K, V> extends Described {
  maxBytes: number;
  sizeOf: (key: K, value: V) => number;
  ofDomain?: OfDomain<K, V>;
}

export interface RegisteredCache extends Described {
  /** What the cache holds at worst: capacity × entryBytes, or its byte budget. */
  readonly worstBytes: number;
  /** How many entries it holds now. */
  size(): number;
  /** Drops every entry: tests start from an empty isolate. */
  clear(): void;
  /** Drops the entries of a domain; absent for caches that hold none (ofDomain). */
  dropDomain?: (domain: string) => void;
}

const registry = new Map<string, RegisteredCache>();

function register(
  described: Described,
  worstBytes: number,
  cache: { readonly size: number; clear(): void },
  dropDomain?: (domain: string) => void,
): void {
  if (registry.has(described.name)) throw new Error(`isolate cache ${described.name} is made twice`);
  const { name, holds, capacity } = described;
  registry.set(name, { name, holds, capacity, worstBytes, size: () => cache.size, clear: () => cache.clear(), dropDomain });
}

const isSized = <K, V>(spec: CountedCacheSpec<K, V> | SizedCacheSpec<K, V>): spec is SizedCacheSpec<K, V> => "maxBytes" in spec;

/** How a keyed cache drops a domain's entries, when its spec says which they are. */
const dropper =
  <K, V>(cache: { deleteWhereEntry(matches: (key: K, value: V) => boolean): void }, ofDomain: OfDomain<K, V> | undefined) =>
  (domain: string) =>
    ofDomain && cache.deleteWhereEntry((key, value) => ofDomain(key, value, domain));

/** A cache of at most `capacity` entries (and, sized, `maxBytes`), oldest dropped first. */
export function isolateCache<K, V>(spec: CountedCacheSpec<K, V> | SizedCacheSpec<K, V>): BoundedCache<K, V> {
  const cache = new BoundedCache<K, V>(spec.capacity, isSized(spec) ? spec : undefined);
  register(spec, isSized(spec) ? spec.maxBytes : spec.capacity * spec.entryBytes, cache, spec.ofDomain && dropper(cache, spec.ofDomain));
  return cache;
}

/** A cache whose entries are trusted for `ttlMs` after they were stored; entryBytes counts the value's expiry wrapper. */
export function expiringIsolateCache<K, V>(spec: (CountedCacheSpec<K, V> | SizedCacheSpec<K, V>) & { ttlMs: number }): ExpiringCache<K, V> {
  const cache = new ExpiringCache<K, V>(spec.capacity, spec.ttlMs, isSized(spec) ? spec : undefined);
  register(spec, isSized(spec) ? spec.maxBytes : spec.capacity * spec.entryBytes, cache, spec.ofDomain && dropper(cache, spec.ofDomain));
  return cache;
}

/** A cache of values within a byte budget: `capacity` is the bytes, each entry counted at its size and overhead. */
export function isolateByteCache<V>(spec: Described & { ofDomain?: (id: string, domain: string) => boolean }): RecentBytes<V> {
  const cache = new RecentBytes<V>(spec.capacity);
  const { ofDomain } = spec;
  register(spec, spec.capacity, cache, ofDomain && ((domain) => cache.deleteWhere((id) => ofDomain(id, domain))));
  return cache;
}

/** Every isolate cache made so far (each is made when its module loads). */
export function isolateCaches(): RegisteredCache[] {
  return [...registry.values()];
}

/**
 * Drops what this isolate holds of a domain, in every cache that holds answers for one (its
 * resolutions, overrides, rendered images, asset answers, takedowns). Other isolates drop theirs
 * when they read the purge journal (src/purge/purge.ts); until then their own TTLs bound them.
 */
export function purgeDomainHere(domain: string): void {
  for (const cache of registry.values()) cache.dropDomain?.(domain);
}

/** Empties every isolate cache: what a fresh isolate would have. For tests. */
export function clearIsolateCaches(): void {
  for (const cache of registry.values()) cache.clear();
}
