import { env, exports } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeAssetKey, encodeAssetKey } from "../../src/images/assetUrls";
import { RENDITIONS_VERSION } from "../../src/images/renditions";
import { darkLogo40x20, transparentLogo40x20, vectorLogo40x20 } from "../fixtures/images";
import { addAccount, addCompany, addKey } from "../helpers/catalogue";
import { decode, encode } from "fast-png";

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

/** A real 2×400 PNG logo: a very tall one, as an import may bring. */
async function tallLogo() {
  const domain = `tall-${crypto.randomUUID().slice(0, 8)}.com`;
  const png = encode({ width: 2, height: 400, data: new Uint8Array(2 * 400 * 4).fill(255), channels: 4, depth: 8 });
  await addCompany(
    { name: "Tall Co", domains: [domain] },
    {
      ...darkLogo40x20(),
      original: png,
      files: { master: png, grey: png },
      renditions: { ...darkLogo40x20().renditions, dark: false },
      width: 2,
      height: 400,
      contentHash: "7a11".padEnd(64, "3"),
    },
  );
  const master = (await env.LOGOS.list({ prefix: `logos/${domain}/` })).objects
    .map((o) => o.key)
    .find((k) => /\.[0-9a-f]{16}\.png$/.test(k))!;
  return `/assets/${encodeAssetKey(master)}`;
}

describe("a discovered logo's vector", () => {
  it("is never served, though an older discovery stored one: a stranger's markup stays private", async () => {
    const domain = `found-${crypto.randomUUID().slice(0, 8)}.com`;
    // As discovery wrote SVG icons before it stopped keeping their vectors.
    await addCompany({ name: "Found Co", domains: [domain], sourceSet: "discovered", licence: "unknown" }, vectorLogo40x20());
    const keys = (await env.LOGOS.list({ prefix: `logos/${domain}/` })).objects.map((o) => o.key);
    const master = keys.find((k) => /\.discovered\.[0-9a-f]{16}\.png$/.test(k))!;
    const vector = keys.find((k) => k.endsWith(".svg") && !k.includes(".original."))!;
    expect(vector).toBeDefined();

    expect((await get(`/assets/${encodeAssetKey(vector)}`)).status).toBe(404);
    const asked = await get(`/assets/${encodeAssetKey(master)}?format=svg`);
    expect(asked.status).toBe(200);
    expect(asked.headers.get("content-type")).toBe("image/png");
    expect(asked.headers.get("x-logo-format")).toBe("png");

    // A lookup asking for SVG is sent to the PNG, not to the vector's missing asset.
    const token = await addKey((await addAccount()).id);
    const lookup = await get(`/${domain}?token=${token}&format=svg`, { redirect: "manual" });
    expect(lookup.status).toBe(302);
    const followed = await get(
      new URL(lookup.headers.get("location")!, BASE).pathname + new URL(lookup.headers.get("location")!, BASE).search,
    );
    expect(followed.status).toBe(200);
    expect(followed.headers.get("content-type")).toBe("image/png");
  });
});

describe("GET /assets/{key}", () => {
  it("never makes an image taller than 3,200 px, however wide it is asked", async () => {
    const path = await tallLogo();
    // 640 wide would be 128,000 tall: the width is narrowed to keep 3,200.
    const response = await get(`${path}?width=640`);
    expect(response.status).toBe(200);
    expect(await env.IMAGES.info(response.body!)).toMatchObject({ width: 16, height: 3200 });
    expect(response.headers.get("x-image-width")).toBe("16");
  });

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
    // 20 is not on the width ladder: the largest rung under it serves.
    const small = await get(`${path}?maxWidth=20`);
    expect(await env.IMAGES.info(small.body!)).toMatchObject({ width: 16, height: 8 });
    expect(await env.IMAGES.info((await get(`${path}?maxWidth=10`)).body!)).toMatchObject({ width: 10, height: 5 });
    const large = await get(`${path}?maxWidth=3200`);
    expect(await env.IMAGES.info(large.body!)).toMatchObject({ width: 40, height: 20 });
    expect(small.headers.get("etag")).not.toBe(large.headers.get("etag"));
  });

  it("serves the stored image untouched for a maxWidth at or above its width, density included", async () => {
    const { path } = await storedLogo();
    const original = await get(path);
    const bytes = new Uint8Array(await original.arrayBuffer());
    // Under the 40-wide source first: its rung (32) is the one 40 and 45 would round down to.
    const under = await get(`${path}?maxWidth=39`);
    expect(await env.IMAGES.info(under.body!)).toMatchObject({ width: 32, height: 16 });
    for (const query of ["maxWidth=40", "maxWidth=45", "maxWidth=20&dpr=2", "maxWidth=39&retina=true"]) {
      const response = await get(`${path}?${query}`);
      expect(response.status, query).toBe(200);
      expect(response.headers.get("etag"), query).toBe(original.headers.get("etag"));
      expect(response.headers.get("x-image-width"), query).toBe("40");
      expect(new Uint8Array(await response.arrayBuffer()), query).toEqual(bytes);
    }
    // And the other way round: what answered 45 from a cache is not taken for 39.
    expect(await env.IMAGES.info((await get(`${path}?maxWidth=39`)).body!)).toMatchObject({ width: 32 });
  });

  it("answers HEAD with headers only", async () => {
    const { path } = await storedLogo();
    const response = await get(`${path}?maxWidth=10`, { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-image-width")).toBe("10");
    expect(await response.text()).toBe("");
  });

  it.each([
    ["maxWidth=0", /^Invalid maxWidth/],
    ["maxWidth=3201", /^Invalid maxWidth/],
    ["maxWidth=abc", /^Invalid maxWidth/],
    ["maxWidth=-5", /^Invalid maxWidth/],
    ["width=0", /^Invalid width/],
    ["maxWidth=10&width=10", /^Invalid maxWidth/],
    ["format=gif", /^Invalid format/],
    ["dpr=4", /^Invalid dpr/],
    ["dpr=2&retina=1", /^Invalid retina/],
    ["theme=blue", /^Invalid theme/],
    ["width=10&width=20", /^Invalid query: a parameter is repeated$/],
    ["size=10", /^Unknown parameter: size$/],
  ])("refuses %s with 400", async (query, message) => {
    const { path } = await storedLogo();
    const response = await get(`${path}?${query}`);
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(message);
  });

  it("converts to webp, avif and jpg, with dpr, and says PNG where a vector is asked of a raster", async () => {
    const { path } = await storedLogo();
    for (const [query, type, width] of [
      ["width=16&format=webp", "image/webp", 16],
      ["width=16&format=avif", "image/avif", 16],
      ["width=16&format=jpg", "image/jpeg", 16],
      ["width=16&dpr=2", "image/png", 32],
      ["maxWidth=16&retina=true", "image/png", 32],
      ["width=16&dpr=3", "image/png", 48],
    ] as const) {
      const response = await get(`${path}?${query}`);
      expect(response.headers.get("content-type"), query).toBe(type);
      expect(await env.IMAGES.info(response.body!), query).toMatchObject({ width });
    }
    const fallback = await get(`${path}?format=svg`);
    expect([fallback.headers.get("content-type"), fallback.headers.get("x-logo-format")]).toEqual(["image/png", "png"]);
    // The PNG asked for as such shares the cached image, not what was said of the SVG asked before it;
    // and the other way about.
    const plain = await get(path);
    expect([plain.headers.get("content-type"), plain.headers.get("x-logo-format")]).toEqual(["image/png", null]);
    await get(`${path}?width=24`);
    const asVector = await get(`${path}?width=24&format=svg`);
    expect([asVector.headers.get("content-type"), asVector.headers.get("x-logo-format")]).toEqual(["image/png", "png"]);
  });

  it("answers a JPEG thousands of pixels wide at its size, flattened onto its page", async () => {
    const domain = `wide-jpg-${crypto.randomUUID().slice(0, 8)}.com`;
    await addCompany({ name: "Wide Jpeg Co", domains: [domain] }, transparentLogo40x20());
    const master = (await env.LOGOS.list({ prefix: `logos/${domain}/` })).objects
      .map((o) => o.key)
      .find((k) => /\.[0-9a-f]{16}\.png$/.test(k))!;
    // 3,200 × 1,600: five megapixels, flattened at two and brought back to the size asked for.
    const response = await get(`/assets/${encodeAssetKey(master)}?width=3200&format=jpg&theme=dark`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/jpeg");
    expect([response.headers.get("x-image-width"), response.headers.get("x-image-height")]).toEqual(["3200", "1600"]);
    const jpeg = new Uint8Array(await response.arrayBuffer());
    expect(await env.IMAGES.info(new Response(jpeg).body!)).toMatchObject({ width: 3200, height: 1600 });
    // Seen at the logo's own 40 × 20: the dark page (#121212) around black ink.
    const small = await env.IMAGES.input(new Response(jpeg).body!).transform({ width: 40 }).output({ format: "image/png" });
    const pixels = decode(new Uint8Array(await new Response(small.image()).arrayBuffer()));
    const at = (x: number, y: number) => [...pixels.data.slice((y * 40 + x) * pixels.channels, (y * 40 + x) * pixels.channels + 3)];
    for (const channel of at(1, 1)) expect(Math.abs(channel - 0x12)).toBeLessThanOrEqual(3);
    for (const channel of at(20, 10)) expect(channel).toBeLessThanOrEqual(8);
  });

  it("answers a large JPEG at exactly the size its headers give, however its sides divide", async () => {
    const domain = `odd-jpg-${crypto.randomUUID().slice(0, 8)}.com`;
    const png = encode({ width: 1999, height: 1997, data: new Uint8Array(1999 * 1997 * 4).fill(128), channels: 4, depth: 8 });
    await addCompany(
      { name: "Odd Jpeg Co", domains: [domain] },
      {
        ...darkLogo40x20(),
        original: png,
        files: { master: png, grey: png },
        renditions: { ...darkLogo40x20().renditions, dark: false },
        width: 1999,
        height: 1997,
        contentHash: "0dd".padEnd(64, "4"),
      },
    );
    const master = (await env.LOGOS.list({ prefix: `logos/${domain}/` })).objects
      .map((o) => o.key)
      .find((k) => /\.[0-9a-f]{16}\.png$/.test(k))!;
    for (const query of ["format=jpg", "width=2048&format=jpg"]) {
      const response = await get(`/assets/${encodeAssetKey(master)}?${query}`);
      expect(response.status, query).toBe(200);
      const said = { width: Number(response.headers.get("x-image-width")), height: Number(response.headers.get("x-image-height")) };
      expect(await env.IMAGES.info(response.body!), query).toMatchObject(said);
    }
  }, 30_000);

  it("does not repeat a fallback header an earlier release cached with the image", async () => {
    const { master, path } = await storedLogo();
    // What the release before cd38efe kept in the data centre's cache after a `?format=svg` of a
    // raster logo, under the entry the plain PNG shares (this isolate has not served it yet).
    const bytes = await (await env.LOGOS.get(master))!.arrayBuffer();
    const headers = {
      "Content-Type": "image/png",
      "Cache-Control": "public, max-age=31536000, immutable",
      ETag: '"earlier"',
      "X-Logo-Format": "png",
    };
    await caches.default.put(
      `https://assets.logo-lookup.internal/v3/${encodeAssetKey(master)}/-/-/1/png`,
      new Response(bytes, { headers }),
    );
    const plain = await get(path);
    expect(plain.headers.get("etag")).toBe('"earlier"');
    expect([plain.status, plain.headers.get("content-type"), plain.headers.get("x-logo-format")]).toEqual([200, "image/png", null]);
  });

  it("serves a sanitised vector as image/svg+xml under a policy that forbids scripts", async () => {
    const domain = `vector-${crypto.randomUUID().slice(0, 8)}.com`;
    await addCompany({ name: "Vector Co", domains: [domain] }, vectorLogo40x20());
    const keys = (await env.LOGOS.list({ prefix: `logos/${domain}/` })).objects.map((o) => o.key);
    const master = keys.find((k) => /\.[0-9a-f]{16}\.png$/.test(k))!;
    const vector = keys.find((k) => k.endsWith(`.v${RENDITIONS_VERSION}.svg`))!;
    for (const path of [`/assets/${encodeAssetKey(vector)}`, `/assets/${encodeAssetKey(master)}?format=svg`]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toBe("image/svg+xml");
      expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("x-logo-source"), path).toBe("catalogue");
      expect(await response.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    }
    // The original as imported is never served, vector or not.
    expect((await get(`/assets/${encodeAssetKey(keys.find((k) => k.includes(".original."))!)}`)).status).toBe(404);
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
  /** R2 keys of logos as the importer names them (src/images/keys.ts): PNG renditions and vectors, public. */
  const label = fc.stringMatching(/^[a-z0-9-]{1,12}$/);
  const publicKey = fc
    .tuple(
      label,
      fc.constantFrom("icon", "full"),
      label,
      fc.stringMatching(/^[0-9a-f]{16}$/),
      fc.constantFrom(".png", ".v3.png", ".v2.svg"),
    )
    .map(([domain, variant, source, hash, ending]) => `logos/${domain}.com/${variant}.${source}.${hash}${ending}`);
  /** Keys one step from a public one: an original, another prefix or ending, a path trick, a control character. */
  const nearMiss = fc
    .tuple(publicKey, fc.integer({ min: 0, max: 6 }))
    .map(
      ([key, how]) =>
        [
          key.replace(/(\.v\d)?\.(png|svg)$/, ".original.png"),
          key.replace("logos/", "logo/"),
          key.replace(".com/", ".com//"),
          key.replace(".com/", ".com/../"),
          `${key}\u0007`,
          key.replace(/\.(png|svg)$/, ".jpg"),
          key.replace(/\.v\d\.svg$/, ".svg"),
        ][how]!,
    );
  const anyKey = fc.oneof(publicKey, nearMiss, fc.string({ maxLength: 100 }));
  /** What the asset route may serve (spec, Public asset): renditions and vectors of a logo, never an original or a path trick. */
  const isPublic = (key: string) =>
    key.startsWith("logos/") &&
    !/\.\.|\/\/|[\u0000-\u001f\u007f-\u009f\\]/.test(key) &&
    !key.includes(".original.") &&
    (key.endsWith(".png") || /\.v\d+\.svg$/.test(key));

  it("round-trips logo keys and rejects everything else without throwing", () => {
    expect(decodeAssetKey(encodeAssetKey("logos/github.com/icon.simple-icons.0123456789abcdef.png"))).toBe(
      "logos/github.com/icon.simple-icons.0123456789abcdef.png",
    );
    // Anything at all, and encodings of keys whole, cut short or lengthened: what decodes is a
    // public logo key whose canonical encoding is what was asked.
    let decoded = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          anyKey.map(encodeAssetKey),
          anyKey.map((key) => encodeAssetKey(key).slice(0, -1)),
          anyKey.map((key) => `${encodeAssetKey(key)}A`),
        ),
        (text) => {
          const key = decodeAssetKey(text);
          if (key === null) return;
          decoded++;
          expect(isPublic(key), key).toBe(true);
          expect(encodeAssetKey(key)).toBe(text);
        },
      ),
      { numRuns: 3000 },
    );
    // The branch that checks a decoded key ran, and often.
    expect(decoded).toBeGreaterThan(150);
    // Every key: decoded back to itself when the asset route may serve it, refused otherwise.
    const seen = { served: 0, refused: 0 };
    fc.assert(
      fc.property(anyKey, (key) => {
        const served = isPublic(key) && decodeAssetKey(encodeAssetKey(key)) !== null;
        seen[served ? "served" : "refused"]++;
        expect(decodeAssetKey(encodeAssetKey(key))).toBe(isPublic(key) ? key : null);
      }),
      { numRuns: 3000 },
    );
    expect(seen.served).toBeGreaterThan(300);
    expect(seen.refused).toBeGreaterThan(300);
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

describe("row 2: GET /assets/{key}?width=3200&junk=<random> without credentials", () => {
  it("is refused, and unsigned widths render one image per rung of the ladder, cached under what they are", async () => {
    const { path } = await storedLogo();
    for (let i = 0; i < 3; i++) {
      const response = await get(`${path}?width=3200&junk=${crypto.randomUUID()}`);
      expect(response.status).toBe(400);
      expect(await response.text()).toBe("Unknown parameter: junk");
    }
    // Eleven widths, one rendering: the same image, ETag and cache entry for all of them.
    const answers = await Promise.all(Array.from({ length: 11 }, (_, i) => get(`${path}?width=${1000 + i}`)));
    expect(new Set(answers.map((a) => a.headers.get("etag"))).size).toBe(1);
    expect(new Set(answers.map((a) => a.headers.get("x-image-width")))).toEqual(new Set(["1024"]));
    const cached = await caches.default.match(`https://assets.logo-lookup.internal/v3/${path.slice("/assets/".length)}/1024/-/1/png`);
    expect(cached?.status).toBe(200);
    // Parameters in another order, or a signature that does not hold, are no new images either.
    expect((await get(`${path}?format=png&width=1009`)).headers.get("etag")).toBe(answers[0]!.headers.get("etag"));
    expect((await get(`${path}?width=1009&signature=${"A".repeat(43)}`)).status).toBe(403);
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
