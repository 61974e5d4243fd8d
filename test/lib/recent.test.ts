import { describe, expect, it } from "vitest";
import { RecentBytes } from "../../src/lib/recent";

describe("RecentBytes", () => {
  it("counts what each entry holds beside its bytes, so that tiny images cannot fill an isolate", () => {
    // 111 bytes is a 24-pixel PNG: at its bytes alone, 64 KiB would keep some 600 of them.
    const recent = new RecentBytes<Uint8Array>(64 * 1024);
    for (let i = 0; i < 1000; i++) recent.set(`https://assets.internal/logos/acme.com/${i}/24/-/1/png`, new Uint8Array(111), 111);
    expect(recent.size).toBeGreaterThan(10);
    expect(recent.size).toBeLessThanOrEqual(32);
    // The newest are kept, the oldest dropped.
    expect(recent.get("https://assets.internal/logos/acme.com/999/24/-/1/png")).toBeDefined();
    expect(recent.get("https://assets.internal/logos/acme.com/0/24/-/1/png")).toBeUndefined();
  });

  it("keeps no value larger than its share, and an id once", () => {
    const recent = new RecentBytes<string>(64 * 1024);
    recent.set("big", "x", 2 * 1024);
    recent.set("small", "first", 10);
    recent.set("small", "second", 10);
    expect([recent.get("big"), recent.get("small"), recent.size]).toEqual([undefined, "first", 1]);
  });
});
