/**
 * Isolate memory for things worth remembering between requests (parsed queries, verified
 * keys, resolved logos, clients built from configuration): a Map that holds at most
 * `capacity` entries and, when full, drops the oldest one to make room. Oldest-first is enough
 * here: entries are cheap to rebuild, and hot entries come straight back.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Stores `value`, as the newest entry; returns the entry dropped to make room for it, if one was. */
  set(key: K, value: V): [K, V] | undefined {
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

  /** Every value, oldest first. */
  values(): IterableIterator<V> {
    return this.entries.values();
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches: for rare invalidations by something other than the key. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, value] of this.entries) if (matches(value)) this.entries.delete(key);
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
  ) {
    this.entries = new BoundedCache(capacity);
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
}
