import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { companies } from "../../schema";
import { RENDITIONS_VERSION } from "../../src/images/renditions";
import { emptySite } from "../discovery/helpers";
import { addCompany, db } from "../helpers/catalogue";
import { freezeClock } from "../helpers/clock";
import { assetKeyOf, BASE, fetchWith, freshCompany, freshKey } from "./helpers";
import { encode } from "fast-png";
import { darkLogo40x20, preparedFrom, redPng } from "../fixtures/images";

const get = (path: string, init?: RequestInit) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual", ...init });
const imageInfo = async (response: Response) => env.IMAGES.info(response.body!);

describe("GET /{domain}: redirect (the default)", () => {
  it("redirects to a 128 px rendition with the spec's headers", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const before = Math.floor(Date.now() / 1000);
    const response = await get(`/${domain}?token=${token}`);
    expect(response.status).toBe(302);
    expect(response.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("599");
    const reset = Number(response.headers.get("x-ratelimit-reset"));
    expect(reset).toBeGreaterThan(before);
    expect(reset).toBeLessThanOrEqual(before + 61);
    const location = response.headers.get("location")!;
    // Relative (no public base URL is configured here, and never the request's Host), and
    // unsigned: 128 is a rung of the asset route's ladder, served as asked to anyone.
    expect(location).toMatch(/^\/assets\/[A-Za-z0-9_-]+\?width=128$/);
    expect(assetKeyOf(location)).toMatch(new RegExp(`^logos/${domain.replaceAll(".", "\\.")}/icon\\.test\\.[0-9a-f]{16}\\.png$`));
  });

  it("signs a width between the ladder's rungs, which the asset route serves exact only so", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const location = (await get(`/${domain}?token=${token}&size=100`)).headers.get("location")!;
    expect(location).toMatch(/^\/assets\/[A-Za-z0-9_-]+\?width=100&signature=[\w-]{43}$/);
    expect(await imageInfo(await get(location))).toMatchObject({ width: 100, height: 50 });
    // Without the signature the same width goes up to the next rung; with it altered, 403.
    const unsigned = location.slice(0, location.indexOf("&signature="));
    expect(await imageInfo(await get(unsigned))).toMatchObject({ width: 128, height: 64 });
    expect((await get(`${unsigned}&signature=${"A".repeat(43)}`)).status).toBe(403);
  });

  it("leads, when followed, to the real PNG at the requested width with the aspect kept", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    for (const [size, height] of [
      [128, 64],
      [20, 10],
      [800, 400],
    ] as const) {
      const redirect = await get(`/${domain}?token=${token}&size=${size}`);
      const image = await get(redirect.headers.get("location")!);
      expect(image.status).toBe(200);
      expect(image.headers.get("content-type")).toBe("image/png");
      expect(await imageInfo(image)).toMatchObject({ format: "image/png", width: size, height });
    }
  });

  it.each([
    ["", ".png"],
    ["&greyscale=true", `.v${RENDITIONS_VERSION}.grey.png`],
    ["&greyscale=YES", `.v${RENDITIONS_VERSION}.grey.png`],
    ["&greyscale=0", ".png"],
    ["&theme=light", ".png"],
    ["&theme=dark", `.v${RENDITIONS_VERSION}.dark.png`],
    ["&theme=dark&greyscale=1", `.v${RENDITIONS_VERSION}.dark-grey.png`],
  ])("serves the rendition for %j", async (query, suffix) => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const key = assetKeyOf((await get(`/${domain}?token=${token}${query}`)).headers.get("location")!)!;
    expect(key.slice(key.indexOf(".test.") + 22)).toBe(suffix);
  });

  it("normalises the domain and falls back to the registrable domain", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    for (const asked of [`WWW.${domain.toUpperCase()}.`, `shop.${domain}`]) {
      expect((await get(`/${asked}?token=${token}`)).status).toBe(302);
    }
  });

  it("points at the CDN's image-resizing path when a CDN is configured", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const response = await fetchWith({ CDN_URL: "https://cdn.example.com" }, `${BASE}/${domain}?token=${token}&size=64`, {
      redirect: "manual",
    });
    expect(response.headers.get("location")).toMatch(
      new RegExp(
        `^https://cdn\\.example\\.com/cdn-cgi/image/width=64,fit=contain,format=png/logos/${domain.replaceAll(".", "\\.")}/icon\\.test\\.[0-9a-f]{16}\\.png$`,
      ),
    );
  });

  it("uses PUBLIC_BASE_URL for its own asset route", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const response = await fetchWith({ PUBLIC_BASE_URL: "https://logos.example.com" }, `${BASE}/${domain}?token=${token}`);
    expect(response.headers.get("location")).toMatch(/^https:\/\/logos\.example\.com\/assets\//);
  });

  it("answers HEAD with the same status and headers and no body", async () => {
    // One minute for both: only the count of requests left tells them apart.
    freezeClock();
    const headers = (response: Response) => Object.fromEntries(response.headers);
    const { domain } = await freshCompany();
    const token = await freshKey();
    const secret = await freshKey({ type: "secret" });
    const unknown = await emptySite();
    for (const [mode, path, init] of [
      ["redirect", `/${domain}?token=${token}`, {}],
      ["bytes", `/${domain}?token=${token}&size=64`, {}],
      ["redirect", `/${unknown}?token=${token}`, {}],
      ["redirect", `/${domain}?size=1200`, { headers: { Authorization: `Bearer ${secret}` } }],
    ] as const) {
      const vars = { LOOKUP_RESPONSE: mode };
      const got = await fetchWith(vars, `${BASE}${path}`, { redirect: "manual", ...init });
      const head = await fetchWith(vars, `${BASE}${path}`, { redirect: "manual", method: "HEAD", ...init });
      const label = `${mode} ${path}`;
      expect(head.status, label).toBe(got.status);
      const left = Number(got.headers.get("x-ratelimit-remaining"));
      expect(left, label).toBeGreaterThan(0);
      // RFC 9110 §9.3.2: HEAD may leave out Content-Length, which the runtime works out from a body.
      // Each is a request of its own, with an id of its own.
      const { "content-length": length, "x-request-id": getId, ...expected } = headers(got);
      const { "content-length": headLength, "x-request-id": headId, ...received } = headers(head);
      expect(received, label).toEqual({ ...expected, "x-ratelimit-remaining": String(left - 1) });
      expect([getId, headId].every((id) => /^[\w-]+$/.test(id ?? "")) && getId !== headId, label).toBe(true);
      expect([undefined, length], label).toContain(headLength);
      expect(await head.text(), label).toBe("");
      expect((await got.arrayBuffer()).byteLength > 0, label).toBe(got.status !== 302);
    }
  });
});

describe("GET /{domain}: bytes", () => {
  it("answers 200 with the transformed PNG and the spec's headers", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const response = await fetchWith({ LOOKUP_RESPONSE: "bytes" }, `${BASE}/${domain}?token=${token}&size=64`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("599");
    expect(await imageInfo(response)).toMatchObject({ width: 64, height: 32 });
  });

  it("never makes a very tall logo taller than 3,200 px: the width gives way", async () => {
    const png = encode({ width: 2, height: 400, data: new Uint8Array(2 * 400 * 4).fill(255), channels: 4, depth: 8 });
    const tall = {
      ...darkLogo40x20(),
      original: png,
      files: { master: png, grey: png },
      renditions: { ...darkLogo40x20().renditions, dark: false },
      width: 2,
      height: 400,
      contentHash: "7a12".padEnd(64, "4"),
    };
    const { domain } = await freshCompany({ image: tall });
    const token = await freshKey();
    const response = await fetchWith({ LOOKUP_RESPONSE: "bytes" }, `${BASE}/${domain}?token=${token}&size=800`);
    expect(response.status).toBe(200);
    expect(await imageInfo(response)).toMatchObject({ width: 16, height: 3200 });
  });

  it("answers HEAD without reading the image", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const response = await fetchWith({ LOOKUP_RESPONSE: "bytes" }, `${BASE}/${domain}?token=${token}`, { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(await response.text()).toBe("");
  });
});

describe("lookup by ticker and by name", () => {
  it("finds the company by ticker, with or without exchange", async () => {
    const symbol = `T${crypto
      .randomUUID()
      .slice(0, 5)
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, "X")}`;
    await freshCompany({ ticker: { symbol, exchange: "NYSE" } });
    const token = await freshKey();
    expect((await get(`/ticker/${symbol.toLowerCase()}?token=${token}`)).status).toBe(302);
    expect((await get(`/ticker/NYSE:${symbol}?token=${token}`)).status).toBe(302);
    expect((await get(`/ticker/NASDAQ:${symbol}?token=${token}`)).status).toBe(404);
  });

  it("finds the company by name, ignoring case and punctuation", async () => {
    const { name } = await freshCompany({ name: `Zeta-Omega ${crypto.randomUUID().slice(0, 6)}` });
    const token = await freshKey();
    expect((await get(`/name/${encodeURIComponent(name.toUpperCase().replace("-", " "))}?token=${token}`)).status).toBe(302);
  });

  it("finds a name with a slash in it, encoded; another path segment is no name", async () => {
    const { name } = await freshCompany({ name: `shadcn/ui ${crypto.randomUUID().slice(0, 6)}` });
    const token = await freshKey();
    expect((await get(`/name/${encodeURIComponent(name)}?token=${token}`)).status).toBe(302);
    const [first, second] = name.split("/");
    const segments = await get(`/name/${first}/${encodeURIComponent(second!)}?token=${token}`);
    expect([segments.status, await segments.text()]).toEqual([400, "Invalid name: 1 to 200 characters"]);
  });
});

describe("a logo whose image changes", () => {
  it("still answers a redirect handed out before the change: the old image stays two days", async () => {
    const { domain, name } = await freshCompany();
    const token = await freshKey();
    const before = (await get(`/${domain}?token=${token}&size=32`)).headers.get("location")!;
    // The catalogue's image is replaced (an import of a changed file).
    await addCompany({ name, domains: [domain] }, await preparedFrom(redPng));
    const held = await exports.default.fetch(new URL(before, BASE));
    expect([held.status, held.headers.get("content-type")]).toEqual([200, "image/png"]);
    await held.body?.cancel();
  });
});

describe("the secret-key path (server SDK)", () => {
  it("answers with bytes up to 1,200 px and the logo's metadata, never a redirect", async () => {
    const { domain, name, logoId, companyId } = await freshCompany();
    const secret = await freshKey({ type: "secret" });
    const response = await get(`/${domain}?size=1200`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(200);
    expect(
      Object.fromEntries(
        [...response.headers].filter(([k]) => k.startsWith("x-logo") || k.startsWith("x-company") || k.startsWith("x-source")),
      ),
    ).toEqual({
      "x-logo-id": String(logoId),
      "x-company-id": String(companyId),
      "x-company-name": encodeURIComponent(name),
      "x-logo-domain": domain,
      "x-logo-variant": "icon",
      "x-logo-width": "1200",
      "x-logo-height": "600",
      "x-source-width": "40",
      "x-source-height": "20",
      "x-logo-source": "catalogue",
      // When the image was last written or confirmed (here: imported just now), as an HTTP date.
      "x-logo-updated": expect.stringMatching(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/),
    });
    expect(Date.now() - Date.parse(response.headers.get("x-logo-updated")!)).toBeLessThan(60_000);
    expect(await imageInfo(response)).toMatchObject({ width: 1200, height: 600 });
  });
});

describe("caching", () => {
  it("serves repeat lookups without reading D1, while still counting each request", async () => {
    const { domain, companyId } = await freshCompany();
    const token = await freshKey();
    const first = await get(`/${domain}?token=${token}`);
    await db.delete(companies).where(eq(companies.id, companyId));
    const second = await get(`/${domain}?token=${token}`);
    expect(second.status).toBe(302);
    expect(second.headers.get("location")).toBe(first.headers.get("location"));
    expect(second.headers.get("x-ratelimit-remaining")).toBe("598");
  });

  it("answers every repeat with the first answer's headers but a remaining count one lower each time", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const answers = [];
    for (let i = 0; i < 4; i++)
      answers.push(await get(`/${domain}?token=${token}&size=64`, { headers: { Origin: "https://anyone.example" } }));
    // Every answer is its own request, with its own id; the rest of the headers are the first's.
    const ids = answers.map((response) => response.headers.get("x-request-id"));
    expect(new Set(ids).size).toBe(answers.length);
    const [first, ...repeats] = answers.map((response) => {
      const headers = Object.fromEntries(response.headers);
      delete headers["x-request-id"];
      return { status: response.status, headers };
    });
    expect(first).toMatchObject({
      status: 302,
      headers: {
        "access-control-allow-origin": "*",
        "cache-control": "public, max-age=86400",
        "x-logo-source": "catalogue",
        "x-ratelimit-remaining": "599",
      },
    });
    expect(Number(first!.headers["x-ratelimit-reset"]) * 1000).toBeGreaterThan(Date.now());
    repeats.forEach((repeat, i) => {
      expect(repeat).toEqual({ ...first, headers: { ...first!.headers, "x-ratelimit-remaining": String(598 - i) } });
    });
  });

  it("answers each repeated URL with its own logo and width, however the URLs interleave", async () => {
    const [a, b] = [await freshCompany(), await freshCompany()];
    const token = await freshKey();
    const urls = [`/${a.domain}?token=${token}&size=64`, `/${b.domain}?token=${token}&size=64`, `/${a.domain}?token=${token}&size=32`];
    const locations = async () => {
      const found: string[] = [];
      for (const url of urls) found.push((await get(url)).headers.get("location")!);
      return found;
    };
    const first = await locations();
    expect(first.map((location) => [assetKeyOf(location)?.split("/")[1], new URL(location, BASE).searchParams.get("width")])).toEqual([
      [a.domain, "64"],
      [b.domain, "64"],
      [a.domain, "32"],
    ]);
    expect(await locations()).toEqual(first);
    expect(await locations()).toEqual(first);
  });
});

describe("URLs the isolate does not remember", () => {
  it("longer than any it keeps are answered as their short forms are, every time, the remaining count stepping down", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const location = (await get(`/${domain}?token=${token}`)).headers.get("location");
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await get(`/${domain}?token=${token}&utm_campaign=${"x".repeat(3000)}`));
    expect(answers.map((r) => [r.status, r.headers.get("location"), r.headers.get("x-ratelimit-remaining")])).toEqual([
      [302, location, "598"],
      [302, location, "597"],
      [302, location, "596"],
    ]);
  });

  it("with /assets/ in their query are answered as any other lookup", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const location = (await get(`/${domain}?token=${token}`)).headers.get("location");
    const answer = await get(`/${domain}?token=${token}&ref=/assets/x`);
    expect([answer.status, answer.headers.get("location"), answer.headers.get("x-ratelimit-remaining")]).toEqual([302, location, "598"]);
  });

  it("with a domain far longer than any domain are refused with the spec's 400 every time", async () => {
    const token = await freshKey();
    for (let i = 0; i < 2; i++) {
      const response = await get(`/${"a".repeat(400)}.com?token=${token}`);
      expect([response.status, await response.text()]).toEqual([400, "Invalid domain format"]);
    }
  });
});

describe("repeat bytes lookups", () => {
  it("serve the same full PNG every time", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const bodies: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await fetchWith({ LOOKUP_RESPONSE: "bytes" }, `${BASE}/${domain}?token=${token}&size=48`);
      expect(response.status).toBe(200);
      bodies.push([...new Uint8Array(await response.arrayBuffer())].join(","));
    }
    expect(bodies[0]!.length).toBeGreaterThan(50);
    expect(new Set(bodies).size).toBe(1);
  });
});
