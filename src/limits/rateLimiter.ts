import { DurableObject } from "cloudflare:workers";
import { DAY_MS, HISTORY_DAYS, type Period, windowEnd, windowStart } from "./periods";

/** Far from the limit, a lease takes at most this fraction (1/n) of what is left. */
export const LEASE_FRACTION = 64;

export interface LimitWindow {
  /** What is counted, e.g. `lookup`; one object may count several things. */
  name: string;
  period: Period;
  limit: number;
}

export interface LimitDecision {
  allowed: boolean;
  /** Requests left in the tightest window after this one (0 when refused). */
  remaining: number;
  /** Unix milliseconds when the tightest (or refusing) window resets. */
  resetAt: number;
  /** The window that refused, when one did. */
  refusedBy?: string;
}

/**
 * Counts requests of one subject (a key, an account) in calendar windows. A Durable Object
 * runs one call at a time and SQLite writes are synchronous, so check-and-count is atomic:
 * at a limit of 10, 30 concurrent calls let exactly 10 through.
 *
 * Windows are forgotten once over. For usage reports, a call may also name a `counter`
 * (`lookup`, `mcp_request`) whose admitted requests are added to a per-UTC-day history, kept
 * HISTORY_DAYS days; it is written in the same call that counts, so it costs no extra call.
 */
export class RateLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => {
      this.sql.exec(`CREATE TABLE IF NOT EXISTS windows (
        name TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (name, window_start)
      ) WITHOUT ROWID`);
      this.sql.exec(`CREATE TABLE IF NOT EXISTS daily (
        counter TEXT NOT NULL,
        day INTEGER NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (counter, day)
      ) WITHOUT ROWID`);
    });
  }

  /**
   * Counts `cost` against every window, or against none when any would go over its limit.
   * `now` comes from the caller so that every window agrees on one clock; `counter` names the
   * daily history the admitted requests are added to, if any.
   */
  consume(windows: LimitWindow[], cost = 1, now = Date.now(), counter?: string): LimitDecision {
    const states = windows.map((window) => ({ window, ...this.current(window, now) }));

    // Of the windows that refuse, the one that lasts longest says when a retry can succeed.
    const refused = states.filter((s) => s.used + cost > s.window.limit).reduce<(typeof states)[number] | undefined>(
      (latest, s) => (latest && latest.resetAt >= s.resetAt ? latest : s),
      undefined,
    );
    if (refused) {
      return { allowed: false, remaining: 0, resetAt: refused.resetAt, refusedBy: refused.window.name };
    }

    let tightest: { remaining: number; resetAt: number } = { remaining: Number.MAX_SAFE_INTEGER, resetAt: now };
    for (const s of states) {
      this.sql.exec(
        `INSERT INTO windows (name, window_start, count) VALUES (?, ?, ?)
         ON CONFLICT (name, window_start) DO UPDATE SET count = count + excluded.count`,
        s.window.name,
        s.start,
        cost,
      );
      // Older windows of this name are finished; forget them.
      this.sql.exec("DELETE FROM windows WHERE name = ? AND window_start < ?", s.window.name, s.start);
      const remaining = s.window.limit - s.used - cost;
      // Equally tight windows are all spent at once: the one that lasts longest resets them.
      if (remaining < tightest.remaining || (remaining === tightest.remaining && s.resetAt > tightest.resetAt)) tightest = { remaining, resetAt: s.resetAt };
    }
    if (counter !== undefined) this.addToHistory(counter, cost, now);
    return { allowed: true, ...tightest };
  }

  /**
   * A window's present state as of `now`. A caller's clock may lag the object's by a little (a
   * request stamped before a round trip, another colo's clock): once a later window of the name
   * has begun here, a request stamped in the one before counts in it, instead of starting the
   * finished window again from nothing, which the object no longer holds.
   */
  private current(window: LimitWindow, now: number): { start: number; used: number; resetAt: number } {
    const start = windowStart(window.period, now);
    const latest = this.sql
      .exec<{ window_start: number; count: number }>("SELECT window_start, count FROM windows WHERE name = ? ORDER BY window_start DESC LIMIT 1", window.name)
      .toArray()[0];
    if (latest && latest.window_start >= start) return { start: latest.window_start, used: latest.count, resetAt: windowEnd(window.period, latest.window_start) };
    return { start, used: 0, resetAt: windowEnd(window.period, now) };
  }

  private addToHistory(counter: string, count: number, now: number): void {
    const day = windowStart("day", now);
    this.sql.exec(
      `INSERT INTO daily (counter, day, count) VALUES (?, ?, ?)
       ON CONFLICT (counter, day) DO UPDATE SET count = max(count + excluded.count, 0)`,
      counter,
      day,
      count,
    );
    this.sql.exec("DELETE FROM daily WHERE counter = ? AND day < ?", counter, day - HISTORY_DAYS * DAY_MS);
  }

  /**
   * Counts up to `want` requests at once and hands them to the caller to spend without asking
   * again (a lease). Far from the limit a lease is at most 1/LEASE_FRACTION of what is left, so
   * that leases outstanding elsewhere can never hold back much; within LEASE_FRACTION requests
   * of the limit every lease is a single request, which makes the count exact where it matters.
   */
  lease(windows: LimitWindow[], want: number, now = Date.now(), counter?: string): LimitDecision & { granted: number } {
    let left = Number.MAX_SAFE_INTEGER;
    for (const window of windows) left = Math.min(left, window.limit - this.current(window, now).used);
    const granted = Math.max(1, Math.min(want, Math.floor(left / LEASE_FRACTION)));
    const decision = this.consume(windows, granted, now, counter);
    return { ...decision, granted: decision.allowed ? granted : 0 };
  }

  /** Gives back requests a lease counted but never spent, in the windows (and the day) it was granted in. */
  release(windows: LimitWindow[], unspent: number, grantedAt: number, counter?: string): void {
    if (counter !== undefined) {
      this.sql.exec("UPDATE daily SET count = max(count - ?, 0) WHERE counter = ? AND day = ?", unspent, counter, windowStart("day", grantedAt));
    }
    for (const window of windows) {
      this.sql.exec(
        "UPDATE windows SET count = max(count - ?, 0) WHERE name = ? AND window_start = ?",
        unspent,
        window.name,
        windowStart(window.period, grantedAt),
      );
    }
  }

  /** Current counts without counting anything: for usage reports. */
  usage(windows: LimitWindow[], now = Date.now()): Array<{ name: string; used: number; limit: number; resetAt: number }> {
    return windows.map((window) => {
      const row = this.sql
        .exec<{ count: number }>(
          "SELECT count FROM windows WHERE name = ? AND window_start = ?",
          window.name,
          windowStart(window.period, now),
        )
        .toArray()[0];
      return { name: window.name, used: row?.count ?? 0, limit: window.limit, resetAt: windowEnd(window.period, now) };
    });
  }

  /** Per-day counts of `counter` on the given day starts (UTC midnights); days without requests are 0. */
  history(counter: string, days: number[]): number[] {
    if (days.length === 0) return [];
    const rows = this.sql
      .exec<{ day: number; count: number }>("SELECT day, count FROM daily WHERE counter = ? AND day BETWEEN ? AND ?", counter, days[0]!, days[days.length - 1]!)
      .toArray();
    const byDay = new Map(rows.map((row) => [row.day, row.count]));
    return days.map((day) => byDay.get(day) ?? 0);
  }
}
