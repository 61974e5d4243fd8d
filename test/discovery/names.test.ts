import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { domainName } from "../../src/catalogue/names";
import { discoverDomain } from "../../src/discovery/discover";
import { parseResolve } from "../../src/discovery/fetcher";
import { readPage } from "../../src/discovery/page";
import { runDiscovery } from "../../src/discovery/run";
import { agreesWithDomain, earnedName, isStandInPage, plainSiteText, withoutGenericWords } from "../../src/discovery/siteName";
import { db } from "../helpers/catalogue";
import { BASE, freshKey } from "../lookup/helpers";
import { claimSite, image, page, png } from "./helpers";

/**
 * Names are earned (src/discovery/siteName.ts): what a site says of itself names its company
 * only where it agrees with the domain; otherwise the company is named after its domain.
 */
const resolve = () => parseResolve(env.DISCOVERY_RESOLVE, "");

/** A domain that is not a fake site's own, played by one: its label is the test's to choose. */
async function playedBy(label: string, routes: Parameters<typeof claimSite>[0]) {
  const site = await claimSite(routes);
  const suffix = `x${crypto.randomUUID().slice(0, 6)}`;
  const domain = `${label}-${suffix}.com`;
  const map = new Map([...resolve(), [domain, resolve().get(site.host)!]]);
  const spec = [...map].map(([host, target]) => `${host}=${target}`).join(",");
  return { site, domain, suffix, map, env: { ...env, DISCOVERY_RESOLVE: spec } };
}

describe("what a site says of itself, cleaned", () => {
  it.each([
    ["Home", null],
    ["Welcome to", null],
    ["Index of /", null],
    ["Access denied", null],
    ["Startseite", null],
    ["Página de inicio", null],
    ["Welcome to Acme", "Acme"],
    ["Acme Homepage", "Acme"],
    ["Bienvenue chez Acme", "Acme"],
  ])("%j without its generic words is %j", (text, left) => {
    expect(withoutGenericWords(text)).toBe(left);
  });

  it("drops markup, control and bidi characters and cuts long text by code point", () => {
    expect(plainSiteText("<img src=x onerror=alert(1)>Acme\u202e\u0007")).toBe("Acme");
    expect(plainSiteText("a <b>bold</b> `name`")).toBe("a bold name");
    expect(Array.from(plainSiteText("x".repeat(500))!)).toHaveLength(60);
  });

  it("agrees with the domain by its label, ignoring case, spaces, punctuation and legal forms, or as a word of it", () => {
    expect(agreesWithDomain("Quillstone Labs", "quillstone-labs.com")).toBe(true);
    expect(agreesWithDomain("QuillStone-Labs, Inc.", "quillstonelabs.com")).toBe(true);
    expect(agreesWithDomain("Acme Widgets", "acme.com")).toBe(true);
    expect(agreesWithDomain("The Acme Store", "acme.shop")).toBe(true);
    expect(agreesWithDomain("Stripe", "stripe-payments.com")).toBe(false);
    expect(agreesWithDomain("Acmeish", "acme.com")).toBe(false);
    expect(agreesWithDomain("Google", "quillstone-labs.com")).toBe(false);
  });

  it("takes the first candidate that agrees, in order, and the title's parts; else the domain, prettified", () => {
    expect(earnedName("quillstone-labs.com", { title: "Home" })).toEqual({ name: "Quillstone Labs", source: "domain" });
    expect(earnedName("acme.com", { title: "Acme | Official site" })).toEqual({ name: "Acme", source: "site" });
    expect(earnedName("acme.com", { title: "Welcome – Acme Widgets" })).toEqual({ name: "Acme Widgets", source: "site" });
    expect(earnedName("acme.com", { siteName: "Google", title: "Acme" })).toEqual({ name: "Acme", source: "site" });
    expect(earnedName("acme.com", { structuredName: "Acme Corporation", siteName: "Acme" })).toEqual({
      name: "Acme Corporation",
      source: "site",
    });
    expect(earnedName("acme.com", { title: "Just a moment..." })).toEqual({ name: "Acme", source: "domain" });
    expect(earnedName("xn--bcher-kva.ch", { title: "Startseite" })).toEqual({ name: "Bücher", source: "domain" });
  });

  it("reads a JSON-LD Organization's or WebSite's name, in a @graph too", async () => {
    const graph = JSON.stringify({
      "@context": "https://schema.org",
      "@graph": [{ "@type": "WebPage" }, { "@type": "Organization", name: "Acme" }],
    });
    const facts = await readPage(new TextEncoder().encode(`<script type="application/ld+json">${graph}</script><title>Home</title>`));
    expect(facts.structuredName).toBe("Acme");
  });

  it("recognises challenge, error and parking pages by their titles", () => {
    for (const title of [
      "Just a moment...",
      "Attention Required! | Cloudflare",
      "403 Forbidden",
      "502 Bad Gateway",
      "example.com is for sale",
    ])
      expect(isStandInPage(title)).toBe(true);
    for (const title of ["Acme", "Momentum Labs", "Forbidden Planet Store"])
      expect(isStandInPage(title)).toBe(title === "Forbidden Planet Store");
  });
});

describe("a discovered company's name", () => {
  it("a site titled Home is named after its domain, and its monogram letters the domain (Q), not H", async () => {
    const { domain, env: played } = await playedBy("quillstone-labs", { "/": page("<title>Home</title>") });
    expect(await runDiscovery(played, domain, { refresh: false })).toMatchObject({
      status: "nothing",
      siteName: expect.stringMatching(/^Quillstone Labs /),
    });
    const secret = await freshKey({ type: "secret" });
    const monogram = await exports.default.fetch(`${BASE}/${domain}?fallback=monogram&size=64`, {
      headers: { Authorization: `Bearer ${secret}` },
    });
    expect(monogram.status).toBe(200);
    expect(decodeURIComponent(monogram.headers.get("x-company-name")!)).toBe(domainName(domain));
    expect(new TextDecoder().decode(await monogram.arrayBuffer())).toContain(">Q</text>");
  });

  it("takes the site's own name where it agrees with the domain, marked as the site's", async () => {
    const { site, domain, suffix, map } = await playedBy("quillstone-labs", {});
    await site.set({
      "/": page(`<title>Welcome to QuillStone Labs ${suffix} | Home</title><link rel="icon" href="/i.png">`),
      "/i.png": image(png(64, 64)),
    });
    const report = await discoverDomain(env, db, domain, map);
    expect(report).toMatchObject({ outcome: "found", name: `QuillStone Labs ${suffix}`, nameSource: "site" });
  });

  it("is never what a site says that names another ('Google' on another's domain), nor markup", async () => {
    const { domain, map } = await playedBy("quillstone-labs", {
      "/": page(
        '<title>&lt;img src=x onerror=alert(1)&gt; Google</title><meta property="og:site_name" content="Google"><link rel="icon" href="/i.png">',
      ),
      "/i.png": image(png(64, 64)),
    });
    const report = await discoverDomain(env, db, domain, map);
    expect(report).toMatchObject({ outcome: "found", name: domainName(domain), nameSource: "domain" });
  });
});

describe("misses by cause", () => {
  const minutes = (n: number) => n * 60 * 1000;

  it("a site answering 503 is asked again after minutes, not a day", async () => {
    const site = await claimSite({ "/": { status: 503, type: "text/plain", body: "busy" } });
    const t0 = Date.now();
    const first = await runDiscovery(env, site.host, { refresh: false }, t0);
    expect(first).toMatchObject({ status: "nothing", reason: expect.stringContaining("did not answer") });
    if (first.status !== "nothing") throw new Error("unreachable");
    expect(first.missedUntil! - t0).toBeLessThanOrEqual(minutes(5));
    const asked = (await site.requests()).length;
    expect(await runDiscovery(env, site.host, { refresh: false }, t0 + minutes(1))).toMatchObject({ reason: "remembered miss" });
    expect((await site.requests()).length).toBe(asked);

    await site.set({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    expect(await runDiscovery(env, site.host, { refresh: false }, t0 + minutes(6))).toMatchObject({ status: "found" });
  });

  it("a challenge page counts as no answer: nothing of it is taken, and it is asked again after minutes", async () => {
    const site = await claimSite({
      "/": page('<title>Just a moment...</title><link rel="icon" href="/challenge.png">'),
      "/challenge.png": image(png(64, 64)),
    });
    const t0 = Date.now();
    const first = await runDiscovery(env, site.host, { refresh: false }, t0);
    expect(first).toMatchObject({ status: "nothing", reason: expect.stringContaining("did not answer") });
    expect((await site.requests()).map((r) => r.path)).not.toContain("/challenge.png");
    if (first.status !== "nothing") throw new Error("unreachable");
    expect(first.missedUntil! - t0).toBeLessThanOrEqual(minutes(5));
  });

  it("a site that answered with no usable icon is remembered the day", async () => {
    const site = await claimSite({ "/": page("<title>Nothing here</title>") });
    const t0 = Date.now();
    const first = await runDiscovery(env, site.host, { refresh: false }, t0);
    if (first.status !== "nothing") throw new Error("expected a miss");
    expect(first.missedUntil! - t0).toBe(Number(env.DISCOVERY_MISS_TTL_S) * 1000);
    expect(await runDiscovery(env, site.host, { refresh: false }, t0 + minutes(60))).toMatchObject({ reason: "remembered miss" });
  });
});
