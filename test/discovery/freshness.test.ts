import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { logos } from "../../schema";
import { findCompanyByDomain } from "../../src/catalogue/companies";
import { logosOfCompany } from "../../src/catalogue/logos";
import { queueRechecks, RECHECK_AFTER_MS } from "../../src/discovery/freshness";
import { discoverAndRecord } from "../../src/discovery/run";
import worker from "../../src/index";
import { readPurgeJournal } from "../../src/purge/purge";
import { rest, secretKeyFor } from "../api/helpers";
import { db } from "../helpers/catalogue";
import { DAY_MS } from "../helpers/clock";
import { BASE } from "../lookup/helpers";
import { claimSite, image, page, png } from "./helpers";

/**
 * Freshness (issue 41; docs/discovery.md#freshness): the Cron Trigger queues discovered icons
 * due a re-check; the queue's consumer asks each icon again with the ETag it was fetched with.
 * A 304 keeps the logo (and says it was verified); a changed icon replaces it, is entered in
 * the change log, and is what lookups serve.
 */
async function storedIcon(domain: string) {
  const company = await findCompanyByDomain(db, domain);
  return company ? (await logosOfCompany(db, company))[0] : undefined;
}

/** As if the icon had been fetched `days` ago. */
async function ageIcon(logoId: number, days: number) {
  await db
    .update(logos)
    .set({ fetchedAt: new Date(Date.now() - days * DAY_MS) })
    .where(eq(logos.id, logoId));
}

async function consume(domain: string, id: string) {
  const batch = createMessageBatch("logo-discovery", [{ id, timestamp: new Date(), attempts: 1, body: { domain, recheck: true } }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual([id]);
}

describe("a scheduled re-check of a discovered icon", () => {
  it("keeps an unchanged icon on a 304 and replaces a changed one, logging the change", async () => {
    const site = await claimSite({
      "/": page('<link rel="icon" href="/i.png">'),
      "/i.png": { ...image(png(64, 64, [200, 30, 30, 255])), etag: '"v1"' },
    });
    expect((await discoverAndRecord(env, site.host, { refresh: false })).outcome).toBe("found");
    const first = (await storedIcon(site.host))!;
    expect(first).toMatchObject({ sourceEtag: '"v1"' });

    // Not due yet: nothing is queued for it.
    expect(await queueRechecks(env)).toBe(0);
    await ageIcon(first.id, 8);
    expect(await queueRechecks(env)).toBe(1);

    await consume(site.host, "r1");
    const kept = (await storedIcon(site.host))!;
    expect(kept).toMatchObject({ id: first.id, contentHash: first.contentHash });
    expect(kept.fetchedAt!.getTime()).toBeGreaterThan(Date.now() - RECHECK_AFTER_MS);
    expect(kept.verifiedAt!.getTime()).toBeGreaterThan(first.fetchedAt!.getTime() - 1);
    const asked = (await site.requests()).filter((r) => r.path === "/i.png");
    expect(asked.at(-1)!.headers["if-none-match"]).toBe('"v1"');
    // The page was not read again for a 304.
    expect((await site.requests()).filter((r) => r.path === "/")).toHaveLength(1);

    const { key } = await secretKeyFor("launch");
    const lookup = await rest(`/${site.host}`, key, { redirect: "manual" });
    expect(lookup.headers.get("x-logo-source")).toBe("discovered");
    expect(new Date(lookup.headers.get("x-logo-updated")!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const servedBefore = new Uint8Array(await lookup.arrayBuffer());

    // The site changes its mark.
    await site.set({
      "/": page('<link rel="icon" href="/i.png">'),
      "/i.png": { ...image(png(64, 64, [20, 30, 200, 255])), etag: '"v2"' },
    });
    await ageIcon(first.id, 8);
    await consume(site.host, "r2");
    const replaced = (await storedIcon(site.host))!;
    expect(replaced.contentHash).not.toBe(first.contentHash);
    expect(replaced.sourceEtag).toBe('"v2"');

    const log = (await (await exports.default.fetch(`${BASE}/v1/changes?domain=${site.host}`)).json()) as { changes: unknown[] };
    expect(log.changes).toEqual([expect.objectContaining({ domain: site.host, change: "icon", method: "refresh" })]);

    await readPurgeJournal(env);
    const after = await rest(`/${site.host}`, key, { redirect: "manual" });
    expect(after.headers.get("x-logo-id")).toBe(String(replaced.id));
    expect(after.status).toBe(200);
    expect(new Uint8Array(await after.arrayBuffer())).not.toEqual(servedBefore);
  });

  it("leaves an icon whose site does not answer to the 30-day refresh, and a catalogue logo alone", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    await discoverAndRecord(env, site.host, { refresh: false });
    const first = (await storedIcon(site.host))!;
    await site.set({ "/i.png": { status: 503, type: "text/plain", body: "busy" } });
    await ageIcon(first.id, 8);
    await consume(site.host, "r3");
    const after = (await storedIcon(site.host))!;
    expect(after).toMatchObject({ id: first.id, contentHash: first.contentHash });
    expect(after.fetchedAt!.getTime()).toBeLessThan(Date.now() - 7 * DAY_MS);
    const log = (await (await exports.default.fetch(`${BASE}/v1/changes?domain=${site.host}`)).json()) as { changes: unknown[] };
    expect(log.changes).toEqual([]);
  });
});
