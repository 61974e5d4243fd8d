import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startProgress } from "../../tools/importer/progress";

/** Long imports (and the first start's seeding) report progress in logs too, not only on a terminal. */
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("progress without a terminal", () => {
  it("prints a line every few seconds with count, rate, time left and skipped rows, and stops when told", async () => {
    const lines: string[] = [];
    const progress = startProgress({
      label: "seeding",
      unit: "rows",
      total: Promise.resolve(100),
      stream: { write: (t) => lines.push(t), isTTY: false },
    });
    await Promise.resolve();
    progress.update(10);
    vi.advanceTimersByTime(5_000);
    progress.update(40, { failed: 2 });
    progress.note("line 7: unreadable image");
    vi.advanceTimersByTime(5_000);
    progress.stop();
    vi.advanceTimersByTime(60_000);
    expect(lines).toEqual([
      "seeding: 10/100 rows in 5 s (2/s, 45 s left)\n",
      "line 7: unreadable image\n",
      "seeding: 40/100 rows in 10 s (4/s, 15 s left), 2 skipped\n",
    ]);
  });

  it("counts the rate of a resumed import from where it resumed", () => {
    const lines: string[] = [];
    const progress = startProgress({ label: "importing", unit: "rows", total: 1000, from: 600, stream: { write: (t) => lines.push(t) } });
    vi.advanceTimersByTime(5_000);
    progress.update(700);
    vi.advanceTimersByTime(5_000);
    progress.stop();
    expect(lines).toEqual(["importing: 600/1,000 rows in 5 s (0/s)\n", "importing: 700/1,000 rows in 10 s (10/s, 30 s left)\n"]);
  });

  it("draws a bar instead on a terminal", () => {
    let drawn = "";
    const progress = startProgress({
      label: "importing",
      unit: "rows",
      total: 10,
      stream: { write: (t: string) => (drawn += t), isTTY: true } as never,
    });
    progress.update(5);
    progress.stop();
    expect(drawn).toContain("5/10 rows");
    expect(drawn).not.toContain("importing: ");
  });
});
