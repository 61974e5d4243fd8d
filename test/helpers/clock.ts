import { vi } from "vitest";

/**
 * The clock as an input. The Worker, its Durable Objects and the tests share one isolate, so a
 * test that fakes `Date` sets the time every limit, window and deadline is reckoned by: a test
 * of a per-minute limit freezes the clock inside a minute instead of hoping that its requests do
 * not straddle one. Timers stay real (deadlines of dependencies, the fake sites' pauses);
 * only `Date` is faked, and it stands still until the test moves it. The setup file restores
 * the real clock after every test.
 *
 * The frozen instant is a day ahead of the real one: what the runtime schedules by it (a
 * Durable Object's alarm) falls after the run, never into it.
 */
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export interface FrozenClock {
  /** The frozen time, in Unix milliseconds. */
  readonly now: number;
  /** The start of the frozen minute. */
  readonly minute: number;
  /** Moves the clock by `ms` (forward, or back with a negative value). */
  advance(ms: number): void;
  /** Sets the clock to `at`. */
  set(at: number): void;
}

/**
 * Freezes `Date` at `secondsIntoMinute` seconds into a minute a day from now (UTC), or at `at`.
 */
export function freezeClock(options: { secondsIntoMinute?: number; at?: number } = {}): FrozenClock {
  const start = options.at ?? minuteStart(Date.now() + DAY_MS) + (options.secondsIntoMinute ?? 1) * 1000;
  vi.useFakeTimers({ toFake: ["Date"], now: start });
  return {
    get now() {
      return Date.now();
    },
    get minute() {
      return minuteStart(Date.now());
    },
    advance(ms: number) {
      vi.setSystemTime(Date.now() + ms);
    },
    set(at: number) {
      vi.setSystemTime(at);
    },
  };
}

export function minuteStart(at: number): number {
  return at - (at % MINUTE_MS);
}

/** Whether a test froze the clock (helpers that count in minutes insist on it). */
export function clockFrozen(): boolean {
  return vi.isFakeTimers();
}
