import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assetUrl } from "../../src/images/assetUrls";
import { signAssetUrl } from "../../src/images/signedUrls";
import { findLogo } from "../../src/catalogue/logos";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";

/** Signed, time-limited asset URLs (three-tool get_logo): valid for an hour, and only as issued. */
const BASE = "https://logos.test";

async function signed(now = Date.now()) {
  const { logoId } = await addCompany({ name: "Signed Asset Co", domains: ["signed-asset.com"] }, darkLogo40x20());
  const found = await findLogo(db, logoId);
  const result = await signAssetUrl(env.SIGNED_URL_SECRET, assetUrl(BASE, found!.logo.masterKey), now);
  if (!result.ok) throw new Error(result.error.message);
  return new URL(result.value.url);
}

const get = (url: URL | string) => exports.default.fetch(url.toString());

describe("signed asset URLs", () => {
  it("serve the image until they expire, then answer 403", async () => {
    const fresh = await signed();
    expect((await get(fresh)).status).toBe(200);
    const old = await signed(Date.now() - 3601_000);
    const expired = await get(old);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toBe("Signed URL expired");
  });

  it.each([
    ["a changed expiry", (url: URL) => url.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 86_400))],
    // Its last two characters changed: to "AA", or "BB" where they were "AA" (one signature in 4,096).
    [
      "a changed signature",
      (url: URL) => {
        const signature = url.searchParams.get("signature")!;
        url.searchParams.set("signature", `${signature.slice(0, -2)}${signature.endsWith("AA") ? "BB" : "AA"}`);
      },
    ],
    // The last character's lowest bit, which carries none of the MAC's: the same bytes, another URL.
    [
      "the signature spelt otherwise",
      (url: URL) => {
        const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        const signature = url.searchParams.get("signature")!;
        url.searchParams.set("signature", `${signature.slice(0, -1)}${alphabet[alphabet.indexOf(signature.at(-1)!) ^ 1]}`);
      },
    ],
    ["an added parameter", (url: URL) => url.searchParams.set("maxWidth", "10")],
    ["another object", (url: URL) => (url.pathname = url.pathname.slice(0, -2) + (url.pathname.endsWith("Zw") ? "Zx" : "Zw"))],
    ["no signature", (url: URL) => url.searchParams.delete("signature")],
    ["a malformed signature", (url: URL) => url.searchParams.set("signature", "%%%")],
  ])("%s → 403, never the image", async (_, tamper) => {
    const url = await signed();
    expect((await get(url)).status).toBe(200);
    tamper(url);
    const response = await get(url);
    expect([403, 404]).toContain(response.status);
    expect(response.headers.get("content-type")).not.toBe("image/png");
  });

  it("a server without SIGNED_URL_SECRET cannot sign, with the spec's message", async () => {
    expect(await signAssetUrl(undefined, `${BASE}/assets/abc`)).toEqual({
      ok: false,
      error: { code: "internal", message: "Unable to generate signed URL. Try again later" },
    });
  });

  it("the same asset without signature parameters stays public", async () => {
    const url = await signed();
    url.search = "";
    expect((await get(url)).status).toBe(200);
  });
});
