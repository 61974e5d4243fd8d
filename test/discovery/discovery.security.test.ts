import { env, exports } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { domainName } from "../../src/catalogue/names";
import { findCompanyByDomain } from "../../src/catalogue/companies";
import { logosOfCompany } from "../../src/catalogue/logos";
import { searchCompanies } from "../../src/catalogue/search";
import type { CoordinatedOutcome } from "../../src/discovery/coordinator";
import { discoveryFor } from "../../src/discovery/coordinatorClient";
import { discoverDomain } from "../../src/discovery/discover";
import { checkUrl, fetchLimited, MAX_REDIRECTS, parseResolve } from "../../src/discovery/fetcher";
import { readManifest, readPage } from "../../src/discovery/page";
import { vectorKey } from "../../src/images/objectKeys";
import { readVars } from "../../src/env";
import { DISCOVERY_COUNTER, discoveryAsker, discoveryWindows } from "../../src/limits/discoveryLimits";
import { planLimits } from "../../src/limits/plans";
import { limiterNames, rateLimiterFor } from "../../src/limits/rateLimiterClient";
import { preparedFrom } from "../fixtures/images";
import { addAccount, addCompany, addKey, db } from "../helpers/catalogue";
import { BASE, fetchWith, freshKey } from "../lookup/helpers";
import { claimSite, elsewhereRequests, image, page, png, svg, text } from "./helpers";

const get = (path: string) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual" });
const resolve = () => parseResolve(env.DISCOVERY_RESOLVE, "");

describe("SSRF: URLs a site names are checked before anything is fetched", () => {
  it.each([
    ["http://169.254.169.254/latest/meta-data/", /IP address 169\.254\.169\.254/],
    ["http://[::1]/icon.png", /IP address \[::1\]/],
    ["http://0x7f.1/icon.png", /IP address 127\.0\.0\.1/],
    ["http://2130706433/icon.png", /IP address 127\.0\.0\.1/],
    ["file:///etc/passwd", /scheme file:/],
    ["ftp://example.com/icon.png", /scheme ftp:/],
    ["https://example.com:8080/icon.png", /port 8080/],
    ["http://localhost/icon.png", /not a public name/],
    ["http://metadata.google.internal/icon.png", /not a public name/],
    ["https://user:secret@example.com/icon.png", /credentials/],
  ])("refuses %s", (url, reason) => {
    const checked = checkUrl(url, resolve());
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.reason).toMatch(reason);
  });

  it("honours DISCOVERY_RESOLVE only locally, only for loopback, only for the hosts it names", () => {
    const spec = "a-site.com=127.0.0.1:8001,b-site.com=10.0.0.5:80,c-site.com=[::1]:8003";
    expect(parseResolve(spec, "https://logos.example.com").size).toBe(0);
    const map = parseResolve(spec, "");
    expect([...map.keys()].sort()).toEqual(["a-site.com", "c-site.com"]);
    expect(checkUrl("https://www.a-site.com/x.png?v=1", map)).toMatchObject({ ok: true, fetchUrl: "http://127.0.0.1:8001/x.png?v=1" });
    expect(checkUrl("https://other-site.com/x.png", map)).toMatchObject({ ok: true, fetchUrl: "https://other-site.com/x.png" });
    // A resolved host on another port is still refused: the port rule comes first.
    expect(checkUrl("https://a-site.com:8080/x.png", map).ok).toBe(false);
  });

  it("refuses icon URLs and redirects that point at another loopback port or at private addresses, fetching nothing there", async () => {
    const site = await claimSite({});
    const elsewhere = `127.0.0.1:${site.elsewherePort}`;
    await site.set({
      "/": page(
        `<link rel="icon" href="http://${elsewhere}/direct.png"><link rel="icon" sizes="512x512" href="http://localhost:${site.elsewherePort}/named.png">
         <link rel="apple-touch-icon" href="/hop.png"><link rel="icon" href="http://${site.host}:8080/port.png"><link rel="icon" href="http://[::1]:${site.elsewherePort}/v6.png">
         <link rel="icon" href="file:///etc/passwd"><link rel="icon" href="http://169.254.169.254/latest/meta-data/">`,
      ),
      "/hop.png": { status: 302, location: `http://${elsewhere}/redirected.png` },
    });
    const before = (await elsewhereRequests()).length;
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report.outcome).toBe("nothing");
    const refused = Object.fromEntries(report.candidates.map((c) => [c.url, c.refused]));
    expect(refused).toMatchObject({
      [`http://${elsewhere}/direct.png`]: expect.stringMatching(/^(port \d+|IP address .*) refused$/),
      [`http://localhost:${site.elsewherePort}/named.png`]: expect.stringMatching(/port/),
      [`https://${site.host}/hop.png`]: expect.stringMatching(/^(port \d+|IP address .*) refused$/),
      [`http://${site.host}:8080/port.png`]: expect.stringMatching(/port 8080/),
      "file:///etc/passwd": expect.stringMatching(/scheme/),
      "http://169.254.169.254/latest/meta-data/": expect.stringMatching(/IP address/),
    });
    expect((await elsewhereRequests()).length).toBe(before);
    // The one hop that was fetched is the site's own redirect; the loopback target never was.
    expect((await site.requests()).map((r) => r.path)).toContain("/hop.png");
  });

  it("cuts off a 50 MB icon at 5 MB and an endless page at 512 KiB, and still answers", async () => {
    const huge = await claimSite({
      "/": page('<link rel="icon" href="/huge.png"><link rel="icon" href="/ok.png">'),
      "/huge.png": { type: "image/png", size: 50 * 1024 * 1024 },
      "/ok.png": image(png(48, 48)),
    });
    const report = await discoverDomain(env, db, huge.host, resolve());
    expect(report.candidates.find((c) => c.url.endsWith("/huge.png"))?.refused).toMatch(/larger than 5242880 bytes/);
    expect(report.chosen?.url).toBe(`https://${huge.host}/ok.png`);
    expect(await huge.sent()).toBeLessThan(20 * 1024 * 1024);

    const endless = await claimSite({ "/": { endless: true }, "/favicon.ico": image(png(40, 40)) });
    const token = await freshKey();
    const response = await get(`/${endless.host}?token=${token}`);
    expect(response.status).toBe(302);
    expect(await endless.sent()).toBeLessThan(20 * 1024 * 1024);
  });

  it("reads the icons of a page whose head came at once and whose rest never did", { timeout: 20_000 }, async () => {
    const slow = await claimSite({
      "/": {
        type: "text/html",
        body: '<!doctype html><html><head><title>Slow Co</title><link rel="icon" href="/drip.png"></head><body>',
        drip: true,
      },
      "/drip.png": image(png(64, 64)),
    });
    const report = await discoverDomain(env, db, slow.host, resolve());
    expect(report).toMatchObject({ outcome: "found", name: domainName(slow.host), chosen: { url: `https://${slow.host}/drip.png` } });
  });

  it("judges fetched files by their bytes, not their Content-Type", async () => {
    const site = await claimSite({
      "/": page('<link rel="icon" href="/lies.png"><link rel="icon" href="/real.bin">'),
      "/lies.png": text("<html>not an image</html>", "image/png"),
      "/real.bin": image(png(64, 64), "text/html"),
    });
    const report = await discoverDomain(env, db, site.host, resolve());
    expect(report.candidates.find((c) => c.url.endsWith("/lies.png"))?.refused).toMatch(/not an image/);
    expect(report.chosen).toMatchObject({ url: `https://${site.host}/real.bin`, format: "png" });
  });

  it("sends a fixed User-Agent and nothing of the caller's request", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    const token = await freshKey();
    const response = await exports.default.fetch(`${BASE}/${site.host}?token=${token}`, {
      redirect: "manual",
      headers: { Cookie: "__Host-session=secret", Authorization: "Bearer x", Referer: "https://customer.example/" },
    });
    // Discovery ran and found the icon: the site was asked for its page and the icon at least.
    expect(response.status).toBe(302);
    const requests = await site.requests();
    expect(requests.map((r) => r.path)).toEqual(expect.arrayContaining(["/", "/i.png"]));
    for (const { headers } of requests) {
      expect(headers["user-agent"]).toMatch(/^logo-lookup-discovery\//);
      expect(headers.cookie).toBeUndefined();
      expect(headers.authorization).toBeUndefined();
      expect(headers.referer).toBeUndefined();
    }
  });
});

describe("what a site sends is held to the fetcher's limits", () => {
  it("follows five redirects, and refuses a sixth without fetching where it leads", async () => {
    expect(MAX_REDIRECTS).toBe(5);
    const site = await claimSite({
      "/five": { redirects: 5, location: "/five.png" },
      "/six": { redirects: 6, location: "/six.png" },
      "/five.png": image(png(32, 32)),
      "/six.png": image(png(512, 512, [30, 30, 200, 255])),
    });
    // Each URL fetched on its own: a whole discovery also stops at its ceiling of requests
    // (DISCOVERY_MAX_REQUESTS, test/discovery/bounded.test.ts), which the two would pass.
    const limits = { maxBytes: 1024 * 1024, timeoutMs: 5000, accept: "*/*", overflow: "refuse" as const };
    const five = await fetchLimited(`https://${site.host}/five`, limits, { resolve: resolve() });
    expect(five).toMatchObject({ ok: true, status: 200 });
    const six = await fetchLimited(`https://${site.host}/six`, limits, { resolve: resolve() });
    expect(six).toMatchObject({ ok: false, reason: "more than 5 redirects" });
    const paths = (await site.requests()).map((r) => r.path);
    expect(paths.filter((p) => p.startsWith("/five"))).toEqual(["/five", ...[1, 2, 3, 4].map((n) => `/five?hop=${n}`), "/five.png"]);
    // Six requests, each answered with a redirect; the seventh, its target, never asked.
    expect(paths.filter((p) => p.startsWith("/six"))).toEqual(["/six", ...[1, 2, 3, 4, 5].map((n) => `/six?hop=${n}`)]);
  });

  it("refuses an icon whose declared Content-Length is over the limit before reading any of it", async () => {
    // The body is a small, good PNG: only the length the site claims can refuse it.
    const site = await claimSite({
      "/": page('<link rel="icon" href="/claims-6mb.png"><link rel="icon" href="/honest.png">'),
      "/claims-6mb.png": { ...image(png(64, 64)), declaredLength: 6 * 1024 * 1024 },
      "/honest.png": image(png(48, 48)),
    });
    const report = await discoverDomain(env, db, site.host, resolve());
    const refused = report.candidates.find((c) => c.url.endsWith("/claims-6mb.png"))?.refused;
    expect(refused).toBe(`larger than ${5 * 1024 * 1024} bytes`);
    expect(report.chosen).toMatchObject({ url: `https://${site.host}/honest.png` });
  });

  it("gives up an image whose body stops coming, and keeps a page as far as it came", async () => {
    const head = '<!doctype html><html><head><title>Stalled Co</title><link rel="icon" href="/i.png"></head>';
    const site = await claimSite({
      "/stalled.png": { ...image(png(64, 64)), stall: 40 },
      "/": { type: "text/html", body: `${head}<body>${"text ".repeat(2000)}</body></html>`, stall: head.length },
    });
    // Long enough for the answer's head to come on a loaded machine (at 200 ms it once did not):
    // the fetches wait all of it, the bodies never finishing.
    const limits = { maxBytes: 1024 * 1024, timeoutMs: 1000, accept: "*/*" };
    // The bodies stall until the site is resumed, which happens only after the fetches gave up.
    const icon = await fetchLimited(`https://${site.host}/stalled.png`, { ...limits, overflow: "refuse" }, { resolve: resolve() });
    expect(icon).toMatchObject({ ok: false, reason: "no answer within 1000 ms", requested: true });
    const fetched = await fetchLimited(`https://${site.host}/`, { ...limits, overflow: "truncate" }, { resolve: resolve() });
    expect(fetched).toMatchObject({ ok: true, status: 200, truncated: true });
    expect(new TextDecoder().decode(fetched.ok ? fetched.bytes : new Uint8Array())).toBe(head);
    expect((await readPage(fetched.ok ? fetched.bytes : new Uint8Array())).title).toBe("Stalled Co");
    await site.resume();
  });
});

describe("hostile pages and manifests", () => {
  const attribute = fc.oneof(
    fc.constantFrom("icon", "ICON", "shortcut icon", "apple-touch-icon", "mask-icon", "manifest", "", "icon icon"),
    fc.string({ maxLength: 20 }),
  );
  const href = fc.oneof(
    fc.constantFrom(
      "/i.png",
      "i.png",
      "//x",
      "data:image/png;base64,AAAA",
      "data:,",
      "javascript:alert(1)",
      "http://[::1]/",
      "https://",
      "%%",
      "/m.json",
      "../../../../i.png",
    ),
    fc.string({ maxLength: 40 }),
  );
  const link = fc.record({
    rel: attribute,
    href,
    sizes: fc.oneof(fc.constantFrom("16x16", "any", "0x0", "99999x99999", "1x1 2x2"), fc.string({ maxLength: 12 })),
  });
  const html = fc
    .tuple(fc.array(link, { maxLength: 6 }), fc.string({ maxLength: 200 }), fc.boolean())
    .map(
      ([links, noise, base]) =>
        `${base ? `<base href="${noise.slice(0, 10)}">` : ""}<title>${noise}</title>` +
        links.map((l) => `<link rel="${l.rel}" href="${l.href}" sizes="${l.sizes}">`).join("") +
        `<meta name="theme-color" content="${noise.slice(0, 8)}">${noise}`,
    );
  const manifest = fc.oneof(
    fc.json(),
    fc
      .record({
        name: fc.oneof(fc.string(), fc.integer()),
        icons: fc.oneof(
          fc.array(
            fc.record({ src: fc.oneof(href, fc.integer()), sizes: fc.oneof(fc.string(), fc.constant(null)), purpose: fc.string() }),
            { maxLength: 4 },
          ),
          fc.string(),
        ),
      })
      .map((m) => JSON.stringify(m)),
  );

  // Thirty discoveries, one after another: over the 5 s default on a busy two-core machine.
  it("never answer a lookup with a 5xx", { timeout: 30_000 }, async () => {
    const token = await freshKey();
    await fc.assert(
      fc.asyncProperty(html, manifest, async (head, manifestBody) => {
        const site = await claimSite({
          "/": page(`${head}<link rel="manifest" href="/m.json">`),
          "/m.json": text(manifestBody, "application/manifest+json"),
          "/i.png": image(png(33, 33)),
        });
        const response = await get(`/${site.host}?token=${token}&fallback=monogram`);
        expect(response.status).toBeLessThan(500);
        expect([200, 302]).toContain(response.status);
      }),
      { numRuns: 30 },
    );
  });
});

describe("names a site gives itself: control and direction characters", () => {
  const encoder = new TextEncoder();

  it("are dropped, so that no name displays as another or drives a terminal; joiners in emoji stay", async () => {
    const title = async (html: string) => (await readPage(encoder.encode(html))).title;
    expect(await title("<title>Pay\u0000Pal&#27;[2J&#x202E;lapyap</title>")).toBe("PayPal[2Jlapyap");
    expect(await title("<title>\u200bAcme\u2066 Corp\u2069\ufeff</title>")).toBe("Acme Corp");
    expect(await title("<title>Acme \u202E Corp\u00ad\u2062</title>")).toBe("Acme Corp");
    const scotland = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}";
    expect(await title(`<title>Pubs of ${scotland}</title>`)).toBe(`Pubs of ${scotland}`);
    expect(await title("<title>\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645</title>")).toBe(
      "\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645",
    );
    expect(await title("<title>Family \u{1F468}\u200d\u{1F469}\u200d\u{1F467}</title>")).toBe(
      "Family \u{1F468}\u200d\u{1F469}\u200d\u{1F467}",
    );
    expect(await title("<title>&#1;&#x202E;</title>")).toBeNull();
    expect(readManifest(encoder.encode('{"name": "\\u0007Acme\\u001b[31m"}'))!.name).toBe("Acme[31m");
  });
});

describe("names a site gives itself: half an emoji", () => {
  const encoder = new TextEncoder();
  const longTitle = `${"a".repeat(199)}\u{1F600} and more`;
  const secretMonogram = async (host: string) =>
    exports.default.fetch(`${BASE}/${host}?fallback=monogram&size=64`, {
      headers: { Authorization: `Bearer ${await freshKey({ type: "secret" })}` },
    });

  it("reads a surrogate character reference as U+FFFD, as browsers do, and cuts a long name by code point", async () => {
    const names = [
      (await readPage(encoder.encode("<title>&#xD83D;Acme &#56832;</title>"))).title!,
      readManifest(encoder.encode('{"name": "\\ud83dAcme"}'))!.name!,
      (await readPage(encoder.encode(`<title>${longTitle}</title>`))).title!,
    ];
    // Well-formed first: a lone surrogate in a failure message breaks the test runner's own wire.
    expect(names.map((name) => name.isWellFormed())).toEqual([true, true, true]);
    expect(names).toEqual(["\ufffdAcme \ufffd", "\ufffdAcme", `${"a".repeat(199)}\u{1F600}`]);
  });

  // Each names itself as its domain is named (siteName.ts), so that what it says is taken.
  it.each([
    [
      "a title's character reference",
      (label: string) => ({ "/": page(`<title>&#xD83D;${label}</title>`) }),
      (label: string) => `\ufffd${label}`,
    ],
    [
      "a manifest's name",
      (label: string) => ({
        "/": page('<link rel="manifest" href="/m.json">'),
        "/m.json": text(`{"name": "\\ud83d${label}"}`, "application/manifest+json"),
      }),
      (label: string) => `\ufffd${label}`,
    ],
    [
      "a long title cut through a pair",
      (label: string) => ({ "/": page(`<title>${label} ${"a".repeat(57 - label.length)}\u{1F600} and more</title>`) }),
      (label: string) => `${label} ${"a".repeat(57 - label.length)}\u{1F600}…`,
    ],
  ])(
    "a secret-key monogram for a site naming itself with half an emoji (%s) answers 200 with the name well-formed",
    async (_, routes, name) => {
      const site = await claimSite({});
      const label = domainName(site.host);
      await site.set(routes(label));
      const response = await secretMonogram(site.host);
      expect(response.status).toBe(200);
      expect(response.headers.get("x-logo-source")).toBe("monogram");
      expect(decodeURIComponent(response.headers.get("x-company-name")!)).toBe(name(label));
      // The isolate remembers the miss: the next lookup answers from that memory, as well.
      expect((await secretMonogram(site.host)).status).toBe(200);
    },
  );

  it("a name that reaches the monogram's headers ill-formed all the same is made well-formed there", async () => {
    const outcome: CoordinatedOutcome = {
      status: "nothing",
      reason: "no usable icon",
      siteName: "\ud83dAcme",
      brandColor: null,
      missedUntil: Date.now() + 60_000,
    };
    const coordinator = {
      idFromName: () => ({}),
      get: () => ({ discover: async () => outcome }),
    } as unknown as Env["DISCOVERY_COORDINATOR"];
    const secret = await freshKey({ type: "secret" });
    const response = await fetchWith(
      { DISCOVERY_COORDINATOR: coordinator },
      `${BASE}/half-emoji-${crypto.randomUUID().slice(0, 8)}.com?fallback=monogram`,
      {
        headers: { Authorization: `Bearer ${secret}` },
      },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-company-name")).toBe("%EF%BF%BDAcme");
  });
});

describe("names a site gives itself: a catalogue company's", () => {
  it("never rank a discovered company above the catalogue's company of that name, imported before or after", async () => {
    const name = `Initech ${crypto.randomUUID().slice(0, 6)}`;
    const site = await claimSite({ "/": page(`<title>${name}</title><link rel="icon" href="/i.png">`), "/i.png": image(png(64, 64)) });
    const discovered = await get(`/${site.host}?token=${await freshKey()}`);
    expect(discovered.headers.get("x-logo-source")).toBe("discovered");

    // The real company, imported afterwards at the catalogue's default standing.
    const real = `initech-${crypto.randomUUID().slice(0, 6)}.com`;
    await addCompany({ name, domains: [real] }, await preparedFrom(png(40, 20)));
    const byName = await get(`/name/${encodeURIComponent(name)}?token=${await freshKey()}`);
    expect(byName.headers.get("x-logo-source")).toBe("catalogue");
    // The site's title is not its name (it does not agree with its domain): it is named after its domain.
    const hits = await searchCompanies(db, name, 5);
    expect(hits.map((hit) => [hit.domain, hit.companyName])).toEqual([[real, name]]);
    expect((await findCompanyByDomain(db, site.host))?.companyName).toBe(domainName(site.host));
  });
});

describe("a discovered SVG: a stranger's markup", () => {
  it("is stored without a vector, and format=svg gets the PNG made from it, as for any logo without one", async () => {
    const site = await claimSite({
      "/": page('<link rel="icon" type="image/svg+xml" href="/icon.svg">'),
      "/icon.svg": text(svg(), "image/svg+xml"),
    });
    const secret = await freshKey({ type: "secret" });
    const response = await exports.default.fetch(`${BASE}/${site.host}?format=svg&size=64`, {
      headers: { Authorization: `Bearer ${secret}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-logo-source")).toBe("discovered");
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("x-logo-format")).toBe("png");
    expect(new TextDecoder().decode(await response.arrayBuffer())).not.toContain("<svg");

    const company = (await findCompanyByDomain(db, site.host))!;
    const [logo] = await logosOfCompany(db, company);
    expect(logo).toMatchObject({ format: "svg", sourceSet: "discovered", renditions: { vector: false } });
    expect(await env.LOGOS.head(vectorKey(logo!.masterKey, logo!.renditions.version))).toBeNull();
  });
});

describe("an account's daily budget of discoveries", () => {
  /** A Free account that has started all but `left` of today's discoveries, and a key of it. */
  async function discoveriesLeft(left: number) {
    const account = await addAccount("free");
    const limiter = rateLimiterFor(env, limiterNames.discovery(account.id));
    await limiter.consume(
      discoveryWindows(planLimits.free.discoveriesPerDay),
      planLimits.free.discoveriesPerDay - left,
      Date.now(),
      DISCOVERY_COUNTER,
    );
    return { account, token: await addKey(account.id), limiter };
  }

  it("bounds the sites one account's lookups make the service fetch: past it, a miss asks no site", async () => {
    const { token } = await discoveriesLeft(1);

    const last = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    const found = await exports.default.fetch(`${BASE}/${last.host}?token=${token}`, { redirect: "manual" });
    expect(found.status).toBe(302);
    expect(found.headers.get("x-logo-source")).toBe("discovered");

    const beyond = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    const refused = await exports.default.fetch(`${BASE}/${beyond.host}?token=${token}`, { redirect: "manual" });
    expect(refused.status).toBe(404);
    expect(await refused.text()).toBe("Logo not found");
    expect(await beyond.requests()).toEqual([]);
    // Not remembered as a miss: another account's lookup discovers it.
    const other = await exports.default.fetch(`${BASE}/${beyond.host}?token=${await addKey((await addAccount("free")).id)}`, {
      redirect: "manual",
    });
    expect(other.status).toBe(302);
  });

  it("counts a discovery once: lookups joining the one under way cost nothing", async () => {
    const { token, limiter } = await discoveriesLeft(1);

    // A page of one unknown company's logo, shown to three visitors at once.
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    const lookups = await Promise.all(
      [1, 2, 3].map(() => exports.default.fetch(`${BASE}/${site.host}?token=${token}`, { redirect: "manual" })),
    );
    expect(lookups.map((response) => response.status)).toEqual([302, 302, 302]);
    expect((await site.requests()).filter((request) => request.path === "/")).toHaveLength(1);
    const [usage] = await limiter.usage(discoveryWindows(planLimits.free.discoveriesPerDay));
    expect(usage!.used).toBe(planLimits.free.discoveriesPerDay);
  });

  it("a lookup that joins a discovery refused for its starter's spent budget gets the logo all the same", async () => {
    const spent = await discoveriesLeft(0);
    const other = await addAccount("free");
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });

    // Two visitors' lookups of one new domain reach its coordinator together, the spent account's first.
    const coordinator = discoveryFor(env, site.host);
    const ask = (accountId: string) =>
      coordinator.discover(site.host, {
        budgetMs: 10_000,
        asker: discoveryAsker(readVars(env), { accountId, plan: "free", emailConfirmed: true, address: null }),
      });
    const [refused, joined] = await Promise.all([ask(spent.account.id), ask(other.id)]);
    expect(refused).toMatchObject({ status: "nothing", budgetSpent: { budget: "account" } });
    expect(joined).toEqual({ status: "found", companyId: expect.any(Number) });
    expect((await site.requests()).filter((request) => request.path === "/")).toHaveLength(1);

    // Counted once, against the account whose lookup fetched the site.
    const [usage] = await rateLimiterFor(env, limiterNames.discovery(other.id)).usage(discoveryWindows(planLimits.free.discoveriesPerDay));
    expect(usage!.used).toBe(1);
    const found = await exports.default.fetch(`${BASE}/${site.host}?token=${spent.token}`, { redirect: "manual" });
    expect(found.headers.get("x-logo-source")).toBe("discovered");
  });
});
