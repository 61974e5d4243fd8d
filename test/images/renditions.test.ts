import { describe, expect, it } from "vitest";
import { contrastOf, hueDistance, toOklch } from "../../src/images/colour";
import { lookRendition, type RenditionSet } from "../../src/images/objectKeys";
import { encodeRenditions } from "../../src/images/renditionFiles";
import { dominantInk, greyOf, PAGES, type Pixels, renditionPixels } from "../../src/images/renditions";

/** An RGBA image from rows of characters, one colour per character; "." is transparent. */
function picture(rows: string[], colours: Record<string, [number, number, number]>): Pixels {
  const width = rows[0]!.length;
  const data = new Uint8Array(width * rows.length * 4);
  rows.forEach((row, y) => {
    [...row].forEach((ch, x) => {
      if (ch !== ".") data.set([...colours[ch]!, 255], (y * width + x) * 4);
    });
  });
  return { width, height: rows.length, channels: 4, data };
}
const pixel = (p: Pixels, x: number, y: number) =>
  [...p.data.slice((y * p.width + x) * 4, (y * p.width + x) * 4 + 3)] as [number, number, number];

describe("renditions from pixels", () => {
  it("black ink on transparency gets a light rendition for dark pages, alpha kept, and none for light pages", () => {
    const r = renditionPixels(picture(["....", ".##.", ".##.", "...."], { "#": [0, 0, 0] }));
    expect(r.light).toBeNull();
    expect(pixel(r.dark!, 1, 1)).toEqual([255, 255, 255]);
    expect(r.dark!.data[3]).toBe(0);
    expect([...greyOf(r.master).data.slice(10, 12)]).toEqual([0, 255]);
    expect([...greyOf(r.dark!).data.slice(10, 12)]).toEqual([255, 255]);
    expect(r.plain).toBe("master");
  });

  it("ink with enough contrast is served unchanged; navy turns light and stays blue", () => {
    const red = renditionPixels(picture([".....", ".###.", "....."], { "#": [255, 0, 0] }));
    expect([red.light, red.dark]).toEqual([null, null]);
    const navy = renditionPixels(picture([".....", ".###.", "....."], { "#": [26, 31, 113] }));
    const light = pixel(navy.dark!, 2, 1);
    expect(contrastOf(light, PAGES.dark)).toBeGreaterThanOrEqual(3);
    expect(toOklch(light).l).toBeGreaterThan(toOklch([26, 31, 113]).l);
    expect(hueDistance(toOklch(light).h, toOklch([26, 31, 113]).h)).toBeLessThan(5);
  });

  it("changes only the ink the page reaches: a white mark inside red stays white on white", () => {
    const rows = ["........", ".RRRRRR.", ".RWWWWR.", ".RRRRRR.", "........"];
    const r = renditionPixels(picture(rows, { R: [255, 0, 0], W: [255, 255, 255] }));
    expect(r.light).toBeNull();
    expect(r.plain).toBe("master");
  });

  it("white ink is served dark by default, since the page is most often white", () => {
    const r = renditionPixels(picture([".....", ".###.", "....."], { "#": [255, 255, 255] }));
    expect(r.plain).toBe("light");
    expect(pixel(r.light!, 2, 1)).toEqual([0, 0, 0]);
    const set: RenditionSet = { version: 1, light: true, dark: false, plain: r.plain, vector: false };
    expect(lookRendition(set, { greyscale: false })).toBe("light");
    expect(lookRendition(set, { greyscale: true, theme: "dark" })).toBe("grey");
  });

  it("a glyph on a badge whose colour flips flips the other way, so it stays legible", () => {
    const rows = [".......", ".BBBBB.", ".BWWWB.", ".BBBBB.", "......."];
    const r = renditionPixels(picture(rows, { B: [0, 0, 0], W: [255, 255, 255] }));
    expect(pixel(r.dark!, 1, 1)).toEqual([255, 255, 255]);
    expect(contrastOf(pixel(r.dark!, 3, 2), pixel(r.dark!, 1, 1))).toBeGreaterThanOrEqual(3);
    expect(dominantInk(r.dark!)).toEqual([255, 255, 255]);
  });

  it("ink on the mark's own tile keeps its colours: a black N on a white tile outlined in black", () => {
    // The outline lacks contrast with a dark page, but it rims a white tile larger than itself:
    // the tile is what the page meets, and the outline and the N are seen against the tile.
    const rows = [
      "............",
      ".KKKKKKKKKK.",
      ".KWWWWWWWWK.",
      ".KWKKWWWKWK.",
      ".KWKWKWWKWK.",
      ".KWKWWKWKWK.",
      ".KWKWWWKKWK.",
      ".KWKWWWWKWK.",
      ".KWWWWWWWWK.",
      ".KWWWWWWWWK.",
      ".KKKKKKKKKK.",
      "............",
    ];
    const r = renditionPixels(picture(rows, { K: [0, 0, 0], W: [255, 255, 255] }));
    expect(r.dark).toBeNull();
    expect(r.light).toBeNull();
    // Beside it, a black wordmark on the page itself still turns light.
    const withWord = rows.map((row, y) => `${row}${y >= 4 && y <= 7 ? "KKK." : "...."}`);
    const both = renditionPixels(picture(withWord, { K: [0, 0, 0], W: [255, 255, 255] }));
    expect(pixel(both.dark!, 13, 5)).toEqual([255, 255, 255]);
    expect(pixel(both.dark!, 1, 1)).toEqual([0, 0, 0]);
    expect(pixel(both.dark!, 3, 4)).toEqual([0, 0, 0]);
    expect(pixel(both.dark!, 2, 2)).toEqual([255, 255, 255]);
  });

  it("a badge whose colour flips keeps what is drawn on its glyph: the glyph's eye stays told apart", () => {
    const rows = [
      "...........",
      ".BBBBBBBBB.",
      ".BBBBBBBBB.",
      ".BBWWWWWBB.",
      ".BBWWBWWBB.",
      ".BBWWWWWBB.",
      ".BBBBBBBBB.",
      ".BBBBBBBBB.",
      "...........",
    ];
    const r = renditionPixels(picture(rows, { B: [0, 0, 0], W: [255, 255, 255] }));
    const [badge, glyph, eye] = [pixel(r.dark!, 1, 1), pixel(r.dark!, 3, 3), pixel(r.dark!, 5, 4)];
    expect(badge).toEqual([255, 255, 255]);
    expect(contrastOf(glyph, badge)).toBeGreaterThanOrEqual(3);
    expect(contrastOf(eye, glyph)).toBeGreaterThanOrEqual(3);
  });

  it("ink moved for the page stays apart from the ink beside it: white stripes beside black ones on white", () => {
    const rows = [".......", ".WKKKW.", ".WKKKW.", ".WKKKW.", "......."];
    const r = renditionPixels(picture(rows, { K: [0, 0, 0], W: [255, 255, 255] }));
    const stripe = pixel(r.light!, 1, 2);
    expect(contrastOf(stripe, PAGES.light)).toBeGreaterThanOrEqual(3);
    // Mirrored, white would have become black, the colour of the ink beside it.
    expect(contrastOf(stripe, pixel(r.light!, 3, 2))).toBeGreaterThanOrEqual(3);
    expect(pixel(r.light!, 3, 2)).toEqual([0, 0, 0]);
  });

  it("a full-bleed tile is served as it is by default, and on a page of its own colour the tile changes, its content following", () => {
    const rows = ["BBBBBBB", "BBRRRBB", "BBRRRBB", "BBBBBBB"];
    const r = renditionPixels(picture(rows, { B: [0, 0, 0], R: [177, 6, 15] }));
    expect(r.plain).toBe("master");
    expect(r.light).toBeNull();
    expect(pixel(r.dark!, 0, 0)).toEqual([255, 255, 255]);
    // The dim red is reached through the tile, so it is lightened too: still red, legible on both.
    const red = pixel(r.dark!, 3, 1);
    expect(hueDistance(toOklch(red).h, toOklch([177, 6, 15]).h)).toBeLessThan(5);
    expect(contrastOf(red, PAGES.dark)).toBeGreaterThanOrEqual(3);
    expect(contrastOf(red, [255, 255, 255])).toBeGreaterThanOrEqual(3);
  });

  it("keeps each pixel's luminance in greyscale, so grey renditions have the colour's contrast", () => {
    const r = renditionPixels(picture(["#"], { "#": [255, 0, 0] }));
    const grey = greyOf(r.master).data[0]!;
    expect(Math.abs(contrastOf([grey, grey, grey], PAGES.dark) - contrastOf([255, 0, 0], PAGES.dark))).toBeLessThan(0.05);
  });
});

describe("the files stored at import", () => {
  const solid = (width: number, height: number, rgba: [number, number, number, number]): Pixels => {
    const data = new Uint8Array(width * height * 4);
    for (let i = 0; i < data.length; i += 4) data.set(rgba, i);
    return { width, height, channels: 4, data };
  };
  // The raw samples stand in for the PNG, so that what was encoded can be compared.
  const raw = async (pixels: Pixels) => pixels.data;

  it("leave greyscale to the first request up to 2 megapixels", async () => {
    const master = solid(1600, 1250, [200, 40, 40, 255]);
    const { files } = await encodeRenditions(
      { tone: "mixed", master, light: null, dark: solid(1600, 1250, [250, 150, 150, 255]), plain: "master" },
      raw,
      { vector: false },
    );
    expect(Object.keys(files).sort()).toEqual(["dark", "master"]);
  });

  it("carry the greyscale of every colour rendition above 2 megapixels", async () => {
    const master = solid(1600, 1251, [200, 40, 40, 255]);
    const dark = solid(1600, 1251, [250, 150, 150, 255]);
    const { files } = await encodeRenditions({ tone: "mixed", master, light: null, dark, plain: "master" }, raw, { vector: false });
    expect(Object.keys(files).sort()).toEqual(["dark", "darkGrey", "grey", "master"]);
    // Compared whole but as one answer: printing millions of samples is what takes time.
    const same = (a: Uint8Array | undefined, b: Uint8Array) => a?.length === b.length && a.every((v, i) => v === b[i]);
    expect(same(files.grey, greyOf(master).data)).toBe(true);
    expect(same(files.darkGrey, greyOf(dark).data)).toBe(true);
  });
});
