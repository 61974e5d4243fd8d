import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { prepareLogo, prepareOriginal } from "../../src/cli/importer/prepare";
import { ico } from "../fixtures/icons";

describe("images the importer refuses, and why", () => {
  it("names a raster over 64 megapixels as too large, not as unreadable", async () => {
    const png = await sharp({ create: { width: 9000, height: 9000, channels: 3, background: "#123456" } }).png({ compressionLevel: 1 }).toBuffer();
    expect(await prepareLogo(new Uint8Array(png))).toEqual({ ok: false, error: "image too large: 9000×9000 (at most 64 megapixels)" });
  });

  it("refuses a vector that multiplies its drawing, at once rather than after minutes of drawing", async () => {
    // Ten thousand blurred circles, drawn through four levels of ten references each.
    let svg = '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><defs><filter id="f"><feGaussianBlur stdDeviation="30"/></filter>';
    svg += '<circle id="a0" r="40" cx="50" cy="50" filter="url(#f)"/>';
    for (let level = 1; level < 5; level++) svg += `<g id="a${level}">${`<use href="#a${level - 1}"/>`.repeat(10)}</g>`;
    svg += '</defs><use href="#a4"/></svg>';
    expect(await prepareLogo(new TextEncoder().encode(svg))).toMatchObject({ ok: false, error: expect.stringMatching(/^SVG too costly to draw: the SVG applies filters [\d,]+ times \(at most 256\)$/) });

    // Unfiltered, the same multiplication a level further.
    const many = svg.replace(' filter="url(#f)"', "").replace('<use href="#a4"/></svg>', `<g id="a5">${'<use href="#a4"/>'.repeat(10)}</g><use href="#a5"/></svg>`);
    expect(await prepareLogo(new TextEncoder().encode(many))).toMatchObject({ ok: false, error: expect.stringMatching(/^SVG too costly to draw: the SVG draws [\d,]+ elements \(at most 50,000\)$/) });
  });

  it("refuses the same multiplication hidden where counting elements would miss it", async () => {
    let uses = '<filter id="f"><feGaussianBlur stdDeviation="30"/></filter><circle id="a0" r="40" cx="50" cy="50"/>';
    for (let level = 1; level < 5; level++) uses += `<g id="a${level}">${`<use href="#a${level - 1}"/>`.repeat(10)}</g>`;
    // Filters set by a stylesheet, which attributes do not show.
    const styled = `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><style>circle { filter: url(#f) }</style><defs>${uses}</defs><use href="#a4"/></svg>`;
    expect(await prepareLogo(new TextEncoder().encode(styled))).toMatchObject({ ok: false, error: expect.stringMatching(/^SVG too costly to draw: the SVG applies filters [\d,]+ times/) });
    // The whole drawing inside an entity, which librsvg expands and a parser that expands none would not count.
    const entity = `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY d '${uses.replaceAll("'", "&#39;")}'>]><svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><defs>&d;</defs><use href="#a4"/></svg>`;
    expect(await prepareLogo(new TextEncoder().encode(entity))).toEqual({ ok: false, error: "SVG too costly to draw: the SVG declares entities (a document type with an internal subset)" });
  });

  it("refuses a vector whose references go round in a circle", async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><g id="a"><use href="#b"/></g><g id="b"><use xlink:href="#a" xmlns:xlink="http://www.w3.org/1999/xlink"/></g></svg>';
    expect(await prepareLogo(new TextEncoder().encode(svg))).toEqual({ ok: false, error: "SVG too costly to draw: the SVG references itself (a <use> cycle)" });
  });

  it("still draws a vector that reuses its parts the way logos do", async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><defs><filter id="s"><feDropShadow dx="1" dy="1"/></filter><path id="p" d="M0 0h4v4z"/></defs>${'<use href="#p" filter="url(#s)"/>'.repeat(40)}</svg>`;
    expect(await prepareLogo(new TextEncoder().encode(svg))).toMatchObject({ ok: true, logo: { format: "svg" } });
  });

  it("still calls bytes that are no image unreadable", async () => {
    expect(await prepareLogo(new TextEncoder().encode("this is not an image"))).toEqual({ ok: false, error: "unreadable image (expected SVG, PNG, JPEG, WebP or GIF)" });
  });

  it("re-prepares an ICO from its next entry when the best one is broken, as discovery chose it", async () => {
    const png = new Uint8Array(await sharp({ create: { width: 64, height: 64, channels: 4, background: "#0a7" } }).png().toBuffer());
    // Its header intact, its image data garbage.
    const broken = png.slice();
    broken.fill(0x55, 41, broken.length - 12);
    const file = ico([{ png: broken, size: 64 }, { bmp: { size: 32, rgba: [0x1a, 0x1f, 0x71, 255] } }]);
    const prepared = await prepareOriginal("ico", file);
    expect(prepared).toMatchObject({ ok: true, logo: { format: "ico", width: 32, height: 32, original: file } });
    expect(await prepareOriginal("ico", ico([{ png: broken, size: 64 }]))).toMatchObject({ ok: false, error: expect.stringMatching(/^unreadable image|^image could not be converted/) });
  });
});
