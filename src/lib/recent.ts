/** What an entry costs beside its bytes and its id: generous for the asset route's header pairs. */
const ENTRY_OVERHEAD = 2048;

/**
 * Recently used values kept in the isolate within a byte budget, oldest dropped first: the
 * layer in front of the Cache API for small, immutable things such as resized logos.
 */
export class RecentBytes<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private total = 0;

  constructor(
    private readonly budget: number,
    /** Larger values are not kept: one big logo must not push out hundreds of small ones. */
    private readonly largest = budget / 64,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  /** Drops every entry whose id matches (a purge of one domain's entries). */
  deleteWhere(matches: (id: string) => boolean): void {
    for (const [id, entry] of this.entries) {
      if (!matches(id)) continue;
      this.entries.delete(id);
      this.total -= entry.bytes;
    }
  }

  get(id: string): V | undefined {
    return this.entries.get(id)?.value;
  }

  set(id: string, value: V, size: number): void {
    if (size > this.largest || this.entries.has(id)) return;
    // An entry holds more than its bytes: its id, its headers, the map's own record. Counted
    // at its bytes alone, a budget of 16 MB let 150,000 tiny images hold 230 MB.
    const bytes = size + ENTRY_OVERHEAD + id.length * 2;
    this.entries.set(id, { value, bytes });
    this.total += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.budget) break;
      this.entries.delete(oldest);
      this.total -= entry.bytes;
    }
  }
}
