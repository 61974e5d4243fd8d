import { DAY_MS, MINUTE_MS } from "../lib/time";
/** Calendar windows in UTC, the unit of every limit: per minute, per day, per month. */
export type Period = "minute" | "day" | "month";

export function windowStart(period: Period, now: number): number {
  const date = new Date(now);
  switch (period) {
    case "minute":
      return now - (now % MINUTE_MS);
    case "day":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
    case "month":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  }
}

export function windowEnd(period: Period, now: number): number {
  const date = new Date(now);
  switch (period) {
    case "minute":
      return windowStart("minute", now) + MINUTE_MS;
    case "day":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
    case "month":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  }
}

export { DAY_MS };

/**
 * How long the limiters keep their per-day counts (lookups per key, MCP calls and unique
 * companies per account) for usage reports: at least 90 days, whatever the plan.
 */
export const HISTORY_DAYS = 100;

/** The starts of the `days` UTC days ending with today's, oldest first. */
export function lastDays(days: number, now: number): number[] {
  const today = windowStart("day", now);
  return Array.from({ length: days }, (_, i) => today - (days - 1 - i) * DAY_MS);
}
