import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runDiscovery } from "../../src/discovery/run";
import { BASE, freshKey } from "../lookup/helpers";
import { claimSite, image, page, png } from "./helpers";

const get = (path: string) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual" });

/** The real database, except that batches fail: the catalogue write a discovery ends with throws. */
function databaseFailingBatches(real: D1Database): D1Database {
  return {
    prepare: (query: string) => real.prepare(query),
    batch: () => Promise.reject(new Error("D1 batch: injected outage")),
    exec: (query: string) => real.exec(query),
    withSession: (constraint?: D1SessionConstraint) => real.withSession(constraint),
  } as unknown as D1Database;
}

describe("discovery that fails unexpectedly", () => {
  it("is remembered briefly: lookups meanwhile answer a miss without fetching the site, and the site is tried again soon after", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    await expect(runDiscovery({ ...env, DB: databaseFailingBatches(env.DB) }, site.host, { refresh: false })).rejects.toThrow("database unavailable");
    const asked = (await site.requests()).length;
    expect(asked).toBeGreaterThan(0);

    const token = await freshKey();
    for (let i = 0; i < 3; i++) expect((await get(`/${site.host}?token=${token}`)).status).toBe(404);
    expect((await site.requests()).length).toBe(asked);

    const tenMinutesOn = Date.now() + 10 * 60 * 1000 + 1000;
    expect(await runDiscovery(env, site.host, { refresh: false }, tenMinutesOn)).toMatchObject({ status: "found" });
  });

  it("an icon found but not stored (R2 failing) is a miss for minutes, not the day a site with nothing gets", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    const failingPuts = new Proxy(env.LOGOS, {
      get: (target, name) => (name === "put" ? () => Promise.reject(new Error("R2 put: injected outage")) : Reflect.get(target, name).bind(target)),
    });
    expect(await runDiscovery({ ...env, LOGOS: failingPuts }, site.host, { refresh: false })).toMatchObject({ status: "nothing", reason: expect.stringMatching(/^catalogue write failed/) });
    expect(await runDiscovery(env, site.host, { refresh: false })).toMatchObject({ status: "nothing", reason: "remembered miss" });
    const tenMinutesOn = Date.now() + 10 * 60 * 1000 + 1000;
    expect(await runDiscovery(env, site.host, { refresh: false }, tenMinutesOn)).toMatchObject({ status: "found" });
  });
});
