/**
 * Isolate memory for things worth remembering between requests (parsed queries, verified
 * keys, resolved logos, clients built from configuration): a Map that holds at most
 * `capacity` entries and, when full, drops the oldest one to make room. Oldest-first is enough
 * here: entries are cheap to rebuild, and hot entries come straight back.
 *
 * Entries whose size varies widely (a key record with a hundred allowed origins, a company's
 * long name) are held to a byte budget too: `sizeOf` says what an entry takes, and the oldest
 * go until the entries fit both. Module-level caches are made through src/lib/isolateCaches.ts,
 * which lists them and holds them to the isolate's memory budget.
 */
export interface ByteBudget<K, V> {
  maxBytes: number;
  /** What an entry takes, key and value, in bytes (src/lib/isolateCaches.ts's model). */
  sizeOf: (key: K, value: V) => number;
}

export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();
  private readonly sizes: Map<K, number> | undefined;
  private bytes = 0;

  constructor(
    private readonly capacity: number,
    private readonly budget?: ByteBudget<K, V>,
  ) {
    if (budget) this.sizes = new Map();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes held, by `sizeOf` (0 for a cache without a byte budget). */
  get heldBytes(): number {
    return this.bytes;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Stores `value`, as the newest entry; returns the entry dropped to make room for it, if one was. */
  set(key: K, value: V): [K, V] | undefined {
    if (this.budget) return this.setWithin(this.budget, key, value);
    let dropped: [K, V] | undefined;
    // A value stored again is new again: a key record refreshed every few seconds is not the
    // first to go when strangers' entries crowd in.
    if (this.entries.delete(key)) {
      this.entries.set(key, value);
      return undefined;
    }
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next().value as K;
      dropped = [oldest, this.entries.get(oldest) as V];
      this.entries.delete(oldest);
    }
    this.entries.set(key, value);
    return dropped;
  }

  private setWithin(budget: ByteBudget<K, V>, key: K, value: V): [K, V] | undefined {
    const size = budget.sizeOf(key, value);
    this.delete(key);
    // One entry larger than the whole budget is not kept: it would empty the cache for nothing.
    if (size > budget.maxBytes) return undefined;
    let dropped: [K, V] | undefined;
    while (this.entries.size > 0 && (this.entries.size >= this.capacity || this.bytes + size > budget.maxBytes)) {
      const oldest = this.entries.keys().next().value as K;
      dropped = [oldest, this.entries.get(oldest) as V];
      this.delete(oldest);
    }
    this.entries.set(key, value);
    this.sizes!.set(key, size);
    this.bytes += size;
    return dropped;
  }

  /** Every value, oldest first. */
  values(): IterableIterator<V> {
    return this.entries.values();
  }

  delete(key: K): void {
    if (!this.entries.delete(key) || !this.sizes) return;
    this.bytes -= this.sizes.get(key) ?? 0;
    this.sizes.delete(key);
  }

  /** Drops every entry whose value matches: for rare invalidations by something other than the key. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, value] of this.entries) if (matches(value)) this.delete(key);
  }

  /** Drops every entry whose key and value match (a purge of one domain's entries). */
  deleteWhereEntry(matches: (key: K, value: V) => boolean): void {
    for (const [key, value] of this.entries) if (matches(key, value)) this.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.sizes?.clear();
    this.bytes = 0;
  }

  /** The value for `key`, made by `make` and kept the first time it is asked for. */
  remember(key: K, make: () => V): V {
    let value = this.entries.get(key);
    if (value === undefined) {
      value = make();
      this.set(key, value);
    }
    return value;
  }
}

/** A BoundedCache whose entries are trusted for `ttlMs` after they were stored. */
export class ExpiringCache<K, V> {
  private readonly entries: BoundedCache<K, { value: V; expires: number }>;

  constructor(
    capacity: number,
    private readonly ttlMs: number,
    budget?: ByteBudget<K, V>,
  ) {
    this.entries = new BoundedCache(
      capacity,
      budget && { maxBytes: budget.maxBytes, sizeOf: (key, entry) => budget.sizeOf(key, entry.value) + EXPIRING_ENTRY_BYTES },
    );
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value stored less than `ttlMs` ago, or undefined. */
  get(key: K, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.expires > now ? entry.value : undefined;
  }

  /** Stores `value` for `ttlMs` (the cache's own unless given). */
  set(key: K, value: V, now = Date.now(), ttlMs = this.ttlMs): void {
    this.entries.set(key, { value, expires: now + ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches. */
  deleteWhere(matches: (value: V) => boolean): void {
    this.entries.deleteWhere((entry) => matches(entry.value));
  }

  /** Drops every entry whose key and value match, expired or not. */
  deleteWhereEntry(matches: (key: K, value: V) => boolean): void {
    this.entries.deleteWhereEntry((key, entry) => matches(key, entry.value));
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The `{value, expires}` wrapper of an ExpiringCache entry: an object of two fields. */
export const EXPIRING_ENTRY_BYTES = 56;
