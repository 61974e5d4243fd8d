import { env, exports } from "cloudflare:workers";
import { decode, encode } from "fast-png";
import { describe, expect, it } from "vitest";
import { RENDITIONS_VERSION } from "../../src/images/renditions";
import { preparedFrom, transparentLogo40x20, vectorLogo40x20, webpForAvif } from "../fixtures/images";
import { assetKeyOf, BASE, fetchWith, freshCompany, freshKey } from "./helpers";

const get = (path: string, init?: RequestInit) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual", ...init });
const bytesMode = (path: string, init?: RequestInit) => fetchWith({ LOOKUP_RESPONSE: "bytes" }, `${BASE}${path}`, init);
/** Follows a lookup's redirect to this Worker's own asset route. */
const follow = async (redirect: Response) => {
  // Relative: no public base URL is configured in the tests.
  return get(redirect.headers.get("location")!);
};

/** What the bytes are, by their magic numbers, not by what the headers claim. */
function magic(bytes: Uint8Array): string {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.slice(from, to));
  if (bytes[0] === 0x89 && ascii(1, 4) === "PNG") return "png";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "webp";
  if (ascii(4, 8) === "ftyp" && ["avif", "avis"].includes(ascii(8, 12))) return "avif";
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpg";
  if (new TextDecoder().decode(bytes.slice(0, 5)) === "<svg ") return "svg";
  return "unknown";
}
const infoOf = (bytes: Uint8Array) => env.IMAGES.info(new Response(bytes).body!);
/** A raster answer's pixels, decoded (through the Images binding for formats fast-png cannot read). */
async function pixelsOf(bytes: Uint8Array) {
  const png = await env.IMAGES.input(new Response(bytes).body!).output({ format: "image/png" });
  return decode(new Uint8Array(await new Response(png.image()).arrayBuffer()));
}

describe("format", () => {
  it.each([
    ["png", "image/png"],
    ["webp", "image/webp"],
    ["avif", "image/avif"],
    ["jpg", "image/jpeg"],
  ])("format=%s answers that format, in bytes mode and by redirect, at the asked width", async (format, type) => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const query = `/${domain}?token=${token}&size=32${format === "png" ? "" : `&format=${format}`}`;
    const direct = await bytesMode(query);
    const redirected = await follow(await get(query));
    for (const response of [direct, redirected]) {
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe(type);
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(magic(bytes)).toBe(format);
      expect(await infoOf(bytes)).toMatchObject({ width: 32, height: 16 });
    }
  });

  it("jpg is flattened onto the theme's page: white by default, #121212 with theme=dark", async () => {
    const { domain } = await freshCompany({ image: transparentLogo40x20() });
    const token = await freshKey();
    for (const [theme, page] of [
      ["", 255],
      ["&theme=light", 255],
      ["&theme=dark", 0x12],
    ] as const) {
      for (const response of [
        await bytesMode(`/${domain}?token=${token}&size=40&format=jpg${theme}`),
        await follow(await get(`/${domain}?token=${token}&size=40&format=jpg${theme}`)),
      ]) {
        const image = await pixelsOf(new Uint8Array(await response.arrayBuffer()));
        const corner = [...image.data.slice(0, 3)];
        const centre = [...image.data.slice((10 * 40 + 20) * image.channels, (10 * 40 + 20) * image.channels + 3)];
        for (const channel of corner) expect(Math.abs(channel - page), theme).toBeLessThanOrEqual(4);
        for (const channel of centre) expect(channel, theme).toBeLessThanOrEqual(8);
      }
    }
  });

  it("format=svg serves the sanitised vector with a script-forbidding policy", async () => {
    const { domain } = await freshCompany({ image: vectorLogo40x20() });
    const token = await freshKey();
    const direct = await bytesMode(`/${domain}?token=${token}&format=svg`);
    const redirect = await get(`/${domain}?token=${token}&format=svg`);
    expect(assetKeyOf(redirect.headers.get("location")!)).toMatch(new RegExp(`\\.v${RENDITIONS_VERSION}\\.svg$`));
    for (const response of [direct, await follow(redirect)]) {
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("image/svg+xml");
      expect(response.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
      expect(response.headers.get("content-security-policy")).not.toMatch(/script-src/);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("x-logo-format")).toBeNull();
      expect(magic(new Uint8Array(await response.arrayBuffer()))).toBe("svg");
    }
  });

  it("format=svg of a raster-only logo, or for a look the vector is not, answers PNG and says so", async () => {
    const raster = await freshCompany();
    const vector = await freshCompany({ image: vectorLogo40x20() });
    const token = await freshKey();
    for (const path of [
      `/${raster.domain}?token=${token}&format=svg`,
      `/${vector.domain}?token=${token}&format=svg&theme=dark`,
      `/${vector.domain}?token=${token}&format=svg&greyscale=1`,
    ]) {
      const direct = await bytesMode(path);
      const redirect = await get(path);
      expect(redirect.headers.get("x-logo-format"), path).toBe("png");
      for (const response of [direct, await follow(redirect)]) {
        expect(response.headers.get("content-type"), path).toBe("image/png");
        expect(magic(new Uint8Array(await response.arrayBuffer())), path).toBe("png");
      }
      expect(direct.headers.get("x-logo-format"), path).toBe("png");
    }
  });

  it("goes into the CDN's image-resizing path", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const cdn = (query: string) =>
      fetchWith({ CDN_URL: "https://cdn.example.com" }, `${BASE}/${domain}?token=${token}${query}`, { redirect: "manual" });
    expect((await cdn("&size=16&format=webp&dpr=2")).headers.get("location")).toMatch(
      /\/cdn-cgi\/image\/width=32,fit=contain,format=webp\/logos\//,
    );
    expect((await cdn("&size=16&format=avif")).headers.get("location")).toMatch(
      /\/cdn-cgi\/image\/width=16,fit=contain,format=avif\/logos\//,
    );
    expect((await cdn("&size=16&format=jpg&theme=dark")).headers.get("location")).toMatch(
      new RegExp(`/cdn-cgi/image/width=16,fit=contain,format=jpeg,background=%23121212/logos/.*\\.v${RENDITIONS_VERSION}\\.dark\\.png$`),
    );
  });
});

describe("dpr and retina", () => {
  it.each([
    ["&size=16&dpr=2", 32],
    ["&size=16&retina=true", 32],
    ["&size=10&dpr=3", 30],
    ["&size=16&dpr=1", 16],
    // The density stops at the master's 40 px; size itself keeps its meaning.
    ["&size=30&dpr=2", 40],
    ["&size=64&dpr=3", 64],
  ])("%s gives %i px, in bytes mode and by redirect", async (query, width) => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    for (const response of [
      await bytesMode(`/${domain}?token=${token}${query}`),
      await follow(await get(`/${domain}?token=${token}${query}`)),
    ]) {
      expect(response.status, query).toBe(200);
      expect(await infoOf(new Uint8Array(await response.arrayBuffer())), query).toMatchObject({ width });
    }
  });

  it("reports the delivered width to the server SDK", async () => {
    const { domain } = await freshCompany({ brandColor: "#635bff" });
    const secret = await freshKey({ type: "secret" });
    const response = await get(`/${domain}?size=16&dpr=2&format=webp`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(response.headers.get("x-logo-width")).toBe("32");
    expect(response.headers.get("x-logo-height")).toBe("16");
    expect(response.headers.get("x-brand-color")).toBe("#635bff");
    expect(response.headers.get("content-type")).toBe("image/webp");
  });
});

describe("an AVIF Cloudflare does not make", () => {
  const webpForAvifImages = webpForAvif(env.IMAGES);

  it("is answered as what was made, by the lookup's bytes and by the asset route", async () => {
    const { domain, logoId } = await freshCompany();
    const token = await freshKey();
    const bytes = await fetchWith(
      { LOOKUP_RESPONSE: "bytes", IMAGES: webpForAvifImages },
      `${BASE}/${domain}?token=${token}&size=24&format=avif`,
    );
    const location = (await get(`/${domain}?token=${token}&size=24&format=avif`)).headers.get("location")!;
    const asset = await fetchWith({ IMAGES: webpForAvifImages }, new URL(location, BASE).href);
    for (const response of [bytes, asset]) {
      expect(response.status, String(logoId)).toBe(200);
      expect(response.headers.get("content-type")).toBe("image/webp");
      expect(magic(new Uint8Array(await response.arrayBuffer()))).toBe("webp");
    }
    // A HEAD says what a GET sends.
    const head = await fetchWith(
      { LOOKUP_RESPONSE: "bytes", IMAGES: webpForAvifImages },
      `${BASE}/${domain}?token=${token}&size=24&format=avif`,
      { method: "HEAD" },
    );
    expect(head.headers.get("content-type")).toBe("image/webp");
    // Not the asset's for good: cached an hour, no ETag, and the next request makes the AVIF.
    expect(asset.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(asset.headers.get("etag")).toBeNull();
    for (const again of [
      await fetchWith({ LOOKUP_RESPONSE: "bytes" }, `${BASE}/${domain}?token=${token}&size=24&format=avif`),
      await fetchWith({}, new URL(location, BASE).href),
    ]) {
      expect(again.headers.get("content-type")).toBe("image/avif");
      expect(magic(new Uint8Array(await again.arrayBuffer()))).toBe("avif");
    }
  });
});

describe("the widest image", () => {
  it("is 3,200 px whatever size and dpr ask: the density stops there as it does at the master", async () => {
    const wide = encode({ width: 3700, height: 10, data: new Uint8Array(3700 * 10 * 4).fill(200), channels: 4, depth: 8 });
    const { domain } = await freshCompany({ image: await preparedFrom(wide, { width: 3700, height: 10 }) });
    const secret = await freshKey({ type: "secret" });
    const response = await get(`/${domain}?size=1200&dpr=3&format=webp`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-logo-width")).toBe("3200");
    expect(await infoOf(new Uint8Array(await response.arrayBuffer()))).toMatchObject({ width: 3200 });
  });
});

describe("every option is its own answer", () => {
  it("no cache layer hands one option's bytes to another, and none relies on Vary", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const seen = new Map<string, string>();
    for (const query of [
      "",
      "&format=webp",
      "&dpr=2",
      "&format=webp&dpr=2",
      "&greyscale=1",
      "&theme=dark",
      "&format=jpg",
      "&format=jpg&theme=dark",
      "",
      "&format=webp",
    ]) {
      for (const [mode, response] of [
        ["bytes", await bytesMode(`/${domain}?token=${token}&size=20${query}`)],
        ["redirect", await follow(await get(`/${domain}?token=${token}&size=20${query}`))],
      ] as const) {
        expect(response.headers.get("vary"), query).toBeNull();
        const body = [...new Uint8Array(await response.arrayBuffer())].join(",");
        const id = `${mode}${query}`;
        if (seen.has(id)) expect(body, `${id} again`).toBe(seen.get(id));
        else {
          for (const [other, otherBody] of seen) if (other.startsWith(mode)) expect(body === otherBody, `${id} vs ${other}`).toBe(false);
          seen.set(id, body);
        }
      }
    }
  });
});
