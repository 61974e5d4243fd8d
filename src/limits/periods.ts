/** Calendar windows in UTC, the unit of every limit: per minute, per day, per month. */
export type Period = "minute" | "day" | "month";

export function windowStart(period: Period, now: number): number {
  const date = new Date(now);
  switch (period) {
    case "minute":
      return now - (now % 60_000);
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
      return windowStart("minute", now) + 60_000;
    case "day":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
    case "month":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  }
}
