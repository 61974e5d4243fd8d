import type { Pixels } from "./renditions";

/**
 * RGBA pixels scaled down so that neither edge exceeds `maxEdge`, each pixel the average of the
 * block of source pixels it covers, weighted by their alpha (so that a transparent pixel's
 * colour, which means nothing, bleeds nowhere). Pure JS: the Worker has no resizer of its own
 * for pixels already decoded. Pixels within the bound are returned as they are.
 */
export function shrinkPixels(rgba: Pixels, maxEdge: number): Pixels {
  if (rgba.channels !== 4) throw new Error("only RGBA pixels are shrunk");
  const { width, height, data } = rgba;
  if (Math.max(width, height) <= maxEdge) return rgba;
  const scale = maxEdge / Math.max(width, height);
  const w = Math.max(1, Math.round(width * scale));
  const h = Math.max(1, Math.round(height * scale));
  // Each output column's and row's first source column and row; the next one's is where it ends.
  const xStart = Int32Array.from({ length: w + 1 }, (_, x) => Math.floor((x * width) / w));
  const yStart = Int32Array.from({ length: h + 1 }, (_, y) => Math.floor((y * height) / h));
  const out = new Uint8Array(w * h * 4);
  for (let y = 0, o = 0; y < h; y++) {
    const y0 = yStart[y]!;
    const y1 = yStart[y + 1]!;
    for (let x = 0; x < w; x++, o += 4) {
      const x0 = xStart[x]!;
      const x1 = xStart[x + 1]!;
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = y0; sy < y1; sy++) {
        for (let i = (sy * width + x0) * 4, end = (sy * width + x1) * 4; i < end; i += 4) {
          const alpha = data[i + 3]!;
          r += data[i]! * alpha;
          g += data[i + 1]! * alpha;
          b += data[i + 2]! * alpha;
          a += alpha;
        }
      }
      if (a === 0) continue;
      out[o] = Math.round(r / a);
      out[o + 1] = Math.round(g / a);
      out[o + 2] = Math.round(b / a);
      out[o + 3] = Math.round(a / ((y1 - y0) * (x1 - x0)));
    }
  }
  return { width: w, height: h, channels: 4, data: out };
}
