import { readdirSync, readFileSync } from "node:fs";
import sharp from "sharp";
import { renditionPixels } from "../../src/images/renditions";
const dir = ".wrangler/bench-import/png-1000/img";
const decoded = [];
for (const f of readdirSync(dir).slice(0, 400)) {
  const { data, info } = await sharp(readFileSync(`${dir}/${f}`)).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  decoded.push({ width: info.width, height: info.height, channels: 4 as const, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
}
const t0 = performance.now();
for (let r = 0; r < 1; r++) for (const d of decoded) renditionPixels(d);
console.log(((performance.now() - t0) / decoded.length).toFixed(2), "ms per logo");
