import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findCompanyByDomain } from "../../src/catalogue/companies";
import { domainName } from "../../src/catalogue/names";
import { bestOf, discoverDomain } from "../../src/discovery/discover";
import { parseResolve } from "../../src/discovery/fetcher";
import { readPage } from "../../src/discovery/page";
import { toBase64 } from "../../src/lib/encoding";
import { db } from "../helpers/catalogue";
import { claimSite, image, page, png, text } from "./helpers";

/** A page as a browser reads it: character references, the page's own encoding, redirects, <base>. */
const resolve = () => parseResolve(env.DISCOVERY_RESOLVE, "");
const utf8 = (html: string) => new TextEncoder().encode(html);
/** Text of code points under U+0100 as single bytes (windows-1252 agrees with Latin-1 there). */
const singleBytes = (html: string) => Uint8Array.from(html, (ch) => ch.charCodeAt(0));
const bytesPage = (bytes: Uint8Array, type: string) => ({ type, base64: toBase64(bytes) });

describe("character references in what a page names", () => {
  it("decodes named, decimal and hex references in attribute values and the title", async () => {
    const facts = await readPage(
      utf8(
        `<title>Caf&eacute; &ndash; Home &#x80;&#128512;&#0;&#X41;&notanentity;</title>
         <meta property="og:site_name" content="Ben &amp; Jerry&#39;s"><meta name="application-name" content="M&uuml;ller &amp;amp; S&ouml;hne">
         <meta name="theme-color" content="&#35;3a7"><base href="/static&#47;">
         <link rel="icon" href="/i.png?v=1&amp;s=2" sizes="16x16&#32;96x96" type="image&#x2F;PNG"><link rel="manifest" href="/m.json?a=1&amp;b=2">`,
      ),
    );
    // &#x80; is read as windows-1252 reads 0x80, as browsers do; &#0; is U+FFFD.
    expect(facts.title).toBe("Café – Home €\u{1F600}\ufffdA&notanentity;");
    expect(facts.siteName).toBe("Ben & Jerry's");
    expect(facts.applicationName).toBe("Müller &amp; Söhne");
    expect(facts.themeColor).toBe("#3a7");
    expect(facts.baseHref).toBe("/static/");
    expect(facts.icons).toEqual([{ href: "/i.png?v=1&s=2", rel: "icon", size: 96, type: "image/png" }]);
    expect(facts.manifestHref).toBe("/m.json?a=1&b=2");
  });

  it("fetches an icon at the URL its escaped href names", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png?v=1&amp;s=2">'), "/i.png": image(png(64, 64)) });
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report.chosen?.url).toBe(`https://${site.host}/i.png?v=1&s=2`);
    expect((await site.requests()).map((r) => r.path)).toContain("/i.png?v=1&s=2");
  });
});

describe("a page in another encoding than UTF-8", () => {
  it.each([
    ["the Content-Type's charset", "text/html; charset=windows-1252", "<title>Caf\u00e9 M\u00fcller</title>"],
    ["a <meta charset>", "text/html", '<meta charset="windows-1252"><title>Caf\u00e9 M\u00fcller</title>'],
    [
      "a <meta http-equiv> Content-Type",
      "text/html",
      '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><title>Caf\u00e9 M\u00fcller</title>',
    ],
  ])("is read in the encoding %s names", async (_, type, head) => {
    // Named as the domain is, so that the site's own words are taken (siteName.ts).
    const site = await claimSite({});
    const named = head.replace("<title>", `<title>${domainName(site.host)} `);
    await site.set({ "/": bytesPage(singleBytes(`<!doctype html><html><head>${named}</head></html>`), type) });
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report).toMatchObject({ name: `${domainName(site.host)} Café Müller`, nameSource: "site" });
  });

  it("reads Shift_JIS named by a meta tag, and takes the header's charset over the page's", async () => {
    const sjis = new Uint8Array([
      ...singleBytes('<meta http-equiv="content-type" content="text/html;charset=shift_jis"><title>'),
      0x93,
      0xfa,
      0x96,
      0x7b,
      ...singleBytes("</title>"),
    ]);
    expect((await readPage(sjis, "text/html")).title).toBe("日本");
    expect((await readPage(singleBytes('<meta charset="utf-8"><title>Caf\u00e9</title>'), "text/html; charset=windows-1252")).title).toBe(
      "Café",
    );
    // No charset anywhere, or one TextDecoder does not know: UTF-8.
    expect((await readPage(utf8("<title>Café</title>"), "text/html")).title).toBe("Café");
    expect((await readPage(utf8("<title>Café</title>"), "text/html; charset=no-such-encoding")).title).toBe("Café");
  });
});

describe("redirects and <base href>", () => {
  it("resolves a manifest's icons against the manifest's URL after its redirects", async () => {
    const site = await claimSite({
      "/": page('<link rel="manifest" href="/m.json">'),
      "/m.json": { status: 302, location: "/app/site.webmanifest" },
      "/app/site.webmanifest": text(JSON.stringify({ icons: [{ src: "icon-192.png", sizes: "192x192" }] }), "application/manifest+json"),
      "/app/icon-192.png": image(png(192, 192)),
    });
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report.chosen?.url).toBe(`https://${site.host}/app/icon-192.png`);
  });

  it("asks the page's own site for /favicon.ico and reports the page's URL, whatever <base href> names", async () => {
    const other = await claimSite({ "/": page("<title>Elsewhere</title>") });
    const site = await claimSite({
      "/": page(`<base href="https://${other.host}/assets/"><title>Based Elsewhere</title>`),
      "/favicon.ico": image(png(48, 48)),
    });
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report.page).toBe(`https://${site.host}/`);
    expect(report.chosen?.url).toBe(`https://${site.host}/favicon.ico`);
    expect(await other.requests()).toEqual([]);
  });

  it("takes neither the name nor the icon of another site the home page redirects to", async () => {
    const social = await claimSite({
      "/acmebakery": page(
        '<title>Acme Bakery | Facebook</title><meta property="og:site_name" content="Facebook"><meta name="theme-color" content="#1877f2"><link rel="icon" href="/fb.png">',
      ),
      "/fb.png": image(png(64, 64)),
      "/favicon.ico": image(png(64, 64)),
    });
    const site = await claimSite({ "/": { status: 301, location: `https://${social.host}/acmebakery` } });
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report).toMatchObject({
      outcome: "nothing",
      name: domainName(site.host),
      nameSource: "domain",
      brandColor: null,
      page: `https://${social.host}/acmebakery`,
    });
    expect(report.reason).toContain(social.host);
    expect((await social.requests()).map((r) => r.path)).toEqual(["/acmebakery"]);
    expect(await findCompanyByDomain(db, site.host)).toBeNull();
  });

  it("takes nothing of another site the home page redirects to, even when that site's page refuses the Worker", async () => {
    const parent = await claimSite({
      "/acmebakery": { status: 403, type: "text/html", body: "challenge" },
      "/favicon.ico": image(png(64, 64)),
    });
    const site = await claimSite({
      "/": { status: 301, location: `https://${parent.host}/acmebakery` },
      "/favicon.ico": { status: 301, location: `https://${parent.host}/favicon.ico` },
    });
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report).toMatchObject({ outcome: "nothing", name: domainName(site.host), brandColor: null });
    expect(report.reason).toContain(parent.host);
    expect((await parent.requests()).map((r) => r.path)).not.toContain("/favicon.ico");
    expect(await findCompanyByDomain(db, site.host)).toBeNull();
  });

  it("takes the icon and colour, not the name, of its own name under another suffix (a country site sent to the main one)", async () => {
    const site = await claimSite({});
    await site.set({
      "/": { status: 301, location: `https://${site.host}/en/` },
      "/en/": page('<title>Acme Worldwide</title><meta name="theme-color" content="#123456"><link rel="icon" href="/i.png">'),
      "/i.png": image(png(64, 64)),
    });
    // The same name under .de, served by the same fake site.
    const country = site.host.replace(/\.com$/, ".de");
    const map = new Map([...resolve(), [country, resolve().get(site.host)!]]);
    const report = await discoverDomain(env, db, country, map);
    expect(report).toMatchObject({
      outcome: "found",
      name: domainName(country),
      brandColor: "#123456",
      chosen: { url: `https://${site.host}/i.png` },
    });
  });

  it("counts a domain that is a private suffix itself (github.io) by its name, like any other", async () => {
    const site = await claimSite({});
    await site.set({
      "/": { status: 301, location: "https://github.com/home" },
      "/home": page('<title>GitHub</title><link rel="icon" href="/i.png">'),
      "/i.png": image(png(64, 64)),
    });
    const port = resolve().get(site.host)!;
    const report = await discoverDomain(
      env,
      db,
      "github.io",
      new Map([
        ["github.io", port],
        ["github.com", port],
      ]),
    );
    expect(report).toMatchObject({ outcome: "found", name: "Github", chosen: { url: "https://github.com/i.png" } });
  });

  it("still takes the name and icon of its own site's page after a redirect within it", async () => {
    const site = await claimSite({});
    await site.set({
      "/": { status: 302, location: `https://www.${site.host}/home` },
      "/home": page(`<title>${domainName(site.host)} Bakery</title><link rel="icon" href="/i.png">`),
      "/i.png": image(png(64, 64)),
    });
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report).toMatchObject({
      outcome: "found",
      name: `${domainName(site.host)} Bakery`,
      chosen: { url: `https://www.${site.host}/i.png` },
    });
  });
});

describe("data: URLs", () => {
  it("reads an icon named by an upper-case DATA: URL", async () => {
    const inline = `DATA:image/png;base64,${toBase64(png(64, 64))}`;
    const site = await claimSite({ "/": page(`<link rel="icon" href="${inline}">`) });
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report.outcome).toBe("found");
    expect(report.chosen).toMatchObject({ format: "png", width: 64 });
    expect(report.chosen!.url).toBe(inline);
    expect(await findCompanyByDomain(db, site.host)).not.toBeNull();
  });
});

describe("memory over the rounds", () => {
  it("keeps the fetched bytes and pixels of the best candidate only", async () => {
    const site = await claimSite({});
    const sizes = [20, 24, 28, 30, 31, 26, 40, 36];
    await site.set(Object.fromEntries(sizes.map((size) => [`/${size}.png`, image(png(size, size))])));
    // The first three rounds (two at a time) give nothing of 32 px or more, so a fourth is fetched: every candidate decoded.
    const candidates: Parameters<typeof bestOf>[1] = sizes.map((size) => ({
      url: `https://${site.host}/${size}.png`,
      from: "link icon",
      declaredSize: null,
      declaredType: null,
    }));
    const best = await bestOf(env, candidates, resolve());
    expect(best?.url).toBe(`https://${site.host}/40.png`);
    expect(candidates.filter((c) => c.score !== undefined)).toHaveLength(sizes.length);
    const holding = candidates.filter((c) => c.bytes !== undefined || c.decoded !== undefined).map((c) => c.url);
    expect(holding).toEqual([best!.url]);
  });
});
