import { describe, expect, it } from "vitest";
import { discoveryMisses } from "../../schema";
import { rememberedMiss, rememberMiss } from "../../src/discovery/misses";
import { db } from "../helpers/catalogue";

const facts = { reason: "no usable icon", siteName: null, brandColor: null };
const day = 24 * 60 * 60 * 1000;
const domains = async () =>
  (await db.select({ domain: discoveryMisses.domain }).from(discoveryMisses).all()).map((row) => row.domain).sort();

describe("remembered misses", () => {
  it("expired rows are swept as misses are written, a bounded number at a time, and live ones kept", async () => {
    const now = Date.now();
    // Written as they were yesterday and before, before any sweep.
    const row = (domain: string, missedUntil: number) => ({
      domain,
      ...facts,
      missedUntil: new Date(missedUntil),
      checkedAt: new Date(missedUntil - 60_000),
    });
    for (let i = 0; i < 20; i++) await db.insert(discoveryMisses).values(row(`expired-${i}.com`, now - 2 * day));
    await db.insert(discoveryMisses).values([row("live-a.com", now + day), row("live-b.com", now + day)]);

    await rememberMiss(db, "new.com", facts, 86_400, now);
    // One write reads and deletes at most a handful of rows, however many have expired.
    const left = await domains();
    expect(left.filter((domain) => domain.startsWith("expired-")).length).toBeGreaterThan(0);
    expect(left.filter((domain) => domain.startsWith("expired-")).length).toBeLessThan(20);

    await rememberMiss(db, "newer.com", facts, 86_400, now);
    expect(await domains()).toEqual(["live-a.com", "live-b.com", "new.com", "newer.com"]);
    expect(await rememberedMiss(db, "live-a.com", now)).toMatchObject({ missedUntil: now + day });
  });

  it("a domain missed again is one row, with the facts of the latest miss", async () => {
    const now = Date.now();
    await rememberMiss(db, "again.com", facts, 60, now - 2 * day);
    await rememberMiss(db, "again.com", { ...facts, siteName: "Again" }, 86_400, now);
    expect(await domains()).toEqual(["again.com"]);
    expect(await rememberedMiss(db, "again.com", now)).toMatchObject({ siteName: "Again", missedUntil: now + 86_400_000 });
  });
});
