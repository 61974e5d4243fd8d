import { DurableObject } from "cloudflare:workers";
import { DAY_MS, HISTORY_DAYS, type Period, windowEnd, windowStart } from "./periods";
import { MINUTE_MS } from "../lib/time";

/**
 * How long an object keeps a window after it ends. Requests stamped in it may still arrive (a
 * round trip, another colo's clock); `current` counts them in it, or in a later one begun here,
 * rather than in the same window started again from nothing.
 */
const LATE_MS = MINUTE_MS;

/** The key, in the object's synchronous KV, of the end of the latest window counted here. */
const WINDOWS_END = "windowsEnd";

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

export interface LeaseDecision extends LimitDecision {
  /** Requests counted for the caller to spend (0 when refused). */
  granted: number;
  /**
   * The start of the window each was counted in, one a window: that of the caller's `now`, or
   * a later one already begun here (RateLimiter `current`).
   */
  starts: number[];
}

/**
 * Counts requests of one subject (a key, an account) in calendar windows. A Durable Object
 * runs one call at a time and SQLite writes are synchronous, so check-and-count is atomic:
 * at a limit of 10, 30 concurrent calls let exactly 10 through.
 *
 * Windows are forgotten once over. For usage reports, a call may also name a `counter`
 * (`lookup`, `mcp_request`) whose admitted requests are added to a per-UTC-day history, kept
 * HISTORY_DAYS days; it is written in the same call that counts, so it costs no extra call.
 *
 * Many objects are named after something seen once (an email typed at sign-in, a visitor's
 * address), so an object deletes everything it stores once nothing of it is needed: its alarm,
 * set for LATE_MS after its latest window ends, finds every window over and no day of history
 * kept, or else wakes it again when the last of them ends.
 */
export class RateLimiter extends DurableObject<Env> {
  /** When the object's alarm is set for, as this instance last set or read it; null: none. */
  private alarmAt: number | null = null;
  private tablesCreated = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  /** The object's SQLite, its tables created on first use: again after `alarm` deleted them. */
  private get sql(): SqlStorage {
    const sql = this.ctx.storage.sql;
    if (!this.tablesCreated) {
      sql.exec(`CREATE TABLE IF NOT EXISTS windows (
        name TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (name, window_start)
      ) WITHOUT ROWID`);
      sql.exec(`CREATE TABLE IF NOT EXISTS daily (
        counter TEXT NOT NULL,
        day INTEGER NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (counter, day)
      ) WITHOUT ROWID`);
      this.tablesCreated = true;
    }
    return sql;
  }

  /**
   * Counts `cost` against every window, or against none when any would go over its limit.
   * `now` comes from the caller so that every window agrees on one clock; `counter` names the
   * daily history the admitted requests are added to, if any.
   */
  async consume(windows: LimitWindow[], cost = 1, now = Date.now(), counter?: string): Promise<LimitDecision> {
    const states = windows.map((window) => ({ window, ...this.current(window, now) }));

    // Of the windows that refuse, the one that lasts longest says when a retry can succeed.
    const refused = states
      .filter((s) => s.used + cost > s.window.limit)
      .reduce<(typeof states)[number] | undefined>((latest, s) => (latest && latest.resetAt >= s.resetAt ? latest : s), undefined);
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
      if (remaining < tightest.remaining || (remaining === tightest.remaining && s.resetAt > tightest.resetAt))
        tightest = { remaining, resetAt: s.resetAt };
    }
    if (counter !== undefined) this.addToHistory(counter, cost, now);
    if (states.length > 0) await this.keepWindows(Math.max(...states.map((s) => s.resetAt)));
    return { allowed: true, ...tightest };
  }

  /**
   * Keeps the windows just counted, the latest ending at `end`, until LATE_MS after it: records
   * the end and sets the alarm, when the one pending would come sooner (a write a window, not
   * one a request). Never sooner than LATE_MS from now: a request stamped long before it came (a
   * clock set wrong) would otherwise have the object delete it as soon as it was counted.
   */
  private async keepWindows(end: number): Promise<void> {
    if (end > this.windowsEnd()) this.ctx.storage.kv.put(WINDOWS_END, end);
    if (this.alarmAt === null || this.alarmAt < end + LATE_MS) await this.wakeAt(Math.max(end, Date.now()) + LATE_MS);
  }

  private windowsEnd(): number {
    return this.ctx.storage.kv.get<number>(WINDOWS_END) ?? 0;
  }

  private async wakeAt(at: number): Promise<void> {
    this.alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }

  /**
   * Deletes everything the object stores once every window is LATE_MS over and no day of its
   * history is still kept (a day is kept HISTORY_DAYS after it, addToHistory); until then, wakes
   * again when the last of them ends.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    const latestDay = this.sql.exec<{ day: number | null }>("SELECT max(day) AS day FROM daily").one().day;
    const needed = Math.max(this.windowsEnd() + LATE_MS, latestDay === null ? 0 : latestDay + (HISTORY_DAYS + 1) * DAY_MS);
    if (needed > Date.now()) return this.wakeAt(needed);
    await this.ctx.storage.deleteAll();
    this.tablesCreated = false;
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
      .exec<{ window_start: number; count: number }>(
        "SELECT window_start, count FROM windows WHERE name = ? ORDER BY window_start DESC LIMIT 1",
        window.name,
      )
      .toArray()[0];
    if (latest && latest.window_start >= start)
      return { start: latest.window_start, used: latest.count, resetAt: windowEnd(window.period, latest.window_start) };
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
  async lease(windows: LimitWindow[], want: number, now = Date.now(), counter?: string): Promise<LeaseDecision> {
    let left = Number.MAX_SAFE_INTEGER;
    const starts: number[] = [];
    for (const window of windows) {
      const { start, used } = this.current(window, now);
      left = Math.min(left, window.limit - used);
      starts.push(start);
    }
    const granted = Math.max(1, Math.min(want, Math.floor(left / LEASE_FRACTION)));
    const decision = await this.consume(windows, granted, now, counter);
    return { ...decision, granted: decision.allowed ? granted : 0, starts };
  }

  /**
   * Gives back requests a lease counted but never spent: to each window at the start `lease`
   * counted them in (`starts`), and to the day of the counter's history they were granted on.
   * Not by the lease's `now`: stamped just before a window ended, it may have been counted in
   * the next, and the finished window is no longer here to take anything back.
   */
  release(windows: LimitWindow[], unspent: number, starts: number[], history?: { counter: string; grantedAt: number }): void {
    if (history !== undefined) {
      this.sql.exec(
        "UPDATE daily SET count = max(count - ?, 0) WHERE counter = ? AND day = ?",
        unspent,
        history.counter,
        windowStart("day", history.grantedAt),
      );
    }
    for (const [i, window] of windows.entries()) {
      this.sql.exec("UPDATE windows SET count = max(count - ?, 0) WHERE name = ? AND window_start = ?", unspent, window.name, starts[i]!);
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
      .exec<{ day: number; count: number }>(
        "SELECT day, count FROM daily WHERE counter = ? AND day BETWEEN ? AND ?",
        counter,
        days[0]!,
        days[days.length - 1]!,
      )
      .toArray();
    const byDay = new Map(rows.map((row) => [row.day, row.count]));
    return days.map((day) => byDay.get(day) ?? 0);
  }
}
