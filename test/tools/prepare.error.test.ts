import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { encodePng } from "../../tools/importer/png";
import { prepareLogo, prepareOriginal } from "../../tools/importer/prepare";
import { ico } from "../fixtures/icons";

const svg = (body: string, namespaces = "") =>
  `<svg xmlns="http://www.w3.org/2000/svg"${namespaces} width="100" height="100">${body}</svg>`;
const prepareSvg = (source: string) => prepareLogo(new TextEncoder().encode(source));

/** Ten thousand blurred circles, drawn through four levels of ten references each, the links written `link`. */
function blurredCircles(link = "href"): string {
  let defs = '<filter id="f"><feGaussianBlur stdDeviation="30"/></filter><circle id="a0" r="40" cx="50" cy="50" filter="url(#f)"/>';
  for (let level = 1; level < 5; level++) defs += `<g id="a${level}">${`<use ${link}="#a${level - 1}"/>`.repeat(10)}</g>`;
  return `<defs>${defs}</defs><use ${link}="#a4"/>`;
}

/** A transparent PNG as large as asked: a few hundred kilobytes, as an SVG may embed it. */
const emptyPng = (width: number, height: number) =>
  Buffer.from(encodePng({ width, height, channels: 2, data: new Uint8Array(width * height * 2) })).toString("base64");

describe("images the importer refuses, and why", () => {
  it("names a raster over 64 megapixels as too large, not as unreadable", async () => {
    const png = await sharp({ create: { width: 9000, height: 9000, channels: 3, background: "#123456" } })
      .png({ compressionLevel: 1 })
      .toBuffer();
    expect(await prepareLogo(new Uint8Array(png))).toEqual({ ok: false, error: "image too large: 9000×9000 (at most 64 megapixels)" });
  });

  it("refuses a vector that multiplies its drawing, at once rather than after minutes of drawing", async () => {
    const source = svg(blurredCircles());
    expect(await prepareSvg(source)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^SVG too costly to draw: the SVG applies filters [\d,]+ times \(at most 256\)$/),
    });

    // Unfiltered, the same multiplication a level further.
    const many = source
      .replace(' filter="url(#f)"', "")
      .replace('<use href="#a4"/></svg>', `<g id="a5">${'<use href="#a4"/>'.repeat(10)}</g><use href="#a5"/></svg>`);
    expect(await prepareLogo(new TextEncoder().encode(many))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^SVG too costly to draw: the SVG draws [\d,]+ elements \(at most 50,000\)$/),
    });
  });

  it("refuses the same multiplication hidden where counting elements would miss it", async () => {
    let uses = '<filter id="f"><feGaussianBlur stdDeviation="30"/></filter><circle id="a0" r="40" cx="50" cy="50"/>';
    for (let level = 1; level < 5; level++) uses += `<g id="a${level}">${`<use href="#a${level - 1}"/>`.repeat(10)}</g>`;
    // Filters set by a stylesheet, which attributes do not show.
    const styled = `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><style>circle { filter: url(#f) }</style><defs>${uses}</defs><use href="#a4"/></svg>`;
    expect(await prepareLogo(new TextEncoder().encode(styled))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^SVG too costly to draw: the SVG applies filters [\d,]+ times/),
    });
    // The whole drawing inside an entity, which librsvg expands and a parser that expands none would not count.
    const entity = `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY d '${uses.replaceAll("'", "&#39;")}'>]><svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><defs>&d;</defs><use href="#a4"/></svg>`;
    expect(await prepareLogo(new TextEncoder().encode(entity))).toEqual({
      ok: false,
      error: "SVG too costly to draw: the SVG declares entities (a document type with an internal subset)",
    });
  });

  it("refuses the multiplication whatever prefix its links are bound to", { timeout: 10_000 }, async () => {
    // librsvg follows `x:href` as it does `xlink:href` when `x` names the XLink namespace.
    const source = svg(blurredCircles("x:href"), ' xmlns:x="http://www.w3.org/1999/xlink"');
    expect(await prepareSvg(source)).toEqual({
      ok: false,
      error: "SVG too costly to draw: the SVG applies filters 21,111 times (at most 256)",
    });
  });

  it.each([
    ["an attribute", (marked: string) => `<path d="${marked}" marker-mid="url(#m)"/>`],
    ["its style", (marked: string) => `<path d="${marked}" style="marker: url(#m)"/>`],
    ["the group around it", (marked: string) => `<g marker-mid="url(#m)"><path d="${marked}"/></g>`],
    ["the <use> that draws it", (marked: string) => `<defs><path id="p" d="${marked}"/></defs><use href="#p" marker-mid="url(#m)"/>`],
  ])("counts a marker set by %s at every vertex it marks", { timeout: 10_000 }, async (_, marking) => {
    // A blurred marker drawn at 300 vertices: librsvg blurs 300 times.
    const marker = '<filter id="f"><feGaussianBlur stdDeviation="1"/></filter><marker id="m"><circle r="2" filter="url(#f)"/></marker>';
    const vertices = `M0 0${" l1 1".repeat(299)}`;
    expect(await prepareSvg(svg(marker + marking(vertices)))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^SVG too costly to draw: the SVG applies filters [\d,]+ times \(at most 256\)$/),
    });
  });

  it("refuses an SVG whose embedded rasters hold more than 64 megapixels in all, before decoding any", async () => {
    // Each is under the limit for a raster of its own; librsvg decodes both whole.
    const source = svg(
      `<image href="data:image/png;base64,${emptyPng(6000, 6000)}"/><image xlink:href="data:image/png;base64,${emptyPng(6000, 5000)}"/>`,
      ' xmlns:xlink="http://www.w3.org/1999/xlink"',
    );
    expect(await prepareSvg(source)).toEqual({
      ok: false,
      error: "SVG too costly to draw: the SVG embeds images of 66 megapixels in all (at most 64)",
    });
  });

  it("counts what an embedded SVG draws, and refuses other documents in data: URLs", { timeout: 10_000 }, async () => {
    const inner = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">${blurredCircles()}</svg>`).toString(
      "base64",
    );
    expect(await prepareSvg(svg(`<image width="100" height="100" href="data:image/svg+xml;base64,${inner}"/>`))).toEqual({
      ok: false,
      error: "SVG too costly to draw: the SVG applies filters 21,111 times (at most 256)",
    });
    // librsvg draws elements of a document in a data: URL wherever a URL may be.
    expect(await prepareSvg(svg(`<use href="data:image/svg+xml;base64,${inner}#a4"/>`))).toEqual({
      ok: false,
      error: "SVG too costly to draw: the SVG refers to another document in a data: URL (only an image may embed one)",
    });
  });

  it("draws an SVG embedding a small raster, and fetches no image it links to", async () => {
    let requests = 0;
    const server = createServer((_, response) => {
      requests++;
      response.end();
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    try {
      const { port } = server.address() as AddressInfo;
      const source = svg(
        `<image width="50" height="50" href="data:image/png;base64,${emptyPng(64, 64)}"/><image width="50" height="50" href="http://127.0.0.1:${port}/logo.png"/>`,
      );
      expect(await prepareSvg(source)).toMatchObject({ ok: true, logo: { format: "svg" } });
      expect(requests).toBe(0);
    } finally {
      server.close();
    }
  });

  it("draws what only looks like a data: reference or a marker to the check: a web font, a link, text, marker: none", async () => {
    const font = "d09GMgABAAAAAA";
    for (const body of [
      `<style>@font-face{font-family:x;src:url(data:font/woff2;base64,${font})}</style><text font-family="x" y="20">A</text>`,
      `<a xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="data:text/plain,hello"><rect width="10" height="10"/></a>`,
      `<rect width="10" height="10" aria-label="metadata: none"/>`,
      `<defs><marker id="m"><circle r="1"/></marker><linearGradient id="g"><stop offset="0"/></linearGradient></defs><style>path{marker:none}</style><path d="M0 0L10 10" fill="url(#g)" style="marker:none;stroke:url(#g)"/>`,
    ]) {
      expect(await prepareSvg(svg(body)), body).toMatchObject({ ok: true, logo: { format: "svg" } });
    }
  });

  it("refuses a vector whose references go round in a circle", async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><g id="a"><use href="#b"/></g><g id="b"><use xlink:href="#a" xmlns:xlink="http://www.w3.org/1999/xlink"/></g></svg>';
    expect(await prepareLogo(new TextEncoder().encode(svg))).toEqual({
      ok: false,
      error: "SVG too costly to draw: the SVG references itself (a <use> or marker cycle)",
    });
  });

  it("still draws a vector that reuses its parts the way logos do", async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><defs><filter id="s"><feDropShadow dx="1" dy="1"/></filter><path id="p" d="M0 0h4v4z"/></defs>${'<use href="#p" filter="url(#s)"/>'.repeat(40)}</svg>`;
    expect(await prepareLogo(new TextEncoder().encode(svg))).toMatchObject({ ok: true, logo: { format: "svg" } });
  });

  it("still calls bytes that are no image unreadable", async () => {
    expect(await prepareLogo(new TextEncoder().encode("this is not an image"))).toEqual({
      ok: false,
      error: "unreadable image (expected SVG, PNG, JPEG, WebP or GIF)",
    });
  });

  it("re-prepares an ICO from its next entry when the best one is broken, as discovery chose it", async () => {
    const png = new Uint8Array(
      await sharp({ create: { width: 64, height: 64, channels: 4, background: "#0a7" } })
        .png()
        .toBuffer(),
    );
    // Its header intact, its image data garbage.
    const broken = png.slice();
    broken.fill(0x55, 41, broken.length - 12);
    const file = ico([{ png: broken, size: 64 }, { bmp: { size: 32, rgba: [0x1a, 0x1f, 0x71, 255] } }]);
    const prepared = await prepareOriginal("ico", file);
    expect(prepared).toMatchObject({ ok: true, logo: { format: "ico", width: 32, height: 32, original: file } });
    expect(await prepareOriginal("ico", ico([{ png: broken, size: 64 }]))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^unreadable image|^image could not be converted/),
    });
  });
});
