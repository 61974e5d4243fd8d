import { decode } from "fast-png";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { encodePng } from "../../tools/importer/png";
import type { Pixels } from "../../src/images/renditions";

/** Deterministic pixels: every channel value occurs, and the alpha varies too. */
function pixels(width: number, height: number, channels: 2 | 4): Pixels {
  const data = new Uint8Array(width * height * channels);
  for (let i = 0; i < data.length; i++) data[i] = (i * 37 + (i >> 7)) & 255;
  return { width, height, channels, data };
}

describe("the importer's PNG encoder", () => {
  it.each([
    [1, 1],
    [3, 2],
    [257, 31],
  ])("writes RGBA that decoders read back pixel for pixel (%i×%i)", async (width, height) => {
    const image = pixels(width, height, 4);
    const png = encodePng(image);
    const decoded = decode(png);
    expect([decoded.width, decoded.height, decoded.channels, decoded.depth]).toEqual([width, height, 4, 8]);
    expect(Buffer.from(decoded.data as Uint8Array).equals(Buffer.from(image.data))).toBe(true);
    const read = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect(read.info.channels).toBe(4);
    expect(read.data.equals(Buffer.from(image.data))).toBe(true);
  });

  it("writes grey + alpha as a two-channel greyscale PNG", async () => {
    const image = pixels(129, 17, 2);
    const png = encodePng(image);
    const decoded = decode(png);
    expect([decoded.channels, decoded.depth]).toEqual([2, 8]);
    expect(Buffer.from(decoded.data as Uint8Array).equals(Buffer.from(image.data))).toBe(true);
    const metadata = await sharp(png).metadata();
    expect([metadata.format, metadata.channels, metadata.space, metadata.hasAlpha]).toEqual(["png", 2, "b-w", true]);
  });
});
