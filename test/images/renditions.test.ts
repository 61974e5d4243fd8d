import { describe, expect, it } from "vitest";
import { renditionPixels } from "../../src/images/renditions";

/** A w×1 RGBA strip of one colour, with `transparent` fully transparent pixels after it. */
function strip(rgb: [number, number, number], opaque: number, transparent = opaque) {
  const data = new Uint8Array((opaque + transparent) * 4);
  for (let i = 0; i < opaque; i++) data.set([...rgb, 255], i * 4);
  return { width: opaque + transparent, height: 1, channels: 4 as const, data };
}

describe("renditions from pixels", () => {
  it("black ink on transparency is dark, and gets inverted renditions with alpha kept", () => {
    const r = renditionPixels(strip([0, 0, 0], 70));
    expect(r.tone).toBe("dark");
    expect([...r.inverted!.data.slice(0, 4)]).toEqual([255, 255, 255, 255]);
    expect([...r.inverted!.data.slice(-4)]).toEqual([255, 255, 255, 0]);
    expect([...r.grey.data.slice(0, 2)]).toEqual([0, 255]);
    expect([...r.invertedGrey!.data.slice(0, 2)]).toEqual([255, 255]);
  });

  it("a mid-tone mark is mixed and has no inverted renditions; a full-bleed image is opaque", () => {
    const green = renditionPixels(strip([30, 160, 80], 70));
    expect(green.tone).toBe("mixed");
    expect(green.inverted).toBeNull();
    expect(renditionPixels(strip([0, 0, 0], 140, 0)).tone).toBe("opaque");
  });
});
