import { describe, expect, it } from "vitest";
import { decodeBmpEntry, entriesBestFirst, icoEntries } from "../../src/discovery/ico";
import { sniffFormat } from "../../src/discovery/sniff";
import { ico, png } from "./helpers";

/** A one-entry ICO around a hand-made DIB: `rows` bottom-up pixel bytes, `mask` rows of the AND mask. */
function dibIco(width: number, height: number, bitCount: number, palette: number[][], rows: number[][], mask: number[][]): Uint8Array {
  const header = new Uint8Array(40);
  const view = new DataView(header.buffer);
  view.setUint32(0, 40, true);
  view.setInt32(4, width, true);
  view.setInt32(8, height * 2, true);
  view.setUint16(12, 1, true);
  view.setUint16(14, bitCount, true);
  view.setUint32(32, palette.length, true);
  const pad = (row: number[]) => [...row, ...Array((4 - (row.length % 4)) % 4).fill(0)];
  const dib = new Uint8Array([...header, ...palette.flatMap((c) => [...c, 0]), ...rows.flatMap(pad), ...mask.flatMap(pad)]);
  const out = new Uint8Array(22 + dib.length);
  const dir = new DataView(out.buffer);
  dir.setUint16(2, 1, true);
  dir.setUint16(4, 1, true);
  out[6] = width;
  out[7] = height;
  dir.setUint16(12, bitCount, true);
  dir.setUint32(14, dib.length, true);
  dir.setUint32(18, 22, true);
  out.set(dib, 22);
  return out;
}

const pixel = (data: Uint8Array, width: number, x: number, y: number) => [...data.subarray((y * width + x) * 4, (y * width + x) * 4 + 4)];

describe("ICO entries", () => {
  it("decodes an 8-bit palette entry, bottom-up, with its AND mask as transparency", () => {
    // Palette entries are BGR(x); rows are stored bottom row first.
    const file = dibIco(
      2,
      2,
      8,
      [
        [255, 0, 0],
        [0, 0, 255],
      ],
      [
        [0, 1],
        [1, 1],
      ],
      [[0x40], [0x00]],
    );
    const [entry] = icoEntries(file);
    const pixels = decodeBmpEntry(entry!)!;
    expect(pixels).toMatchObject({ width: 2, height: 2, channels: 4 });
    expect(pixel(pixels.data, 2, 0, 0)).toEqual([255, 0, 0, 255]); // top row is the last stored: red, red
    expect(pixel(pixels.data, 2, 0, 1)).toEqual([0, 0, 255, 255]); // bottom-left: blue
    expect(pixel(pixels.data, 2, 1, 1)).toEqual([255, 0, 0, 0]); // bottom-right: masked out
  });

  it("decodes 24-bit entries and a 32-bit entry whose alpha is all zero by its mask", () => {
    const rgb = decodeBmpEntry(icoEntries(dibIco(1, 1, 24, [], [[10, 20, 30]], [[0]]))[0]!)!;
    expect([...rgb.data]).toEqual([30, 20, 10, 255]);
    const noAlpha = decodeBmpEntry(icoEntries(dibIco(1, 1, 32, [], [[10, 20, 30, 0]], [[0x00]]))[0]!)!;
    expect([...noAlpha.data]).toEqual([30, 20, 10, 255]);
  });

  it("keeps the largest entry and refuses entries whose header claims an absurd size", () => {
    const file = ico([
      { bmp: { size: 16, rgba: [1, 2, 3, 255] } },
      { png: png(40, 40), size: 40 },
      { bmp: { size: 32, rgba: [1, 2, 3, 255] } },
    ]);
    expect(entriesBestFirst(icoEntries(file))[0]).toMatchObject({ kind: "png", width: 40 });
    const hostile = dibIco(1, 1, 32, [], [[0, 0, 0, 255]], [[0]]);
    new DataView(hostile.buffer).setInt32(22 + 4, 100_000, true);
    expect(icoEntries(hostile)).toEqual([]);
    expect(icoEntries(new Uint8Array([0, 0, 1, 0, 5, 0]))).toEqual([]);
  });

  it("lists entries best first, and takes a PNG entry's size from IHDR alone, within the same bound", () => {
    const file = ico([{ bmp: { size: 16, rgba: [1, 2, 3, 255] } }, { png: png(40, 40), size: 40 }, { png: png(1100, 1), size: 0 }]);
    expect(entriesBestFirst(icoEntries(file)).map((entry) => [entry.kind, entry.width])).toEqual([
      ["png", 40],
      ["bmp", 16],
    ]);
    // A chunk before IHDR holds, where IHDR's size would be, 1×1.
    const lying = png(40, 40);
    lying.set([0, 0, 0, 8, ..."teSt".split("").map((c) => c.charCodeAt(0)), 0, 0, 0, 1, 0, 0, 0, 1], 8);
    expect(icoEntries(ico([{ png: lying, size: 40 }]))).toEqual([]);
  });
});

describe("formats by their first bytes", () => {
  it.each([
    [png(1, 1), "png"],
    [ico([{ bmp: { size: 1, rgba: [0, 0, 0, 255] } }]), "ico"],
    [new TextEncoder().encode('\uFEFF<?xml version="1.0"?>\n<!-- made by hand --><!DOCTYPE svg><svg viewBox="0 0 1 1"/>'), "svg"],
    [new TextEncoder().encode("<html><svg/></html>"), null],
    [new Uint8Array([0xff, 0xd8, 0xff, 0xe0]), "jpeg"],
    [new TextEncoder().encode("GIF89a......"), "gif"],
    [new TextEncoder().encode("RIFF\0\0\0\0WEBPVP8 "), "webp"],
    [new Uint8Array(0), null],
  ])("%#: %s", (bytes, format) => {
    expect(sniffFormat(bytes as Uint8Array)).toBe(format);
  });
});
