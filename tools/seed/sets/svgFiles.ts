import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SourceSet } from "../../../src/licences/sources";
import { type BrandSet, type SetLogo, variantOf } from "./types";

const packageDir = (pkg: string) => dirname(fileURLToPath(import.meta.resolve(`${pkg}/package.json`)));

/**
 * The root <svg> of a file given its viewBox's size when it has none (the rasteriser draws a
 * file sized `1em`, or not sized at all, at a default scale), and `currentColor` painted in the
 * brand colour: the master is a PNG, where there is no current colour to inherit.
 */
export function sized(text: string, colour: string | undefined): { svg: string; width: number; height: number } {
  const [, , , width = 24, height = 24] = (/viewBox="([-\d.]+)[ ,]+([-\d.]+)[ ,]+([\d.]+)[ ,]+([\d.]+)"/.exec(text) ?? []).map(Number);
  const svg = text
    .replace(/^<\?xml[^>]*>\s*/, "")
    .replace(/<svg[^>]*>/, (open) =>
      open.replace(/ (width|height|style)="[^"]*"/g, "").replace("<svg", `<svg width="${width}" height="${height}"`),
    )
    .replaceAll("currentColor", colour ?? "#000000");
  return { svg, width, height };
}

/** A folder of SVG files in an npm package, one icon a file, named by its file. */
export function svgFolderSet(source: SourceSet, field: string, pkg: string, folder: string): BrandSet {
  const dir = join(packageDir(pkg), folder);
  const file = (name: string) => join(dir, `${name}.svg`);
  const has = (name: string) => /^[a-z0-9_-]+$/.test(name) && existsSync(file(name));
  return {
    source,
    field,
    has,
    logos(names, colour) {
      return names.filter(has).map((name): SetLogo => {
        const text = readFileSync(file(name), "utf8");
        const { svg, width, height } = sized(text, colour);
        return {
          variant: variantOf(name, width, height, names),
          name,
          svg,
          licence: source.licence,
          fullColour: !text.includes("currentColor"),
        };
      });
    },
  };
}

/**
 * @bbc/psammead-assets: the BBC blocks, kept as a base64 SVG in a module of the package and
 * drawn in a placeholder grey (`#D5D0CD`) for pages to tint. The blocks are the BBC's
 * wordmark; painted here in the brand colour, as any monochrome icon is.
 */
export function bbcPsammeadSet(source: SourceSet): BrandSet {
  const blocks = () => {
    const module = readFileSync(join(packageDir("@bbc/psammead-assets"), "src", "svgs", "bbcBlocks.js"), "utf8");
    const base64 = /'([A-Za-z0-9+/=]+)'/.exec(module)?.[1];
    if (!base64) throw new Error("@bbc/psammead-assets: the BBC blocks are no longer a base64 string in src/svgs/bbcBlocks.js");
    return Buffer.from(base64, "base64").toString("utf8").replace('fill="#D5D0CD"', 'fill="currentColor"');
  };
  const has = (name: string) => name === "bbc-blocks";
  return {
    source,
    field: "bbcPsammead",
    has,
    logos(names, colour) {
      return names.filter(has).map((name): SetLogo => {
        const { svg, width, height } = sized(blocks(), colour);
        return { variant: variantOf(name, width, height, names), name, svg, licence: source.licence, fullColour: false };
      });
    },
  };
}
