import { createMessageBatch, getQueueResult, createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { companies } from "../../schema";
import { findCompanyByDomain } from "../../src/catalogue/companies";
import { domainName } from "../../src/catalogue/names";
import { logosOfCompany } from "../../src/catalogue/logos";
import { searchCompanies } from "../../src/catalogue/search";
import { discoverDomain } from "../../src/discovery/discover";
import { discoverAndRecord } from "../../src/discovery/run";
import { parseResolve } from "../../src/discovery/fetcher";
import worker from "../../src/index";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";
import { BASE, fetchWith, freshKey } from "../lookup/helpers";
import { claimSite, type FakeSite, ico, image, page, png, type Route, svg, text } from "./helpers";

const get = (path: string, init?: RequestInit) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual", ...init });
const follow = async (response: Response) => {
  // Relative: no public base URL is configured in the tests.
  return get(response.headers.get("location")!);
};
async function storedLogo(domain: string) {
  const company = await findCompanyByDomain(db, domain);
  const [logo] = company ? await logosOfCompany(db, company) : [];
  return logo && { logo, name: company!.companyName, brandColor: company!.brandColor };
}

/** Looks the site up once and returns the answer and what was stored. */
async function firstLookup(site: FakeSite, query = "") {
  const token = await freshKey();
  const response = await get(`/${site.host}?token=${token}${query}`);
  return { token, response, stored: await storedLogo(site.host) };
}

describe("discovery on a miss: what the site offers", () => {
  it("serves the site's best link icon on the first lookup, marked discovered, and writes it with its provenance", async () => {
    const site = await claimSite({});
    await site.set({
      "/": page(
        `<title>${domainName(site.host)} Widgets — Home</title><meta property="og:site_name" content="${domainName(site.host)} Widgets"><meta name="theme-color" content="#3A7">
         <link rel="icon" sizes="16x16" href="/favicon-16.png"><link rel="icon" sizes="32x32" href="/favicon-32.png">
         <link rel="apple-touch-icon" href="/apple-touch-icon-180.png">`,
      ),
      "/favicon-16.png": image(png(16, 16)),
      "/favicon-32.png": image(png(32, 32)),
      "/apple-touch-icon-180.png": image(png(180, 180, [20, 90, 200, 255])),
    });
    const { response, stored } = await firstLookup(site);
    expect(response.status).toBe(302);
    expect(response.headers.get("x-logo-source")).toBe("discovered");
    expect(stored).toMatchObject({
      name: `${domainName(site.host)} Widgets`,
      brandColor: "#33aa77",
      logo: {
        sourceSet: "discovered",
        sourceUrl: `https://${site.host}/apple-touch-icon-180.png`,
        width: 180,
        height: 180,
        variant: "icon",
      },
    });
    expect(stored!.logo.fetchedAt).toBeInstanceOf(Date);
    const png128 = await follow(response);
    expect(png128.status).toBe(200);
    expect(png128.headers.get("x-logo-source")).toBe("discovered");
    expect(await env.IMAGES.info(png128.body!)).toMatchObject({ format: "image/png", width: 128, height: 128 });
  });

  it("answers the second lookup from the catalogue without asking the site again", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    const { token, response } = await firstLookup(site);
    expect(response.headers.get("x-logo-source")).toBe("discovered");
    const asked = (await site.requests()).length;
    const again = await get(`/${site.host}?token=${token}&size=64`);
    expect(again.status).toBe(302);
    expect(again.headers.get("x-logo-source")).toBe("discovered");
    expect((await site.requests()).length).toBe(asked);
  });

  it("takes a vector icon over a larger raster, rasterised to a 1200 px master", async () => {
    const site = await claimSite({
      "/": page('<link rel="icon" type="image/svg+xml" href="/icon.svg"><link rel="apple-touch-icon" sizes="180x180" href="/touch.png">'),
      "/icon.svg": text(svg(), "image/svg+xml"),
      "/touch.png": image(png(180, 180)),
    });
    const { stored } = await firstLookup(site);
    expect(stored?.logo).toMatchObject({ format: "svg", width: 1200, height: 1200, sourceUrl: `https://${site.host}/icon.svg` });
  });

  it("reads a manifest-only site: the largest manifest icon and the manifest's name", async () => {
    const site = await claimSite({});
    await site.set({
      "/": page('<link rel="manifest" href="/app/site.webmanifest">'),
      "/app/site.webmanifest": text(
        JSON.stringify({
          name: `${domainName(site.host)} Co`,
          theme_color: "#112233",
          icons: [
            { src: "icon-192.png", sizes: "192x192" },
            { src: "/app/icon-512.png", sizes: "512x512", purpose: "any maskable" },
          ],
        }),
        "application/manifest+json",
      ),
      "/app/icon-192.png": image(png(192, 192)),
      "/app/icon-512.png": image(png(512, 512)),
    });
    const { stored } = await firstLookup(site);
    expect(stored).toMatchObject({
      name: `${domainName(site.host)} Co`,
      brandColor: "#112233",
      logo: { width: 512, sourceUrl: `https://${site.host}/app/icon-512.png` },
    });
  });

  it("decodes an ICO-only site's /favicon.ico, taking its largest entry (BMP with alpha)", async () => {
    const site = await claimSite({
      "/": page("<title>Old School</title>"),
      "/favicon.ico": image(
        ico([{ bmp: { size: 16, rgba: [255, 0, 0, 255] } }, { bmp: { size: 48, rgba: [0, 128, 255, 255] } }]),
        "image/x-icon",
      ),
    });
    const { response, stored } = await firstLookup(site);
    expect(response.status).toBe(302);
    expect(stored).toMatchObject({
      name: domainName(site.host),
      logo: { format: "ico", width: 48, height: 48, sourceUrl: `https://${site.host}/favicon.ico` },
    });
    const master = await env.LOGOS.get(stored!.logo.masterKey);
    expect(await env.IMAGES.info(master!.body)).toMatchObject({ format: "image/png", width: 48, height: 48 });
  });

  it("takes the PNG entry of an ICO when it is the largest", async () => {
    const site = await claimSite({
      "/": page('<link rel="shortcut icon" href="/favicon.ico">'),
      "/favicon.ico": image(
        ico([{ bmp: { size: 32, rgba: [255, 0, 0, 255] } }, { png: png(64, 64), size: 64 }]),
        "image/vnd.microsoft.icon",
      ),
    });
    expect((await firstLookup(site)).stored?.logo).toMatchObject({ width: 64, height: 64 });
  });

  it("resolves hrefs against <base href>, and reads uppercase and multi-valued rel", async () => {
    const site = await claimSite({
      "/": page('<BASE HREF="/static/"><LINK REL="Shortcut ICON" HREF="img/mark.png"><link rel="alternate icon" href="/tiny.png">'),
      "/static/img/mark.png": image(png(96, 96)),
      "/tiny.png": image(png(16, 16)),
    });
    expect((await firstLookup(site)).stored?.logo).toMatchObject({ width: 96, sourceUrl: `https://${site.host}/static/img/mark.png` });
  });

  it.each(["data:,", "javascript:void(0)", "mailto:web@example.com", "about:blank"])(
    "ignores <base href=%s>, as browsers do, and still finds /favicon.ico",
    async (base) => {
      const site = await claimSite({ "/": page(`<base href="${base}"><title>Based</title>`), "/favicon.ico": image(png(48, 48)) });
      const { response, stored } = await firstLookup(site);
      expect(response.status).toBe(302);
      expect(stored?.logo).toMatchObject({ width: 48, sourceUrl: `https://${site.host}/favicon.ico` });
    },
  );

  it("handles protocol-relative and data: URLs, and prefers square marks to banners", async () => {
    const inline = `data:image/png;base64,${btoa(String.fromCharCode(...png(80, 80)))}`;
    const site = await claimSite({});
    await site.set({
      "/": page(`<link rel="icon" href="//${site.host}/banner.png"><link rel="icon" href="${inline}">`),
      "/banner.png": image(png(400, 100)),
    });
    const { stored } = await firstLookup(site);
    expect(stored?.logo).toMatchObject({ width: 80, height: 80 });
    expect(stored!.logo.sourceUrl).toContain("inline data: URL");
  });

  it("falls back to /apple-touch-icon.png when the page names nothing usable, and takes a tiny icon only when nothing else exists", async () => {
    const touch = await claimSite({ "/": page('<link rel="icon" href="/missing.png">'), "/apple-touch-icon.png": image(png(120, 120)) });
    expect((await firstLookup(touch)).stored?.logo).toMatchObject({ width: 120, sourceUrl: `https://${touch.host}/apple-touch-icon.png` });
    const tiny = await claimSite({ "/": page('<link rel="icon" href="/16.png">'), "/16.png": image(png(16, 16)) });
    expect((await firstLookup(tiny)).stored?.logo).toMatchObject({ width: 16 });
  });

  it("looks further than a tiny linked favicon: the unlinked /apple-touch-icon.png wins", async () => {
    const site = await claimSite({
      "/": page('<link rel="icon" href="/favicon.ico">'),
      "/favicon.ico": image(ico([{ bmp: { size: 16, rgba: [255, 0, 0, 255] } }]), "image/x-icon"),
      "/apple-touch-icon.png": image(png(180, 180)),
    });
    expect((await firstLookup(site)).stored?.logo).toMatchObject({ width: 180, sourceUrl: `https://${site.host}/apple-touch-icon.png` });
    // The favicon the page named is not fetched again as a well-known path.
    expect((await site.requests()).filter((r) => r.path === "/favicon.ico")).toHaveLength(1);
  });
});

describe("discovery on a miss: misses, concurrency, the queue", () => {
  it("answers 404 for a site with no icon, and does not fetch it again within the miss TTL", async () => {
    const site = await claimSite({ "/": page("<title>Nothing Here</title>") });
    const { token, response, stored } = await firstLookup(site);
    expect(response.status).toBe(404);
    expect(await response.text()).toBe("Logo not found");
    expect(stored).toBeUndefined();
    const asked = (await site.requests()).map((r) => r.path).sort();
    expect(asked).toEqual(["/", "/apple-touch-icon.png", "/favicon.ico"]);
    for (let i = 0; i < 3; i++) expect((await get(`/${site.host}?token=${token}`)).status).toBe(404);
    expect((await site.requests()).length).toBe(asked.length);
  });

  it("starts one discovery for 20 concurrent first lookups", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    const token = await freshKey();
    const answers = await Promise.all(Array.from({ length: 20 }, () => get(`/${site.host}?token=${token}`)));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(302));
    const requests = await site.requests();
    expect(requests.filter((r) => r.path === "/")).toHaveLength(1);
    expect(requests.filter((r) => r.path === "/i.png")).toHaveLength(1);
  });

  it("past its budget answers a miss, and the queue finishes the discovery so the next lookup is a hit", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    const token = await freshKey();
    const first = await fetchWith({ DISCOVERY_BUDGET_MS: "0" }, `${BASE}/${site.host}?token=${token}&fallback=monogram`);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-logo-source")).toBe("monogram");
    // A miss still under way is cached briefly: the logo is on its way.
    expect(first.headers.get("cache-control")).toBe("public, max-age=60");

    const batch = createMessageBatch("logo-discovery", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { domain: site.host, refresh: false } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["m1"]);

    const second = await get(`/${site.host}?token=${token}`);
    expect(second.status).toBe(302);
    expect(second.headers.get("x-logo-source")).toBe("discovered");
    expect((await site.requests()).filter((r) => r.path === "/")).toHaveLength(1);
  });

  it("refreshes a discovered logo from the queue: a new icon replaces the old one and the fetch time moves on, once", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/v1.png">'), "/v1.png": image(png(64, 64)) });
    const longAgo = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000);
    expect((await discoverDomain(env, db, site.host, parseResolve(env.DISCOVERY_RESOLVE, ""), longAgo)).outcome).toBe("found");
    const before = await storedLogo(site.host);
    await site.set({ "/": page('<link rel="icon" href="/v2.png">'), "/v2.png": image(png(128, 128)) });
    // Three isolates served the stale logo, and each queued its refresh.
    const refreshes = ["r1", "r2", "r3"].map((id) => ({
      id,
      timestamp: new Date(),
      attempts: 1,
      body: { domain: site.host, refresh: true },
    }));
    for (const message of refreshes) {
      const batch = createMessageBatch("logo-discovery", [message]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env);
      expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual([message.id]);
    }
    const after = await storedLogo(site.host);
    expect(after?.logo).toMatchObject({ id: before!.logo.id, width: 128, sourceUrl: `https://${site.host}/v2.png` });
    expect(after!.logo.fetchedAt!.getTime()).toBeGreaterThan(longAgo.getTime());
    // The site was read again once, not once a refresh.
    expect((await site.requests()).filter((r) => r.path === "/v2.png")).toHaveLength(1);
    // The old icon stays for redirects cached before the refresh, retired: deleted two days on.
    expect(await env.LOGOS.head(before!.logo.masterKey)).not.toBeNull();
    expect(await env.DB.prepare("SELECT key FROM retired_objects WHERE key = ?1").bind(before!.logo.masterKey).first()).not.toBeNull();
  });

  it("a discovery refresh of a catalogued company adds the discovered logo and leaves the company as the catalogue has it", async () => {
    const site = await claimSite({});
    const curated = await addCompany(
      { name: "Zyxwv Industries", domains: [site.host], prominence: 50, brandColor: "#00ff00" },
      darkLogo40x20(),
    );
    await site.set({
      "/": page(
        '<title>Welcome to our homepage | Best deals</title><meta name="theme-color" content="#ff0000"><link rel="icon" href="/i.png">',
      ),
      "/i.png": image(png(64, 64)),
    });
    const batch = createMessageBatch("logo-discovery", [
      { id: "c1", timestamp: new Date(), attempts: 1, body: { domain: site.host, refresh: true } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["c1"]);

    expect(await findCompanyByDomain(db, site.host)).toMatchObject({
      companyId: curated.companyId,
      companyName: "Zyxwv Industries",
      brandColor: "#00ff00",
    });
    expect(
      await db
        .select({ prominence: companies.prominence, aliases: companies.aliases })
        .from(companies)
        .where(eq(companies.id, curated.companyId))
        .get(),
    ).toEqual({ prominence: 50, aliases: [] });
    const hits = async (query: string) =>
      (await searchCompanies(db, query, 10)).filter((hit) => hit.companyId === curated.companyId).map((hit) => hit.companyName);
    expect(await hits("Zyxwv Industries")).toEqual(["Zyxwv Industries"]);
    expect(await hits("zyx")).toEqual(["Zyxwv Industries"]);
    expect(await hits("Welcome to our homepage")).toEqual([]);
    const company = (await findCompanyByDomain(db, site.host))!;
    expect(
      (await logosOfCompany(db, company)).map((logo) => ({ sourceSet: logo.sourceSet, sourceUrl: logo.sourceUrl, width: logo.width })),
    ).toEqual(
      expect.arrayContaining([
        { sourceSet: "test", sourceUrl: null, width: 40 },
        { sourceSet: "discovered", sourceUrl: `https://${site.host}/i.png`, width: 64 },
      ]),
    );
  });

  it("serves a discovered logo older than 30 days as it is and has the queue fetch it again", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/old.png">'), "/old.png": image(png(64, 64)) });
    const longAgo = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000);
    expect((await discoverDomain(env, db, site.host, parseResolve(env.DISCOVERY_RESOLVE, ""), longAgo)).outcome).toBe("found");
    await site.set({ "/": page('<link rel="icon" href="/new.png">'), "/new.png": image(png(96, 96)) });
    const token = await freshKey();
    const stale = await get(`/${site.host}?token=${token}`);
    expect(stale.status).toBe(302);
    expect((await storedLogo(site.host))?.logo.width).toBe(64);
    // The refresh arrives through the real queue, whenever its consumer runs.
    await vi.waitFor(
      async () => expect((await storedLogo(site.host))?.logo).toMatchObject({ width: 96, sourceUrl: `https://${site.host}/new.png` }),
      { timeout: 15_000, interval: 100 },
    );
    expect((await storedLogo(site.host))!.logo.fetchedAt!.getTime()).toBeGreaterThan(longAgo.getTime());
  });

  it("a refresh that finds nothing keeps the logo and moves its fetch time on, so the next refresh is 30 days off", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/old.png">'), "/old.png": image(png(64, 64)) });
    const longAgo = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000);
    expect((await discoverDomain(env, db, site.host, parseResolve(env.DISCOVERY_RESOLVE, ""), longAgo)).outcome).toBe("found");
    await site.set({ "/": page("<title>Icons gone</title>") });
    const asked = Date.now();
    const batch = createMessageBatch("logo-discovery", [
      { id: "n1", timestamp: new Date(), attempts: 1, body: { domain: site.host, refresh: true } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["n1"]);
    const after = (await storedLogo(site.host))!.logo;
    expect(after).toMatchObject({ width: 64, sourceUrl: `https://${site.host}/old.png` });
    expect(after.fetchedAt!.getTime()).toBeGreaterThanOrEqual(asked);
    expect(await env.LOGOS.head(after.masterKey)).not.toBeNull();
  });

  describe("a refresh that finds only a worse icon", () => {
    const longAgo = () => new Date(Date.now() - 31 * 24 * 60 * 60 * 1000);
    const named = '<link rel="apple-touch-icon" href="/big.png"><link rel="icon" href="/small.png">';
    const stored = async (routes: Record<string, Route>) => {
      const site = await claimSite(routes);
      expect((await discoverDomain(env, db, site.host, parseResolve(env.DISCOVERY_RESOLVE, ""), longAgo())).outcome).toBe("found");
      return site;
    };

    it.each([
      [
        "the stored icon answers 503 for a moment",
        { "/": page(named), "/big.png": { status: 503, type: "text/plain", body: "busy" }, "/small.png": image(png(16, 16)) },
      ],
      ["the page does not answer", { "/": { status: 503, type: "text/plain", body: "busy" }, "/favicon.ico": image(png(16, 16)) }],
      [
        "the stored icon fails and a 32 px one is named",
        {
          "/": page(`${named}<link rel="icon" sizes="32x32" href="/mid.png">`),
          "/big.png": { status: 500, type: "text/plain", body: "" },
          "/small.png": image(png(16, 16)),
          "/mid.png": image(png(32, 32)),
        },
      ],
    ] as const)("keeps the stored logo when %s, and asks again in 30 days", async (_, routes) => {
      const site = await stored({ "/": page(named), "/big.png": image(png(180, 180)), "/small.png": image(png(16, 16)) });
      await site.set(routes as Record<string, Route>);
      const asked = Date.now();
      const report = await discoverAndRecord(env, site.host, { refresh: true });
      expect(report.outcome).toBe("nothing");
      const after = (await storedLogo(site.host))!.logo;
      expect(after).toMatchObject({ width: 180, sourceUrl: `https://${site.host}/big.png` });
      expect(after.fetchedAt!.getTime()).toBeGreaterThanOrEqual(asked);
    });

    it.each([
      ["the page no longer names it", { "/": page('<link rel="icon" href="/new.png">'), "/new.png": image(png(48, 48)) }, "/new.png"],
      [
        "it is gone (404)",
        { "/": page(`${named}`), "/big.png": { status: 404, type: "text/plain", body: "" }, "/small.png": image(png(48, 48)) },
        "/small.png",
      ],
      [
        "the same address now serves a smaller icon",
        { "/": page('<link rel="apple-touch-icon" href="/big.png">'), "/big.png": image(png(64, 64)) },
        "/big.png",
      ],
    ] as const)("takes the worse icon when %s", async (_, routes, path) => {
      const site = await stored({ "/": page(named), "/big.png": image(png(180, 180)), "/small.png": image(png(16, 16)) });
      await site.set(routes as Record<string, Route>);
      expect((await discoverAndRecord(env, site.host, { refresh: true })).outcome).toBe("found");
      expect((await storedLogo(site.host))!.logo).toMatchObject({ sourceUrl: `https://${site.host}${path}` });
    });
  });

  it("is off with DISCOVERY=off: the site is never asked", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    const token = await freshKey();
    const response = await fetchWith({ DISCOVERY: "off" }, `${BASE}/${site.host}?token=${token}`, { redirect: "manual" });
    expect(response.status).toBe(404);
    expect(await site.requests()).toEqual([]);
  });
});
