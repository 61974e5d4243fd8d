import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DISCOVERY_MAX_BYTES, DISCOVERY_MAX_REQUESTS, discoverDomain } from "../../src/discovery/discover";
import { parseResolve } from "../../src/discovery/fetcher";
import { MANY_COLOURS_MAX_EDGE } from "../../src/discovery/image";
import { analysisWork, EXACT_COLOURS, REDUCED_EDGE } from "../../src/images/renditions";
import { darkLogo40x20, discPixels, noisePixels, pngOf } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";
import { BASE, freshKey } from "../lookup/helpers";
import { claimSite, image, page, png, text } from "./helpers";

/**
 * Bounded work per discovery, whatever the site serves: a ceiling of requests (redirects
 * included), icons from the site's own domain and one other host only, one byte budget, and
 * image analysis whose cost does not follow the number of colours. Judged by work counted,
 * never by wall time.
 */
const resolve = () => parseResolve(env.DISCOVERY_RESOLVE, "");

/** The stored master's size of the logo a domain's company has, as the catalogue holds it. */
async function storedSize(domain: string) {
  return env.DB.prepare("SELECT l.width, l.height FROM logos l JOIN company_domains d ON d.company_id = l.company_id WHERE d.domain = ?")
    .bind(domain)
    .first<{ width: number; height: number }>();
}

describe("a discovery's requests", () => {
  it("stop at the ceiling, redirects included, however many icons a page names", async () => {
    const site = await claimSite({});
    const icons = Array.from({ length: 12 }, (_, i) => `<link rel="icon" sizes="${64 + i}x${64 + i}" href="/i${i}.png">`).join("");
    const routes: Record<string, ReturnType<typeof page>> = {
      "/": page(`${icons}<link rel="manifest" href="/m.json">`),
      "/m.json": text(JSON.stringify({ icons: [{ src: "/m1.png", sizes: "512x512" }] }), "application/manifest+json"),
    };
    // Every icon redirects five times before failing.
    for (const name of [...Array.from({ length: 12 }, (_, i) => `i${i}`), "m1"]) {
      for (let hop = 0; hop < 5; hop++)
        routes[`/${name}${hop ? `-${hop}` : ""}.png`] = { status: 302, location: `/${name}-${hop + 1}.png` };
      routes[`/${name}-5.png`] = { status: 404, type: "text/plain", body: "" };
    }
    await site.set(routes);
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report.outcome).toBe("nothing");
    expect(report.spent.requests).toBeLessThanOrEqual(DISCOVERY_MAX_REQUESTS);
    expect((await site.requests()).length).toBeLessThanOrEqual(DISCOVERY_MAX_REQUESTS);
  });

  it("ask icons of the site's own domain and one other host, never of a third", async () => {
    const [cdn, second, third] = [await claimSite({}), await claimSite({}), await claimSite({})];
    for (const other of [cdn, second, third]) await other.set({ "/i.png": image(png(16, 16)) });
    const site = await claimSite({
      "/": page(
        `<link rel="icon" sizes="48x48" href="https://${cdn.host}/i.png"><link rel="icon" sizes="47x47" href="https://${second.host}/i.png">` +
          `<link rel="icon" sizes="46x46" href="https://${third.host}/i.png"><link rel="manifest" href="https://${third.host}/m.json">`,
      ),
    });
    const report = await discoverDomain(env, db, site.host, resolve());
    const asked = await Promise.all([cdn, second, third].map(async (other) => (await other.requests()).length));
    expect(asked.filter((n) => n > 0)).toHaveLength(1);
    expect(report.candidates.filter((c) => /third host/.test(c.refused ?? "")).length).toBeGreaterThan(0);
  });
});

describe("a hostile icon", () => {
  it("a 1,100 px PNG of random colours is discovered within the byte budget, its analysis bounded, while a catalogued lookup is answered", {
    timeout: 60_000,
  }, async () => {
    const noise = pngOf(noisePixels(1100));
    expect(noise.byteLength).toBeGreaterThan(4_000_000);
    expect(noise.byteLength).toBeLessThan(5 * 1024 * 1024);
    const site = await claimSite({ "/": page('<link rel="icon" href="/noise.png">'), "/noise.png": image(noise) });
    await addCompany({ name: "Steady Co", domains: ["steady-co.com"] }, darkLogo40x20());
    const token = await freshKey();

    const before = { ...analysisWork };
    const [report, steady] = await Promise.all([
      discoverDomain(env, db, site.host, resolve()),
      exports.default.fetch(`${BASE}/steady-co.com?token=${token}`, { redirect: "manual" }),
    ]);
    expect(steady.status).toBe(302);
    // Its master and renditions, incompressible, are kept to a manifest icon's largest size.
    expect(report).toMatchObject({ outcome: "found", chosen: { width: MANY_COLOURS_MAX_EDGE, height: MANY_COLOURS_MAX_EDGE } });
    expect(report.spent.bytes).toBeLessThanOrEqual(DISCOVERY_MAX_BYTES);
    expect(report.spent.requests).toBeLessThanOrEqual(2);
    // Over a million colours, decided per quantised colour on a reduced copy: a bounded number of
    // decisions (the isolate's page maps may already hold some) over at most REDUCED_EDGE × REDUCED_EDGE pixels.
    expect(analysisWork.colourDecisions - before.colourDecisions).toBeLessThanOrEqual(3 * EXACT_COLOURS);
    expect(analysisWork.pixelsAnalysed - before.pixelsAnalysed).toBeLessThanOrEqual(REDUCED_EDGE * REDUCED_EDGE);
    expect(await storedSize(site.host)).toEqual({ width: MANY_COLOURS_MAX_EDGE, height: MANY_COLOURS_MAX_EDGE });
  });

  it("a logo of flat colours as large keeps its size: only an icon of many colours is stored smaller", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/disc.png">'), "/disc.png": image(pngOf(discPixels(1100))) });
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report).toMatchObject({ outcome: "found", chosen: { width: 1100, height: 1100 } });
    expect(await storedSize(site.host)).toEqual({ width: 1100, height: 1100 });
  });
});
