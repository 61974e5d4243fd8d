import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { prepareLogo } from "../../src/cli/importer/prepare";

describe("images the importer refuses, and why", () => {
  it("names a raster over 64 megapixels as too large, not as unreadable", async () => {
    const png = await sharp({ create: { width: 9000, height: 9000, channels: 3, background: "#123456" } }).png({ compressionLevel: 1 }).toBuffer();
    expect(await prepareLogo(new Uint8Array(png))).toEqual({ ok: false, error: "image too large: 9000×9000 (at most 64 megapixels)" });
  });

  it("still calls bytes that are no image unreadable", async () => {
    expect(await prepareLogo(new TextEncoder().encode("this is not an image"))).toEqual({ ok: false, error: "unreadable image (expected SVG, PNG, JPEG, WebP or GIF)" });
  });
});
