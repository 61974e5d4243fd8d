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

  get(id: string): V | undefined {
    return this.entries.get(id)?.value;
  }

  set(id: string, value: V, bytes: number): void {
    if (bytes > this.largest || this.entries.has(id)) return;
    this.entries.set(id, { value, bytes });
    this.total += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.budget) break;
      this.entries.delete(oldest);
      this.total -= entry.bytes;
    }
  }
}
