import { describe, expect, it } from "vitest";
import { shrinkPixels } from "../../src/images/shrink";

const rgba = (width: number, height: number, pixels: number[][]) => ({
  width,
  height,
  channels: 4 as const,
  data: Uint8Array.from(pixels.flat()),
});

describe("shrinkPixels", () => {
  it("averages each block, weighting colours by alpha so that a transparent pixel's colour bleeds nowhere", () => {
    // 4×2 → 2×1: the left block is red with a transparent green pixel, the right one half blue, half white.
    const image = rgba(4, 2, [
      [255, 0, 0, 255],
      [0, 255, 0, 0],
      [0, 0, 255, 255],
      [255, 255, 255, 255],
      [255, 0, 0, 255],
      [255, 0, 0, 255],
      [0, 0, 255, 255],
      [255, 255, 255, 255],
    ]);
    const shrunk = shrinkPixels(image, 2);
    expect({ width: shrunk.width, height: shrunk.height }).toEqual({ width: 2, height: 1 });
    expect([...shrunk.data]).toEqual([255, 0, 0, 191, 128, 128, 255, 255]);
  });

  it("keeps the aspect and leaves an image within the bound as it is", () => {
    const tall = rgba(
      10,
      40,
      Array.from({ length: 400 }, () => [9, 9, 9, 255]),
    );
    const shrunk = shrinkPixels(tall, 20);
    expect({ width: shrunk.width, height: shrunk.height }).toEqual({ width: 5, height: 20 });
    expect(shrunk.data.every((v, i) => v === (i % 4 === 3 ? 255 : 9))).toBe(true);
    expect(shrinkPixels(tall, 40)).toBe(tall);
  });

  it("a block with no ink stays fully transparent", () => {
    const clear = rgba(
      4,
      4,
      Array.from({ length: 16 }, () => [200, 10, 10, 0]),
    );
    expect([...shrinkPixels(clear, 2).data]).toEqual(new Array(16).fill(0));
  });
});
