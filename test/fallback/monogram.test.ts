import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { domainColour, firstLetter, monogramLetter, monogramSvg, tileColour } from "../../src/fallback/monogram";
import { contrastOf } from "../../src/images/colour";
import { setKeyFallback } from "../../src/keys/apiKeys";
import { claimSite, page } from "../discovery/helpers";
import { db } from "../helpers/catalogue";
import { BASE, fetchWith, freshCompany, freshKey } from "../lookup/helpers";

// Monograms answer misses; discovery is off here unless a test asks a fake site, so no
// lookup reaches for the network.
const offline = (path: string, init?: RequestInit) => fetchWith({ DISCOVERY: "off" }, `${BASE}${path}`, { redirect: "manual", ...init });
const svgOf = async (response: Response) => new TextDecoder().decode(await response.arrayBuffer());
const fillOf = (svg: string) => /<rect[^>]* fill="(#[0-9a-f]{6})"/.exec(svg)?.[1];
const letterOf = (svg: string) => /<text[^>]*>([^<]*)<\/text>/.exec(svg)?.[1];

describe("fallback=monogram", () => {
  it("answers a miss with an SVG monogram at the requested size, marked as such, that allows nothing to run", async () => {
    const token = await freshKey();
    const response = await offline(`/nothing-here-${crypto.randomUUID().slice(0, 8)}.com?token=${token}&fallback=monogram&size=64`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    expect(response.headers.get("x-logo-source")).toBe("monogram");
    expect(response.headers.get("content-security-policy")).toBe("default-src 'none'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("599");
    const svg = await svgOf(response);
    expect(letterOf(svg)).toBe("N");
    expect(await env.IMAGES.info(new Response(svg).body!)).toMatchObject({ format: "image/svg+xml" });
    expect(svg).toMatch(/^<svg [^>]*width="64" height="64"/);
  });

  it("draws the first letter of the Unicode domain in any script", async () => {
    const token = await freshKey();
    for (const [domain, letter] of [
      ["xn--bcher-kva.ch", "B"],
      ["例子.中国", "例"],
      ["ÉCOLE-42.fr", "É"],
      ["مثال.com", "م"],
      ["42things.io", "4"],
    ] as const) {
      const svg = await svgOf(await offline(`/${encodeURIComponent(domain)}?token=${token}&fallback=monogram`));
      expect(letterOf(svg), domain).toBe(letter);
    }
  });

  it("uses the name and theme colour the site gave when discovery found no icon", async () => {
    // A name is taken from a site only where it agrees with the domain (src/discovery/siteName.ts):
    // the site calls itself by its domain's label, in lower case after a word of its own.
    const site = await claimSite({});
    const label = site.host.split(".")[0]!;
    await site.set({ "/": page(`<title>zebra ${label} &amp; co</title><meta name="theme-color" content="#1E40AF">`) });
    const token = await freshKey();
    const response = await exports.default.fetch(`${BASE}/${site.host}?token=${token}&fallback=monogram`);
    const svg = await svgOf(response);
    expect(letterOf(svg)).toBe("Z");
    expect(fillOf(svg)).toBe("#1e40af");
    expect(response.headers.get("cache-control")).toBe("public, max-age=3600");
  });

  it("honours greyscale and keeps the tile visible on the requested theme", async () => {
    const token = await freshKey();
    const domain = `grey-${crypto.randomUUID().slice(0, 8)}.com`;
    const coloured = fillOf(await svgOf(await offline(`/${domain}?token=${token}&fallback=monogram`)))!;
    expect(coloured).toBe(domainColour(domain));
    const grey = fillOf(await svgOf(await offline(`/${domain}?token=${token}&fallback=monogram&greyscale=1`)))!;
    expect(grey.slice(1, 3)).toBe(grey.slice(3, 5));
    expect(grey.slice(3, 5)).toBe(grey.slice(5, 7));
    // A near-black brand colour is lifted on a dark page, a near-white one darkened on a light page.
    expect(tileColour({ domain, brandColor: "#050505", theme: "dark", greyscale: false })).not.toBe("#050505");
    expect(tileColour({ domain, brandColor: "#fafafa", theme: "light", greyscale: false })).not.toBe("#fafafa");
    expect(tileColour({ domain, brandColor: "#050505", theme: "light", greyscale: false })).toBe("#050505");
  });

  it("is a key's default when an operator set it, and fallback=none insists on the 404", async () => {
    const token = await freshKey();
    const miss = `/default-${crypto.randomUUID().slice(0, 8)}.com?token=${token}`;
    expect((await offline(miss)).status).toBe(404);
    const set = await setKeyFallback(db, token, "monogram");
    expect(set).toMatchObject({ ok: true, value: { fallback: "monogram" } });
    // The key record is trusted for 10 s per isolate; a new key shows the default at once.
    const other = await freshKey();
    await setKeyFallback(db, other, "monogram");
    const path = `/default-${crypto.randomUUID().slice(0, 8)}.com?token=${other}`;
    expect((await offline(path)).headers.get("x-logo-source")).toBe("monogram");
    expect((await offline(`${path}&fallback=none`)).status).toBe(404);
  });

  it("never replaces a real logo, and gives secret keys the metadata headers", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const hit = await offline(`/${domain}?token=${token}&fallback=monogram`);
    expect(hit.status).toBe(302);
    expect(hit.headers.get("x-logo-source")).toBe("catalogue");
    const secret = await freshKey({ type: "secret" });
    const missDomain = `secret-${crypto.randomUUID().slice(0, 8)}.com`;
    const response = await offline(`/${missDomain}?fallback=monogram&size=300`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-logo-domain")).toBe(missDomain);
    expect(response.headers.get("x-logo-width")).toBe("300");
  });

  it("letters a ticker by its symbol and a name by itself, one tile however either is written", async () => {
    const token = await freshKey();
    const tile = async (path: string) => {
      const svg = await svgOf(await offline(`${path}?token=${token}&fallback=monogram`));
      return { letter: letterOf(svg), fill: fillOf(svg) };
    };
    const plain = await tile("/ticker/ZQXW");
    expect(plain.letter).toBe("Z");
    expect(await tile("/ticker/NYSE:ZQXW")).toEqual(plain);
    expect(await tile("/ticker/zqxw")).toEqual(plain);
    const named = await tile("/name/Quorvane");
    expect(named.letter).toBe("Q");
    expect(await tile("/name/QUORVANE")).toEqual(named);
    expect(await tile(`/name/${encodeURIComponent("quorvane!")}`)).toEqual(named);
  });

  it("refuses an unknown fallback with 400", async () => {
    const token = await freshKey();
    const response = await offline(`/example.com?token=${token}&fallback=sometimes`);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe("Invalid fallback: must be monogram or none");
  });
});

describe("monogram colours", () => {
  const rgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as unknown as [number, number, number];
  const inkOf = (svg: string) => /<text[^>]* fill="(#[0-9a-f]{6})"/.exec(svg)?.[1];
  const contrast = (a: string, b: string) => contrastOf(rgb(a), rgb(b));

  it("draw the letter in whichever of white and near-black reads better on the tile", () => {
    for (const brandColor of ["#00d509", "#1db954", "#25d366", "#969696", "#1e40af", "#ffd700", "#000000", "#ffffff", "#ff0000"]) {
      const svg = monogramSvg({ domain: "example.com", name: "Acme", brandColor, size: 64, greyscale: false });
      const [tile, ink] = [fillOf(svg)!, inkOf(svg)!];
      const other = ink === "#ffffff" ? "#1f2328" : "#ffffff";
      expect(contrast(tile, ink), brandColor).toBeGreaterThanOrEqual(contrast(tile, other));
      // Whatever the tile, the better of the two reads at 3.9:1 or more.
      expect(contrast(tile, ink), brandColor).toBeGreaterThanOrEqual(3.9);
    }
  });

  it("give every domain a colour white reads on at 4.5:1", () => {
    for (let i = 0; i < 2000; i++) {
      const tile = domainColour(`d${i}.com`);
      expect(contrast(tile, "#ffffff"), `d${i}.com: ${tile}`).toBeGreaterThanOrEqual(4.5);
    }
  });
});

describe("monogram letters", () => {
  it("takes whole graphemes, skips punctuation, and upper-cases where the script has case", () => {
    expect(firstLetter("  -éclair")).toBe("É");
    expect(firstLetter("👍 Thumbs")).toBe("T");
    expect(firstLetter("ñandú")).toBe("Ñ");
    expect(firstLetter("---")).toBeNull();
    expect(monogramLetter(null, "xn--80akhbyknj4f.com")).toBe("И");
    expect(monogramLetter("<script>", "example.com")).toBe("S");
  });

  it("keeps a letter whose capital is two letters, or not a word's first, as it is", () => {
    expect(firstLetter("ßtudio")).toBe("ß");
    expect(firstLetter("\ufb01rma")).toBe("\ufb01");
    expect(firstLetter("ანბანი")).toBe("ა");
    // One letter, however many code points its capital takes.
    expect(firstLetter("\u01F0ava")).toBe("J\u030C");
    expect(firstLetter("\u01C6ep")).toBe("\u01C5");
  });
});
