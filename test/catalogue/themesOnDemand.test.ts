import { env, exports } from "cloudflare:workers";
import { decode } from "fast-png";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { logos } from "../../schema";
import { preparedFromPixels } from "../../src/catalogue/preparedImage";
import { settleRenditions } from "../../src/catalogue/logos";
import { renditionKey } from "../../src/images/objectKeys";
import { encodePng } from "../../src/images/png";
import type { Pixels } from "../../src/images/renditions";
import { settleThemes } from "../../src/catalogue/themesOnDemand";
import { db } from "../helpers/catalogue";
import { assetKeyOf, BASE, fetchWith, freshCompany, freshKey } from "../lookup/helpers";

/**
 * Themes decided on the first lookup (src/catalogue/themesOnDemand.ts): a logo stored with its
 * master alone, as the first start's seeding stores it, is served on every page exactly as one
 * whose themes were decided at import.
 */
const get = (path: string) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual" });

/** 60×30: a ring of `ink` on transparency, with a 2 px semi-transparent edge, so that edges move too. */
function ring(ink: [number, number, number]): Pixels {
  const data = new Uint8Array(60 * 30 * 4);
  for (let y = 0; y < 30; y++)
    for (let x = 0; x < 60; x++) {
      const d = Math.hypot(x - 30, y - 15);
      if (d > 13 || d < 6) continue;
      data.set([...ink, d > 12 || d < 7 ? 140 : 255], (y * 60 + x) * 4);
    }
  return { width: 60, height: 30, channels: 4, data };
}

const png = (pixels: Pixels) => encodePng(pixels);
const pixelsOf = (bytes: ArrayBuffer | Uint8Array) => [...decode(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).data];

/** The same logo prepared both ways, the later one stored under a company of its own. */
async function bothWays(ink: [number, number, number]) {
  const pixels = ring(ink);
  const now = await preparedFromPixels("png", png(pixels), pixels, encodePng);
  const later = await preparedFromPixels("png", png(pixels), pixels, encodePng, { themes: "on first lookup" });
  const company = await freshCompany({ image: later });
  const masterKey = (await env.LOGOS.list({ prefix: `logos/${company.domain}/` })).objects
    .map((o) => o.key)
    .find((key) => /\.[0-9a-f]{16}\.png$/.test(key))!;
  const row = async () =>
    (await db.select({ renditions: logos.renditions }).from(logos).where(eq(logos.id, company.logoId)).get())!.renditions;
  return { now, later, ...company, masterKey, row };
}

describe("themes decided on the first lookup", () => {
  it("are left out at import: the master alone, the row pending", async () => {
    const logo = await bothWays([0, 0, 0]);
    expect(logo.now.renditions).toMatchObject({ dark: true, plain: "master" });
    expect(logo.now.renditions.pending).toBeUndefined();
    expect(Object.keys(logo.later.files)).toEqual(["master"]);
    expect(logo.later.files.master).toEqual(logo.now.files.master);
    expect(logo.later.tone).toBe(logo.now.tone);
    expect(await logo.row()).toEqual({
      version: logo.now.renditions.version,
      light: false,
      dark: false,
      plain: "master",
      vector: false,
      pending: true,
    });
    expect(await env.LOGOS.head(renditionKey(logo.masterKey, "dark"))).toBeNull();
  });

  it("are made by the first lookup on a dark page, pixel for pixel as an import makes them, and the row settled", async () => {
    const logo = await bothWays([0, 0, 0]);
    const token = await freshKey();
    const dark = renditionKey(logo.masterKey, "dark");

    const redirect = await get(`/${logo.domain}?token=${token}&theme=dark`);
    expect(redirect.status).toBe(302);
    expect(assetKeyOf(redirect.headers.get("location")!)).toBe(dark);
    const stored = await env.LOGOS.get(dark);
    expect(stored?.customMetadata).toEqual({ width: "60", height: "30" });
    expect(pixelsOf(await stored!.arrayBuffer())).toEqual(pixelsOf(logo.now.files.dark!));
    expect(await logo.row()).toEqual(logo.now.renditions);

    // Served from there like any rendition.
    const followed = await get(redirect.headers.get("location")!);
    expect(followed.status).toBe(200);
    expect(followed.headers.get("content-type")).toBe("image/png");
  });

  it("decide what a lookup without a theme serves: white ink is served darkened, as imported", async () => {
    const logo = await bothWays([255, 255, 255]);
    expect(logo.now.renditions.plain).toBe("light");
    const token = await freshKey();
    const redirect = await get(`/${logo.domain}?token=${token}`);
    expect(assetKeyOf(redirect.headers.get("location")!)).toBe(renditionKey(logo.masterKey, "light"));
    expect(pixelsOf(await (await env.LOGOS.get(renditionKey(logo.masterKey, "light")))!.arrayBuffer())).toEqual(
      pixelsOf(logo.now.files.light!),
    );
    expect(await logo.row()).toEqual(logo.now.renditions);
  });

  it("are made for a lookup answered in bytes too", async () => {
    const logo = await bothWays([0, 0, 0]);
    const token = await freshKey();
    const bytes = await fetchWith({ LOOKUP_RESPONSE: "bytes" }, `${BASE}/${logo.domain}?token=${token}&theme=dark&size=60`);
    expect(bytes.status).toBe(200);
    expect(pixelsOf(await bytes.arrayBuffer())).toEqual(pixelsOf(logo.now.files.dark!));
    expect((await logo.row()).pending).toBeUndefined();
  });

  it("of a mark legible on both pages need no rendition: the row settles with none", async () => {
    const logo = await bothWays([200, 30, 30]);
    expect(logo.now.renditions).toMatchObject({ light: false, dark: false });
    const token = await freshKey();
    const redirect = await get(`/${logo.domain}?token=${token}&theme=dark`);
    expect(assetKeyOf(redirect.headers.get("location")!)).toBe(logo.masterKey);
    expect(await logo.row()).toEqual(logo.now.renditions);
    expect((await env.LOGOS.list({ prefix: `logos/${logo.domain}/` })).objects.map((o) => o.key).filter((k) => k.includes(".v"))).toEqual(
      [],
    );
  });

  it("leave the row pending and serve the master when the master cannot be read", async () => {
    const logo = await bothWays([0, 0, 0]);
    await env.LOGOS.put(logo.masterKey, new TextEncoder().encode("not a png"));
    const token = await freshKey();
    const redirect = await get(`/${logo.domain}?token=${token}&theme=dark`);
    expect(redirect.status).toBe(302);
    expect(assetKeyOf(redirect.headers.get("location")!)).toBe(logo.masterKey);
    expect((await logo.row()).pending).toBe(true);
    expect(await env.LOGOS.head(renditionKey(logo.masterKey, "dark"))).toBeNull();
  });

  it("cost a lookup nothing when storage fails while they are made: it serves the master, and a later lookup makes them", async () => {
    const logo = await bothWays([0, 0, 0]);
    const token = await freshKey();
    const refusing = new Proxy(env.LOGOS, {
      get(target, name) {
        if (name === "put") return () => Promise.reject(new Error("object storage refused the write"));
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const failed = await fetchWith({ LOGOS: refusing }, `${BASE}/${logo.domain}?token=${token}&theme=dark`, { redirect: "manual" });
    expect(failed.status).toBe(302);
    expect(assetKeyOf(failed.headers.get("location")!)).toBe(logo.masterKey);
    expect((await logo.row()).pending).toBe(true);

    const later = await get(`/${logo.domain}?token=${token}&theme=dark`);
    expect(assetKeyOf(later.headers.get("location")!)).toBe(renditionKey(logo.masterKey, "dark"));
    expect(await logo.row()).toEqual(logo.now.renditions);
  });

  it("are not made again for a row settled meanwhile, nor for one whose logo was replaced", async () => {
    const logo = await bothWays([0, 0, 0]);
    const unsettled = { logoId: logo.logoId, contentHash: logo.later.contentHash, masterKey: logo.masterKey, width: 60, height: 30 };
    expect(await settleThemes(env.LOGOS, db, { ...unsettled, contentHash: "e".repeat(64) })).toBe(false);
    expect(await settleRenditions(db, logo.logoId, logo.later.contentHash, logo.now.renditions)).toBe(true);
    // Settled already: nothing to settle, nothing written.
    expect(await settleRenditions(db, logo.logoId, logo.later.contentHash, logo.now.renditions)).toBe(false);
    expect(await settleThemes(env.LOGOS, db, unsettled)).toBe(true);
    expect(await env.LOGOS.head(renditionKey(logo.masterKey, "dark"))).toBeNull();
  });

  it("are decided at import for a master too large to decode in the isolate", async () => {
    const pixels = { width: 2100, height: 1000, channels: 4 as const, data: new Uint8Array(2100 * 1000 * 4) };
    for (let p = 0; p < 2100 * 100; p++) pixels.data.set([0, 0, 0, 255], p * 4);
    const prepared = await preparedFromPixels("png", new Uint8Array(0), pixels, encodePng, { themes: "on first lookup" });
    expect(prepared.renditions.pending).toBeUndefined();
    expect(prepared.renditions.dark).toBe(true);
  });
});
