import { env, exports } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeAssetKey, encodeAssetKey } from "../../src/assets/codec";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany } from "../helpers/catalogue";

const BASE = "https://logos.test";
const get = (path: string, init?: RequestInit) => exports.default.fetch(`${BASE}${path}`, init);

async function storedLogo() {
  const domain = `asset-${crypto.randomUUID().slice(0, 8)}.com`;
  await addCompany({ name: "Asset Co", domains: [domain] }, darkLogo40x20());
  const keys = (await env.LOGOS.list({ prefix: `logos/${domain}/` })).objects.map((o) => o.key);
  const master = keys.find((k) => /\.[0-9a-f]{16}\.png$/.test(k))!;
  const original = keys.find((k) => k.includes(".original."))!;
  return { master, original, path: `/assets/${encodeAssetKey(master)}` };
}

describe("GET /assets/{key}", () => {
  it("serves the PNG, immutable, with a strong ETag", async () => {
    const { path } = await storedLogo();
    const response = await get(path);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(response.headers.get("etag")).toMatch(/^"[^"]+"$/);
    expect(await env.IMAGES.info(response.body!)).toMatchObject({ width: 40, height: 20 });
  });

  it("answers If-None-Match with 304", async () => {
    const { path } = await storedLogo();
    const etag = (await get(path)).headers.get("etag")!;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const response = await get(path, { headers: { "If-None-Match": header } });
      expect(response.status).toBe(304);
      expect(response.headers.get("etag")).toBe(etag);
      expect(await response.text()).toBe("");
    }
    expect((await get(path, { headers: { "If-None-Match": '"other"' } })).status).toBe(200);
  });

  it("scales down to maxWidth, keeping the aspect, and never up", async () => {
    const { path } = await storedLogo();
    const small = await get(`${path}?maxWidth=20`);
    expect(await env.IMAGES.info(small.body!)).toMatchObject({ width: 20, height: 10 });
    const large = await get(`${path}?maxWidth=3200`);
    expect(await env.IMAGES.info(large.body!)).toMatchObject({ width: 40, height: 20 });
    expect(small.headers.get("etag")).not.toBe(large.headers.get("etag"));
  });

  it("answers HEAD with headers only", async () => {
    const { path } = await storedLogo();
    const response = await get(`${path}?maxWidth=10`, { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-image-width")).toBe("10");
    expect(await response.text()).toBe("");
  });

  it.each(["maxWidth=0", "maxWidth=3201", "maxWidth=abc", "maxWidth=-5", "width=0", "maxWidth=10&width=10"])("refuses %s with 400", async (query) => {
    const { path } = await storedLogo();
    const response = await get(`${path}?${query}`);
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/^Invalid (maxWidth|width)/);
  });

  it("serves nothing outside the logo renditions: 404, never another object", async () => {
    const { original } = await storedLogo();
    await env.LOGOS.put("private/secret.png", new Uint8Array([1, 2, 3]));
    for (const encoded of [
      "!!!",
      "",
      encodeAssetKey("private/secret.png"),
      encodeAssetKey(original),
      encodeAssetKey("logos/../private/secret.png"),
      encodeAssetKey("logos/missing.com/icon.test.0000000000000000.png"),
      `${encodeAssetKey("logos/x.png")}=`,
      "A",
    ]) {
      const response = await get(`/assets/${encoded}`);
      expect(response.status, encoded).toBe(404);
    }
  });
});

describe("asset key codec", () => {
  it("round-trips logo keys and rejects everything else without throwing", () => {
    expect(decodeAssetKey(encodeAssetKey("logos/github.com/icon.simple-icons.0123456789abcdef.png"))).toBe(
      "logos/github.com/icon.simple-icons.0123456789abcdef.png",
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const key = decodeAssetKey(text);
        if (key !== null) expect(key.startsWith("logos/") && key.endsWith(".png")).toBe(true);
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), (key) => {
        const decoded = decodeAssetKey(encodeAssetKey(key));
        expect(decoded === null || decoded === key).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it("never answers a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), async (text) => {
        const response = await get(`/assets/${encodeURIComponent(text)}`);
        expect(response.status).toBeLessThan(500);
      }),
      { numRuns: 100 },
    );
  });
});

describe("repeat requests", () => {
  it("serve the same full bytes every time, from whichever cache answers", async () => {
    const { path } = await storedLogo();
    const bodies: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await get(`${path}?maxWidth=20`);
      expect(response.status).toBe(200);
      bodies.push([...new Uint8Array(await response.arrayBuffer())].join(","));
    }
    expect(bodies[0]!.length).toBeGreaterThan(50);
    expect(new Set(bodies).size).toBe(1);
  });
});
