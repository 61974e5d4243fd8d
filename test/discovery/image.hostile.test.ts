import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { decodeIcon } from "../../src/discovery/image";
import { ico, png } from "./helpers";

/**
 * Icon decoding (src/discovery/image.ts) against files made to hurt: sizes that loop the
 * Images binding, headers that lie, image data that inflates without end, broken ICO entries;
 * and the PNG kinds fast-png hands back packed. The real Images binding unless a test needs
 * one that misbehaves; every test that could loop counts the binding's calls and stops them.
 */

/** The real binding, counted; past `allowed` calls it throws, so a loop ends as a refusal, never a hang. */
function countedImages(allowed = 6): { images: ImagesBinding; calls: () => number } {
  let calls = 0;
  const count = () => {
    if (++calls > allowed) throw new Error(`more than ${allowed} Images binding calls`);
  };
  const real = env.IMAGES;
  const images: ImagesBinding = {
    info: (stream, options) => (count(), real.info(stream, options)),
    input: (stream, options) => (count(), real.input(stream, options)),
    text: (content, options) => real.text(content, options),
    get hosted() {
      return real.hosted;
    },
  };
  return { images, calls: () => calls };
}

/** A binding that hands back whatever it is given, as a broken or hostile one might. */
function echoImages(size: { width: number; height: number }): { images: ImagesBinding; calls: () => number } {
  let calls = 0;
  const transformer = (bytes: Promise<Uint8Array>): ImageTransformer => ({
    transform: () => transformer(bytes),
    draw: () => transformer(bytes),
    output: async () => {
      const image = await bytes;
      return { response: () => new Response(image), contentType: () => "image/png", image: () => new Response(image).body! };
    },
  });
  const images: ImagesBinding = {
    info: async (stream) => {
      if (++calls > 6) throw new Error("more than 6 Images binding calls");
      return { format: "image/png", fileSize: (await new Response(stream).arrayBuffer()).byteLength, ...size };
    },
    input: (stream) => {
      if (++calls > 6) throw new Error("more than 6 Images binding calls");
      return transformer(new Response(stream).arrayBuffer().then((buffer) => new Uint8Array(buffer)));
    },
    text: () => {
      throw new Error("not used");
    },
    get hosted(): HostedImagesBinding {
      throw new Error("not used");
    },
  };
  return { images, calls: () => calls };
}

// PNG files built chunk by chunk (PNG §5), for what an encoder would never write.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function chunk(type: string, data: Uint8Array | number[]): Uint8Array {
  const body = new Uint8Array([...new TextEncoder().encode(type), ...data]);
  let crc = 0xffffffff;
  for (const byte of body) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  const out = new Uint8Array(body.length + 8);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length - 4);
  out.set(body, 4);
  view.setUint32(body.length + 4, (crc ^ 0xffffffff) >>> 0);
  return out;
}

function ihdr(width: number, height: number, depth: number, colourType: number, interlace = 0): Uint8Array {
  const data = new Uint8Array(13);
  const view = new DataView(data.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  data.set([depth, colourType, 0, 0, interlace], 8);
  return chunk("IHDR", data);
}

function pngOf(...chunks: Uint8Array[]): Uint8Array {
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ...chunks, chunk("IEND", [])];
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  parts.reduce((at, part) => (out.set(part, at), at + part.length), 0);
  return out;
}

/** zlib (RFC 1950) of `length` bytes, `rows` of them repeated, written through the runtime's CompressionStream. */
async function zlibOf(rows: Uint8Array, length = rows.length): Promise<Uint8Array> {
  const stream = new CompressionStream("deflate");
  const writing = (async () => {
    const writer = stream.writable.getWriter();
    for (let at = 0; at < length; at += rows.length) await writer.write(rows.subarray(0, Math.min(rows.length, length - at)));
    await writer.close();
  })();
  const [bytes] = await Promise.all([new Response(stream.readable).arrayBuffer(), writing]);
  return new Uint8Array(bytes);
}

/** Scanlines with filter byte 0 (§7.3) for `height` rows of `rowBytes` packed bytes. */
const scanlines = (height: number, row: number[]) => new Uint8Array(Array.from({ length: height }, () => [0, ...row]).flat());

/** The pixels of a decoded icon as [r, g, b, a] quads. */
function quads(data: Uint8Array): number[][] {
  return Array.from({ length: data.length / 4 }, (_, i) => [...data.subarray(i * 4, i * 4 + 4)]);
}

describe("images taller than wide", () => {
  it("scales a 100×1500 PNG inside 1200×1200 with one pass through the binding", { timeout: 20_000 }, async () => {
    const { images, calls } = countedImages();
    const decoded = await decodeIcon(images, png(100, 1500), "png");
    expect(calls()).toBe(2); // info, then one transform
    expect(decoded).toMatchObject({ ok: true, value: { sourceWidth: 100, sourceHeight: 1500, pixels: { width: 80, height: 1200 } } });
  });

  it("draws a 10×30 SVG inside 1200×1200", { timeout: 20_000 }, async () => {
    const { images, calls } = countedImages();
    const svg = new TextEncoder().encode(
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 30"><rect width="10" height="30" fill="#123456"/></svg>',
    );
    const decoded = await decodeIcon(images, svg, "svg");
    expect(calls()).toBe(1);
    expect(decoded).toMatchObject({ ok: true, value: { vector: true, pixels: { width: 400, height: 1200 } } });
  });

  it("refuses what the binding hands back still too large, without asking it again", { timeout: 20_000 }, async () => {
    const { images, calls } = echoImages({ width: 100, height: 1500 });
    const decoded = await decodeIcon(images, png(100, 1500), "png");
    expect(calls()).toBe(2);
    expect(decoded).toMatchObject({ ok: false, error: { message: "PNG of 100×1500 refused" } });
  });
});

describe("PNG headers that lie and data that inflates without end", () => {
  const grey1300 = async () => chunk("IDAT", await zlibOf(scanlines(1, Array(1300).fill(90)), 1300 * 1301));

  it("reads the size from IHDR only, and refuses a file whose first chunk is another", async () => {
    // An ancillary chunk whose data sits where IHDR's width and height would: 1×1.
    const file = pngOf(chunk("teSt", [0, 0, 0, 1, 0, 0, 0, 1]), ihdr(1300, 1300, 8, 0), await grey1300());
    const decoded = await decodeIcon(countedImages().images, file, "png");
    expect(decoded).toMatchObject({ ok: false, error: { message: "PNG whose first chunk is not IHDR" } });
  });

  it("refuses a second IHDR, which would resize the image after the size check", async () => {
    const file = pngOf(ihdr(1, 1, 8, 0), ihdr(1300, 1300, 8, 0), await grey1300());
    const decoded = await decodeIcon(countedImages().images, file, "png");
    expect(decoded).toMatchObject({ ok: false, error: { message: "PNG with a second IHDR" } });
  });

  it("refuses image data inflating past what a 1×1 header declares, before inflating it all", async () => {
    // 32 MB of zeros in some 32 KB: a 1×1 greyscale PNG needs 2 bytes.
    const file = pngOf(ihdr(1, 1, 8, 0), chunk("IDAT", await zlibOf(new Uint8Array(1 << 20), 32 << 20)));
    expect(file.length).toBeLessThan(64 << 10);
    const decoded = await decodeIcon(countedImages().images, file, "png");
    expect(decoded).toMatchObject({ ok: false, error: { message: "PNG data inflating past the 2 bytes its 1×1 header declares" } });
  });

  it("refuses the same inside an ICO, and keeps the entry that decodes", async () => {
    const bomb = pngOf(ihdr(64, 64, 8, 0), chunk("IDAT", await zlibOf(new Uint8Array(1 << 20), 32 << 20)));
    const decoded = await decodeIcon(
      countedImages().images,
      ico([{ png: bomb, size: 64 }, { bmp: { size: 48, rgba: [0, 128, 255, 255] } }]),
      "ico",
    );
    expect(decoded).toMatchObject({ ok: true, value: { sourceWidth: 48, pixels: { width: 48 } } });
  });
});

describe("PNG kinds fast-png hands back packed or wide", () => {
  it("scales 1-, 2- and 4-bit greyscale samples to 8 bits, rows padded to a byte", async () => {
    // 5 px wide: 1-bit rows are one byte with 3 bits of padding.
    const white1 = pngOf(ihdr(5, 2, 1, 0), chunk("IDAT", await zlibOf(scanlines(2, [0b11111000]))));
    const ramp2 = pngOf(ihdr(4, 1, 2, 0), chunk("IDAT", await zlibOf(scanlines(1, [0b00011011]))));
    const ramp4 = pngOf(ihdr(3, 1, 4, 0), chunk("IDAT", await zlibOf(scanlines(1, [0x0f, 0x50]))));
    const images = countedImages(0).images;
    const pixels = async (file: Uint8Array) => {
      const decoded = await decodeIcon(images, file, "png");
      if (!decoded.ok) throw new Error(decoded.error.message);
      return quads(decoded.value.pixels.data);
    };
    expect(await pixels(white1)).toEqual(Array(10).fill([255, 255, 255, 255]));
    expect((await pixels(ramp2)).map(([grey]) => grey)).toEqual([0, 85, 170, 255]);
    expect((await pixels(ramp4)).map(([grey]) => grey)).toEqual([0, 255, 85]);
  });

  it("keeps the high byte of 16-bit greyscale with alpha, and honours a tRNS colour key", async () => {
    const greyAlpha16 = pngOf(
      ihdr(2, 1, 16, 4),
      chunk("IDAT", await zlibOf(scanlines(1, [0xff, 0xff, 0x80, 0x00, 0x12, 0x34, 0xff, 0xff]))),
    );
    const keyed = pngOf(ihdr(2, 1, 8, 0), chunk("tRNS", [0, 7]), chunk("IDAT", await zlibOf(scanlines(1, [7, 8]))));
    const images = countedImages(0).images;
    expect(await decodeIcon(images, greyAlpha16, "png")).toMatchObject({
      ok: true,
      value: { pixels: { data: new Uint8Array([255, 255, 255, 128, 18, 18, 18, 255]) } },
    });
    expect(await decodeIcon(images, keyed, "png")).toMatchObject({
      ok: true,
      value: { pixels: { data: new Uint8Array([7, 7, 7, 0, 8, 8, 8, 255]) } },
    });
  });

  it("reads a truecolour PNG carrying a suggested palette as truecolour", async () => {
    const file = pngOf(ihdr(1, 1, 8, 2), chunk("PLTE", [1, 2, 3]), chunk("IDAT", await zlibOf(scanlines(1, [200, 100, 50]))));
    expect(await decodeIcon(countedImages(0).images, file, "png")).toMatchObject({
      ok: true,
      value: { pixels: { data: new Uint8Array([200, 100, 50, 255]) } },
    });
  });

  it("has the binding redraw an interlaced 1-bit PNG, which fast-png misreads", { timeout: 20_000 }, async () => {
    // Adam7 (§8.2) of an all-white 9×9 image: each pass's rows are one byte of ones.
    const rows: number[] = [];
    for (const [x0, y0, dx, dy] of [
      [0, 0, 8, 8],
      [4, 0, 8, 8],
      [0, 4, 4, 8],
      [2, 0, 4, 4],
      [0, 2, 2, 4],
      [1, 0, 2, 2],
      [0, 1, 1, 2],
    ] as const) {
      const w = Math.ceil((9 - x0) / dx);
      const h = Math.ceil((9 - y0) / dy);
      if (w > 0 && h > 0) for (let y = 0; y < h; y++) rows.push(0, ...Array(Math.ceil(w / 8)).fill(0xff));
    }
    const { images, calls } = countedImages();
    const decoded = await decodeIcon(images, pngOf(ihdr(9, 9, 1, 0, 1), chunk("IDAT", await zlibOf(new Uint8Array(rows)))), "png");
    expect(decoded.ok && quads(decoded.value.pixels.data).every(([r, g, b, a]) => r === 255 && g === 255 && b === 255 && a === 255)).toBe(
      true,
    );
    expect(calls()).toBe(2);
  });
});

describe("ICO entries tried best first", () => {
  it("passes over a PNG entry claiming 5000×5000 for the BMP entry beside it", async () => {
    const claim = pngOf(ihdr(5000, 5000, 8, 6), chunk("IDAT", await zlibOf(new Uint8Array(64))));
    const decoded = await decodeIcon(
      countedImages(0).images,
      ico([{ png: claim, size: 0 }, { bmp: { size: 48, rgba: [0, 128, 255, 255] } }]),
      "ico",
    );
    expect(decoded).toMatchObject({ ok: true, value: { sourceWidth: 48, sourceHeight: 48 } });
    expect(decoded.ok && quads(decoded.value.pixels.data)[0]).toEqual([0, 128, 255, 255]);
  });

  it("passes over a PNG entry whose data is broken", async () => {
    const broken = pngOf(ihdr(64, 64, 8, 6), chunk("IDAT", [0x78, 0x9c, 0xff, 0xff, 0xff, 0xff, 0xff]));
    const decoded = await decodeIcon(
      countedImages(0).images,
      ico([{ png: broken, size: 64 }, { bmp: { size: 48, rgba: [0, 128, 255, 255] } }]),
      "ico",
    );
    expect(decoded).toMatchObject({ ok: true, value: { sourceWidth: 48 } });
  });

  it("refuses an ICO none of whose entries decodes, with the best entry's reason", async () => {
    const broken = pngOf(ihdr(64, 64, 8, 6), chunk("IDAT", [0x78, 0x9c, 0xff, 0xff, 0xff, 0xff, 0xff]));
    const decoded = await decodeIcon(countedImages(0).images, ico([{ png: broken, size: 64 }]), "ico");
    expect(decoded).toMatchObject({ ok: false, error: { code: "invalid_argument" } });
  });
});
