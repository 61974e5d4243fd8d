import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SourceSet } from "../../../src/licences/sources";
import { type BrandSet, type SetLogo, variantOf } from "./types";

/**
 * @lobehub/icons-static-svg: one SVG file per form of a brand — `name` (monochrome icon),
 * `name-color` (full-colour icon), `name-text` (monochrome wordmark), `name-brand-color`
 * (full-colour logo with its name). The files are sized `1em` for inline use; the seed gives
 * them their viewBox's size so the rasteriser draws them at a real scale.
 */
export function lobeIconsSet(source: SourceSet): BrandSet {
  const dir = join(dirname(fileURLToPath(import.meta.resolve("@lobehub/icons-static-svg/package.json"))), "icons");
  const file = (name: string) => join(dir, `${name}.svg`);
  const has = (name: string) => /^[a-z0-9-]+$/.test(name) && existsSync(file(name));
  return {
    source,
    field: "lobeIcons",
    has,
    logos(names, colour) {
      return names.filter(has).map((name): SetLogo => {
        const text = readFileSync(file(name), "utf8");
        const [, , , width = 24, height = 24] = (/viewBox="([-\d.]+) ([-\d.]+) ([\d.]+) ([\d.]+)"/.exec(text) ?? []).map(Number);
        const mono = text.includes("currentColor");
        const svg = text
          .replace(/^<svg[^>]*>/, (open) =>
            open.replace(/ (width|height|style)="[^"]*"/g, "").replace("<svg", `<svg width="${width}" height="${height}"`),
          )
          .replaceAll("currentColor", colour ?? "#000000");
        return { variant: variantOf(name, width, height, names), name, svg, licence: source.licence, fullColour: !mono };
      });
    },
  };
}
