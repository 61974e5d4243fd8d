import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RESTRICTIVE_LICENCE, type SourceSet } from "../../../src/licences/sources";
import type { BrandSet } from "./types";

export interface SimpleIcon {
  title: string;
  slug: string;
  hex: string;
  aliases?: { aka?: string[] };
  license?: { type: string };
  svg: string;
}

/**
 * simple-icons: one path without colour per brand, with the brand's colour and aliases in the
 * package's data file. Most icons are CC0; a few declare a licence of their own, and those
 * under a restrictive one are left out.
 */
export function simpleIconsSet(source: SourceSet): BrandSet & { icons: Map<string, SimpleIcon> } {
  const root = dirname(fileURLToPath(import.meta.resolve("simple-icons")));
  const data = JSON.parse(readFileSync(join(root, "data", "simple-icons.json"), "utf8")) as Omit<SimpleIcon, "svg">[];
  const icons = new Map<string, SimpleIcon>();
  for (const icon of data) icons.set(icon.slug, { ...icon, svg: readFileSync(join(root, "icons", `${icon.slug}.svg`), "utf8") });
  return {
    source,
    field: "simpleIcons",
    icons,
    has: (slug) => icons.has(slug),
    logos(slugs) {
      return slugs.flatMap((slug) => {
        const icon = icons.get(slug);
        const licence = icon?.license?.type ?? source.licence;
        if (!icon || RESTRICTIVE_LICENCE.test(licence)) return [];
        // Always the icon's own brand colour: the colour simple-icons records for it.
        const svg = icon.svg.replace("<svg ", `<svg fill="#${icon.hex}" `);
        return [{ variant: "icon" as const, name: slug, svg, licence, fullColour: false }];
      });
    },
  };
}
