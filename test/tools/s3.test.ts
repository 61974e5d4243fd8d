import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logosInIdOrder } from "../../src/catalogue/logos";
import { importCompanyLogos } from "../../src/catalogue/importLogo";
import { s3ObjectStore, s3SettingsFrom } from "../../tools/importer/s3";
import { logoObjectKeys } from "../../src/images/objectKeys";
import { ok } from "../../src/lib/errors";
import { sha256Hex } from "../../src/lib/encoding";
import { blackPng, preparedFrom } from "../fixtures/images";
import { FAKE_S3, startFakeR2S3 } from "../fakes/r2S3Api";
import { freshState, openSharedPlatform } from "./helpers";

/** Bulk loads into a deployment put objects through R2's S3 API; here against a local stand-in. */
let s3: Awaited<ReturnType<typeof startFakeR2S3>>;
beforeAll(async () => {
  s3 = await startFakeR2S3();
});
afterAll(() => s3.server.close());

const store = (secretAccessKey = FAKE_S3.secretAccessKey) =>
  s3ObjectStore({ endpoint: s3.url, bucket: FAKE_S3.bucket, accessKeyId: FAKE_S3.accessKeyId, secretAccessKey, retries: 1 });

describe("R2 through its S3 API", () => {
  it("puts objects signed, with their content type and custom metadata, and deletes them", async () => {
    await store().put("logos/acme.com/icon.test.0123456789abcdef.png", blackPng, {
      httpMetadata: { contentType: "image/png" },
      customMetadata: { width: "4", height: "2" },
    });
    expect(s3.objects.get("logos/acme.com/icon.test.0123456789abcdef.png")).toEqual({
      body: blackPng,
      contentType: "image/png",
      contentDisposition: undefined,
      metadata: { width: "4", height: "2" },
    });
    await store().delete(["logos/acme.com/icon.test.0123456789abcdef.png", "logos/never-stored.png"]);
    expect(s3.objects.has("logos/acme.com/icon.test.0123456789abcdef.png")).toBe(false);
  });

  it("fails a put the bucket refuses, or signed with the wrong secret", async () => {
    const before = s3.requests.length;
    await expect(store().put("logos/put-fails.png", blackPng, {})).rejects.toThrow("S3 PUT logos/put-fails.png answered 500");
    // A 5xx is tried again before the put fails.
    expect(s3.requests.length - before).toBe(2);
    await expect(store("wrong-secret").put("logos/x.png", blackPng, {})).rejects.toThrow("answered 403");
  });

  it("takes the endpoint, bucket and keys from the environment, or nothing when one is missing", () => {
    expect(s3SettingsFrom({ CLOUDFLARE_ACCOUNT_ID: "abc123", R2_ACCESS_KEY_ID: "k", R2_SECRET_ACCESS_KEY: "s" }, "b")).toEqual({
      endpoint: "https://abc123.r2.cloudflarestorage.com",
      bucket: "b",
      accessKeyId: "k",
      secretAccessKey: "s",
    });
    expect(
      s3SettingsFrom({ R2_S3_ENDPOINT: "https://s3.example.com/", R2_ACCESS_KEY_ID: "k", R2_SECRET_ACCESS_KEY: "s" }, "b")?.endpoint,
    ).toBe("https://s3.example.com");
    expect(s3SettingsFrom({ CLOUDFLARE_ACCOUNT_ID: "abc123", R2_ACCESS_KEY_ID: "k" }, "b")).toBeUndefined();
  });

  it("carries the write path's objects as the binding would: every key the logo row names, with its metadata", async () => {
    const state = await freshState();
    const platform = await openSharedPlatform(state.dir);
    try {
      const image = await preparedFrom(blackPng);
      const [result] = await importCompanyLogos(platform.db, store(), [
        {
          input: {
            name: "Acme",
            domains: ["acme-s3.com"],
            aliases: [],
            prominence: 0,
            variant: "icon",
            sourceSet: "s3",
            licence: "MIT",
            sourceHash: await sha256Hex(blackPng),
          },
          image: async () => ok(image),
        },
      ]);
      expect(result!.ok).toBe(true);
      const [row] = await logosInIdOrder(platform.db);
      const keys = logoObjectKeys(row!);
      expect(keys.length).toBeGreaterThanOrEqual(4);
      for (const key of keys) expect(s3.objects.has(key), key).toBe(true);
      expect(s3.objects.get(row!.masterKey)).toMatchObject({ contentType: "image/png", metadata: { width: "4", height: "2" } });
      expect(s3.objects.get(row!.originalKey)).toMatchObject({
        contentType: "application/octet-stream",
        contentDisposition: "attachment",
        metadata: {},
      });
    } finally {
      await platform.dispose();
      state.cleanup();
    }
  });
});
