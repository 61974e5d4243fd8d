import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { type PreparedLogo, prepareLogo } from "../../tools/importer/prepare";

const svgLogo = (size: string, body = '<rect width="20" height="10" fill="#123456"/>', viewBox = ' viewBox="0 0 20 10"') =>
  new TextEncoder().encode(`<svg xmlns="http://www.w3.org/2000/svg"${viewBox}${size}>${body}</svg>`);

async function prepared(input: Uint8Array): Promise<PreparedLogo> {
  const result = await prepareLogo(input);
  if (!result.ok) throw new Error(result.error);
  return result.logo;
}

/** The master's size, and its alpha at the corners and the centre: where the drawing is. */
async function master(logo: PreparedLogo) {
  const { data, info } = await sharp(logo.files.master).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const alpha = (x: number, y: number) => data[(Math.floor(y) * info.width + Math.floor(x)) * 4 + 3];
  const [w, h] = [info.width, info.height];
  return {
    width: w,
    height: h,
    corners: [alpha(1, 1), alpha(w - 2, 1), alpha(1, h - 2), alpha(w - 2, h - 2)],
    centre: alpha(w / 2, h / 2),
  };
}

/** A photo-like JPEG: a dark band along its stored top edge, to see which way it is shown. */
async function jpegWithOrientation(width: number, height: number, orientation: number): Promise<Uint8Array> {
  const band = await sharp({ create: { width, height: Math.round(height / 10), channels: 3, background: "#000000" } })
    .png()
    .toBuffer();
  return sharp({ create: { width, height, channels: 3, background: "#ffffff" } })
    .composite([{ input: band, top: 0, left: 0 }])
    .jpeg()
    .withMetadata({ orientation })
    .toBuffer();
}

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 4, background: "#123456" } })
    .png()
    .toBuffer();

describe("an SVG's master", () => {
  // libvips applies the density to physical units twice: these failed with "exceeds pixel limit".
  it.each([
    ["mm", ' width="40mm" height="20mm"'],
    ["pt", ' width="100pt" height="50pt"'],
    ["cm", ' width="2cm" height="1cm"'],
    ["in", ' width="1in" height="0.5in"'],
    ["pc", ' width="6pc" height="3pc"'],
    ["px", ' width="40px" height="20px"'],
    ["unitless numbers", ' width="40" height="20"'],
    ["em", ' width="2em" height="1em"'],
    ["%", ' width="100%" height="100%"'],
    ["no size, only a viewBox", ""],
    ["a width alone", ' width="30pt"'],
  ])("is 1,200 px wide with the aspect kept, sized in %s", async (_, size) => {
    const logo = await prepared(svgLogo(size));
    expect(await master(logo)).toEqual({ width: 1200, height: 600, corners: [255, 255, 255, 255], centre: 255 });
    expect([logo.width, logo.height]).toEqual([1200, 600]);
  });

  it.each([
    ["48pt", "48pt"],
    ["2cm", "2cm"],
    ["1in", "1in"],
  ])("keeps the aspect of its size, not its viewBox's: %s × %s", async (width, height) => {
    // The 2:1 drawing sits in the middle of a square, as a browser shows it.
    expect(await master(await prepared(svgLogo(` width="${width}" height="${height}"`)))).toEqual({
      width: 1200,
      height: 1200,
      corners: [0, 0, 0, 0],
      centre: 255,
    });
  });

  it("reads physical units as a browser does (96 px to the inch) when there is no viewBox", async () => {
    const logo = await prepared(svgLogo(' width="1in" height="0.5in"', '<rect width="96" height="48" fill="#123456"/>', ""));
    expect(await master(logo)).toEqual({ width: 1200, height: 600, corners: [255, 255, 255, 255], centre: 255 });
  });

  it("finds the size of a file as design tools write it: declaration, comments, document type, single quotes", async () => {
    const source =
      '\ufeff<?xml version="1.0" encoding="UTF-8"?>\n<!-- Generator: Adobe Illustrator 27.0.0, SVG Export Plug-In. <svg width="9in"> -->\n' +
      '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n' +
      '<svg version="1.1" xmlns="http://www.w3.org/2000/svg" x="0px" y="0px"\n\t width=\'75pt\' height = \'37.5pt\' viewBox="0 0 20 10" xml:space="preserve">' +
      '<rect width="20" height="10" fill="#123456"/><text x="1" y="8" font-size="4">Café</text></svg>';
    const file = new TextEncoder().encode(source);
    const logo = await prepared(file);
    expect(await master(logo)).toMatchObject({ width: 1200, height: 600, centre: 255 });
    // The original and its sanitised vector are the file as it came, not the copy rendered.
    expect(Buffer.from(logo.original).equals(file)).toBe(true);
    expect(new TextDecoder().decode(logo.vector!)).toContain("Café");
  });

  it("is rendered at the master's size whatever the nominal size, even one far over 64 megapixels", async () => {
    expect(await master(await prepared(svgLogo(' width="9000" height="9000"')))).toMatchObject({ width: 1200, height: 1200, centre: 255 });
    expect(await master(await prepared(svgLogo(' width="90000" height="45000"')))).toMatchObject({ width: 1200, height: 600, centre: 255 });
  });

  it("is at most 3,200 px tall: a tall mark is narrower instead", async () => {
    const tall = svgLogo(' width="10pt" height="100pt"', '<rect width="10" height="100" fill="#123456"/>', ' viewBox="0 0 10 100"');
    expect(await master(await prepared(tall))).toEqual({ width: 320, height: 3200, corners: [255, 255, 255, 255], centre: 255 });
    const stacked = svgLogo("", '<rect width="30" height="80" fill="#123456"/>', ' viewBox="0 0 30 80"');
    expect(await master(await prepared(stacked))).toMatchObject({ width: 1200, height: 3200 });
  });
});

describe("a raster's master", () => {
  it.each([
    // [stored width, height, EXIF orientation, master width, height]
    [4000, 2000, 6, 1600, 3200],
    [2000, 4000, 6, 3200, 1600],
    [2000, 4000, 8, 3200, 1600],
    [1000, 3000, 6, 3000, 1000],
    [2000, 1000, 6, 1000, 2000],
    [4000, 2000, 1, 3200, 1600],
  ])(
    "is the image as shown, within 3,200 px and never enlarged: %i×%i, orientation %i",
    async (width, height, orientation, masterWidth, masterHeight) => {
      const logo = await prepared(await jpegWithOrientation(width, height, orientation));
      expect([logo.width, logo.height]).toEqual([masterWidth, masterHeight]);
      const { data, info } = await sharp(logo.files.master).greyscale().raw().toBuffer({ resolveWithObject: true });
      expect([info.width, info.height]).toEqual([masterWidth, masterHeight]);
      // Orientation 6 shows the stored top on the right, 8 on the left, 1 on top.
      const grey = (x: number, y: number) => data[(Math.floor(y) * info.width + Math.floor(x)) * info.channels]!;
      const band = { 1: grey(masterWidth / 2, 2), 6: grey(masterWidth - 3, masterHeight / 2), 8: grey(2, masterHeight / 2) }[orientation]!;
      expect(band).toBeLessThan(40);
      expect(grey(masterWidth / 2, masterHeight / 2)).toBeGreaterThan(215);
    },
  );

  it.each([
    [1, 10000, 1, 3200],
    [400, 8000, 160, 3200],
    [5000, 250, 3200, 160],
  ])("fits within 3,200 px tall as well as wide, its aspect kept: %i×%i", async (width, height, masterWidth, masterHeight) => {
    const logo = await prepared(new Uint8Array(await png(width, height)));
    expect(await master(logo)).toEqual({ width: masterWidth, height: masterHeight, corners: [255, 255, 255, 255], centre: 255 });
  });

  it("keeps a stacked wordmark's size when it fits", async () => {
    const logo = await prepared(new Uint8Array(await png(300, 2400)));
    expect([logo.width, logo.height]).toEqual([300, 2400]);
  });
});
