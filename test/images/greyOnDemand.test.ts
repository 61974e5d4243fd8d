import { env, exports } from "cloudflare:workers";
import { decode, encode } from "fast-png";
import { describe, expect, it } from "vitest";
import { encodeAssetKey } from "../../src/images/assetUrls";
import { eq } from "drizzle-orm";
import { logos } from "../../schema";
import { retiredAmong } from "../../src/catalogue/retiredObjects";
import { makeGrey } from "../../src/images/greyOnDemand";
import { LEGACY_RENDITIONS, renditionKey } from "../../src/images/objectKeys";
import { greyOf, type Pixels, RENDITIONS_VERSION } from "../../src/images/renditions";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";
import { assetKeyOf, BASE, fetchWith, freshCompany, freshKey } from "../lookup/helpers";

/**
 * Greyscale renditions made on the first request for them (src/images/greyOnDemand.ts): a logo
 * whose master is under 2 megapixels is stored with its colour renditions only.
 */
const get = (path: string, init?: RequestInit) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual", ...init });
const asset = (key: string, query = "") => get(`/assets/${encodeAssetKey(key)}${query}`);

/** 40×20 RGBA in four bands of colour, the last transparent, so that a greyscale has something to keep. */
function bands(colours: Array<[number, number, number, number]>): Pixels {
  const data = new Uint8Array(40 * 20 * 4);
  for (let p = 0; p < 40 * 20; p++) data.set(colours[Math.floor((p % 40) / 10)]!, p * 4);
  return { width: 40, height: 20, channels: 4, data };
}
const master = bands([
  [220, 30, 30, 255],
  [20, 160, 60, 255],
  [30, 60, 200, 180],
  [0, 0, 0, 0],
]);
const dark = bands([
  [250, 120, 120, 255],
  [120, 240, 150, 255],
  [140, 170, 255, 180],
  [0, 0, 0, 0],
]);
const png = (pixels: Pixels) => encode({ ...pixels, depth: 8 });

/** A logo as the importer now stores one under 2 megapixels: master and dark rendition, no greyscale. */
async function colourOnlyLogo() {
  const image = {
    ...darkLogo40x20(),
    original: png(master),
    files: { master: png(master), dark: png(dark) },
    contentHash: crypto.randomUUID().replaceAll("-", "").padEnd(64, "0"),
  };
  const { domain, name, companyId } = await freshCompany({ image });
  const masterKey = (await env.LOGOS.list({ prefix: `logos/${domain}/` })).objects
    .map((o) => o.key)
    .find((key) => /\.[0-9a-f]{16}\.png$/.test(key))!;
  return { domain, name, companyId, masterKey, grey: renditionKey(masterKey, "grey"), darkGrey: renditionKey(masterKey, "darkGrey") };
}

const pixelsOf = async (response: Response) => decode(new Uint8Array(await response.arrayBuffer()));
/** Grey throughout, whatever channels the Images binding wrote after resizing: red, green and blue alike in every pixel. */
function isGrey({ data, channels }: { data: ArrayLike<number>; channels: number }): boolean {
  if (channels <= 2) return true;
  for (let i = 0; i < data.length; i += channels) if (data[i] !== data[i + 1] || data[i] !== data[i + 2]) return false;
  return true;
}

describe("a greyscale rendition not stored", () => {
  it("of a replaced logo is still made while its objects are retired, and goes with them", async () => {
    const logo = await colourOnlyLogo();
    const replaced = { ...darkLogo40x20(), contentHash: "9".repeat(64) };
    await addCompany({ name: logo.name, domains: [logo.domain] }, replaced);
    expect((await retiredAmong(db, [logo.grey])).has(logo.grey)).toBe(true);
    expect((await asset(logo.grey)).status).toBe(200);
    expect(await env.LOGOS.head(logo.grey)).not.toBeNull();
  });

  it("is made on the first request from the master, with each pixel's luminance, and kept in the bucket", async () => {
    const logo = await colourOnlyLogo();
    expect(await env.LOGOS.head(logo.grey)).toBeNull();

    const first = await asset(logo.grey);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("image/png");
    const served = await pixelsOf(first);
    expect({ width: served.width, height: served.height, channels: served.channels }).toEqual({ width: 40, height: 20, channels: 2 });
    expect([...served.data]).toEqual([...greyOf(master).data]);

    const kept = await env.LOGOS.head(logo.grey);
    expect(kept?.customMetadata).toEqual({ width: "40", height: "20" });
    expect(kept?.httpMetadata?.contentType).toBe("image/png");
    // The first answer names the object it made, as any later one will.
    expect(first.headers.get("etag")).toBe(`"${kept!.etag}"`);
  });

  it("is made at the size asked, and for dark pages from the dark rendition", async () => {
    const logo = await colourOnlyLogo();
    const resized = await asset(logo.darkGrey, "?width=20");
    expect(resized.status).toBe(200);
    const small = await pixelsOf(resized);
    expect(small.width).toBeLessThan(40);
    expect(isGrey(small)).toBe(true);
    const whole = await pixelsOf(await asset(logo.darkGrey));
    expect([...whole.data]).toEqual([...greyOf(dark).data]);
  });

  it("is what a lookup asking for greyscale gets, by redirect and in bytes", async () => {
    const logo = await colourOnlyLogo();
    const token = await freshKey();
    const redirect = await get(`/${logo.domain}?token=${token}&greyscale=true&theme=dark`);
    expect(redirect.status).toBe(302);
    expect(assetKeyOf(redirect.headers.get("location")!)).toBe(logo.darkGrey);
    const followed = await get(redirect.headers.get("location")!);
    expect(followed.status).toBe(200);
    expect(isGrey(await pixelsOf(followed))).toBe(true);

    const other = await colourOnlyLogo();
    const bytes = await fetchWith({ LOOKUP_RESPONSE: "bytes" }, `${BASE}/${other.domain}?token=${token}&greyscale=1&size=40`);
    expect(bytes.status).toBe(200);
    expect(isGrey(await pixelsOf(bytes))).toBe(true);
    expect(await env.LOGOS.head(other.grey)).not.toBeNull();
  });

  it("goes through the asset route, which makes it, where a CDN serves the bucket; colour renditions go to the CDN", async () => {
    const logo = await colourOnlyLogo();
    const token = await freshKey();
    const cdn = (query: string) =>
      fetchWith({ CDN_URL: "https://cdn.example.com" }, `${BASE}/${logo.domain}?token=${token}${query}`, { redirect: "manual" });
    expect((await cdn("&size=16")).headers.get("location")).toMatch(
      /^https:\/\/cdn\.example\.com\/cdn-cgi\/image\/width=16,fit=contain,format=png\/logos\//,
    );
    const grey = (await cdn("&size=16&greyscale=true")).headers.get("location")!;
    expect(grey).toMatch(/^\/assets\//);
    expect(assetKeyOf(grey)).toBe(logo.grey);
    expect((await get(grey)).status).toBe(200);
  });
});

describe("a greyscale rendition's write", () => {
  it("refused for a moment (another process holding the local bucket's lock) is tried again", async () => {
    const logo = await colourOnlyLogo();
    let refusals = 2;
    const locked = {
      get: (key: string) => env.LOGOS.get(key),
      head: (key: string) => env.LOGOS.head(key),
      delete: (keys: string | string[]) => env.LOGOS.delete(keys),
      put: async (key: string, value: Uint8Array, options?: R2PutOptions) => {
        if (refusals-- > 0) throw new Error("put: Unspecified error (0)");
        return env.LOGOS.put(key, value, options);
      },
    } as unknown as R2Bucket;
    const made = await makeGrey(locked, logo.grey, async () => true);
    expect(made?.bytes.length).toBeGreaterThan(0);
    expect(await env.LOGOS.head(logo.grey)).not.toBeNull();
  });

  it("that keeps failing is the storage's unavailability, not a rendition made and lost", async () => {
    const logo = await colourOnlyLogo();
    const broken = {
      get: (key: string) => env.LOGOS.get(key),
      put: async () => Promise.reject(new Error("put: Unspecified error (0)")),
    } as unknown as R2Bucket;
    await expect(makeGrey(broken, logo.grey, async () => true)).rejects.toThrow(/object storage/);
  });
});

describe("nothing is made", () => {
  it("for a logo whose row is at another renditions version, though its master is there", async () => {
    const logo = await colourOnlyLogo();
    await db.update(logos).set({ renditions: LEGACY_RENDITIONS }).where(eq(logos.companyId, logo.companyId));
    expect((await asset(logo.grey)).status).toBe(404);
    expect(await env.LOGOS.head(logo.grey)).toBeNull();
    // A lookup answering bytes makes nothing either: the row it found serves its own greyscale.
    const token = await freshKey();
    await fetchWith({ LOOKUP_RESPONSE: "bytes" }, `${BASE}/${logo.domain}?token=${token}&greyscale=1`);
    expect(await env.LOGOS.head(logo.grey)).toBeNull();
  });

  it("past the moment the logo's colour rendition went, and nothing is left behind", async () => {
    const logo = await colourOnlyLogo();
    // The colour rendition is deleted (a sweep, a forgotten discovery) while the greyscale is made.
    const racing = {
      get: (key: string) => env.LOGOS.get(key),
      head: (key: string) => env.LOGOS.head(key),
      delete: (keys: string | string[]) => env.LOGOS.delete(keys),
      put: async (key: string, value: Uint8Array, options?: R2PutOptions) => {
        await env.LOGOS.delete(logo.masterKey);
        return env.LOGOS.put(key, value, options);
      },
    } as unknown as R2Bucket;
    expect(await makeGrey(racing, logo.grey, async () => true)).toBeNull();
    expect(await env.LOGOS.head(logo.grey)).toBeNull();
  });

  it("where the colour rendition is missing, or under a key no stored logo's version uses", async () => {
    const logo = await colourOnlyLogo();
    const stem = logo.masterKey.slice(0, -".png".length);
    for (const key of [
      // No rendition for light pages was stored.
      renditionKey(logo.masterKey, "lightGrey"),
      // A renditions version that does not exist yet, and version 0, which stored its own.
      `${stem}.v${RENDITIONS_VERSION + 1}.grey.png`,
      `${stem}.v0${RENDITIONS_VERSION}.grey.png`,
      `${stem}.grey.png`,
      // Not a rendition of any master.
      `logos/${logo.domain}/anything.grey.png`,
    ]) {
      expect((await asset(key)).status, key).toBe(404);
      expect(await env.LOGOS.head(key), key).toBeNull();
    }
  });
});
