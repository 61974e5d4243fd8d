import { DurableObject } from "cloudflare:workers";
import { DAY_MS, HISTORY_DAYS, windowEnd, windowStart } from "./periods";

export interface CompanyQuotaDecision {
  allowed: boolean;
  /** Unique companies counted today, after this call when allowed. */
  current: number;
  limit: number;
  /** Unix milliseconds of the next UTC midnight, when the count starts again. */
  resetAt: number;
}

/**
 * Unique companies an account touches per UTC day. One object per account; a call admits a
 * whole batch or nothing, and a company already counted today costs nothing again. Only
 * today's companies are kept; each day's count is kept HISTORY_DAYS days for usage reports.
 */
export class CompanyQuota extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => {
      this.sql.exec(`CREATE TABLE IF NOT EXISTS companies_seen (
        day INTEGER NOT NULL,
        company_id INTEGER NOT NULL,
        PRIMARY KEY (day, company_id)
      ) WITHOUT ROWID`);
      this.sql.exec("CREATE TABLE IF NOT EXISTS daily (day INTEGER PRIMARY KEY, companies INTEGER NOT NULL)");
    });
  }

  admit(companyIds: number[], limit: number, at = Date.now()): CompanyQuotaDecision {
    const now = this.present(at);
    const day = windowStart("day", now);
    this.sql.exec("DELETE FROM companies_seen WHERE day < ?", day);
    const { decision, unseen } = this.decide(companyIds, limit, now);
    if (!decision.allowed) return decision;
    for (const id of unseen) this.sql.exec("INSERT INTO companies_seen (day, company_id) VALUES (?, ?)", day, id);
    if (unseen.length > 0) {
      this.sql.exec(
        "INSERT INTO daily (day, companies) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET companies = excluded.companies",
        day,
        decision.current,
      );
      this.sql.exec("DELETE FROM daily WHERE day < ?", day - HISTORY_DAYS * DAY_MS);
    }
    return decision;
  }

  /** What `admit` would decide now, counting nothing: for work to do before admitting. */
  check(companyIds: number[], limit: number, at = Date.now()): CompanyQuotaDecision {
    return this.decide(companyIds, limit, this.present(at)).decision;
  }

  /**
   * `at`, or the start of the day already begun here if `at` is earlier: a call stamped just
   * before midnight (another colo's clock, a round trip) that arrives after the object has begun
   * the next day counts in that day, instead of starting the finished one again from nothing.
   */
  private present(at: number): number {
    const latest = this.sql.exec<{ day: number | null }>("SELECT max(day) AS day FROM companies_seen").one().day;
    return latest !== null && latest > at ? latest : at;
  }

  private decide(companyIds: number[], limit: number, now: number): { decision: CompanyQuotaDecision; unseen: number[] } {
    const day = windowStart("day", now);
    const resetAt = windowEnd("day", now);
    const current = this.usage(now);
    const unseen = [...new Set(companyIds)].filter(
      (id) => this.sql.exec("SELECT 1 FROM companies_seen WHERE day = ? AND company_id = ?", day, id).toArray().length === 0,
    );
    // Only new companies count against the limit: after a downgrade mid-day the count may
    // already be past the new plan's limit, and the companies in it are still served.
    if (unseen.length > 0 && current + unseen.length > limit) return { decision: { allowed: false, current, limit, resetAt }, unseen };
    return { decision: { allowed: true, current: current + unseen.length, limit, resetAt }, unseen };
  }

  /** Unique companies counted today; reads only. */
  usage(now = Date.now()): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM companies_seen WHERE day = ?", windowStart("day", now)).one().n;
  }

  /** Unique companies of each given day (UTC midnights); days without any are 0. */
  history(days: number[]): number[] {
    if (days.length === 0) return [];
    const rows = this.sql
      .exec<{ day: number; companies: number }>(
        "SELECT day, companies FROM daily WHERE day BETWEEN ? AND ?",
        days[0]!,
        days[days.length - 1]!,
      )
      .toArray();
    const byDay = new Map(rows.map((row) => [row.day, row.companies]));
    return days.map((day) => byDay.get(day) ?? 0);
  }
}
