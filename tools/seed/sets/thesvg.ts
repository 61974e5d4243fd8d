import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SourceSet } from "../../../src/licences/sources";
import { sized } from "./svgFiles";
import { type BrandSet, type SetLogo, variantOf } from "./types";

interface TheSvgIcon {
  slug: string;
  title: string;
  svg: string;
  variants: Record<string, string>;
  /** The licence theSVG records for the drawing, taken from where it found it. */
  license: string;
  url: string;
}

/**
 * The licences under which the seed takes a theSVG drawing. The package is MIT, but each icon
 * keeps the licence of its upstream source, recorded in its `license` field: CC0 and MIT
 * drawings are used (the MIT ones credited under the package's notice), and none recorded as
 * "Fair Use", "Trademark", "brand-use", no-derivatives, unknown or anything else.
 */
export const THESVG_LICENCES = new Set(["CC0-1.0", "MIT"]);

/**
 * @thesvg/icons: one CommonJS module per brand (`dist/<slug>.cjs`) with its drawing, the forms
 * it also has (`variants`: `wordmark`, `color`, `mono`…) and the licence of the drawing. The
 * mapping names a brand's icon by its slug, and another form by the slug and the form's name
 * (`hotmart-wordmark`), unless that name is itself a slug.
 */
export function theSvgSet(source: SourceSet): BrandSet {
  // The package's exports map every subpath to `dist/`: its entry point's folder is `dist/`.
  const dist = dirname(fileURLToPath(import.meta.resolve("@thesvg/icons")));
  const require = createRequire(import.meta.url);
  const load = (slug: string): TheSvgIcon | undefined => {
    if (!/^[a-z0-9-]+$/.test(slug) || !existsSync(join(dist, `${slug}.cjs`))) return undefined;
    return require(join(dist, `${slug}.cjs`)) as TheSvgIcon;
  };
  const resolve = (name: string): { icon: TheSvgIcon; svg: string } | undefined => {
    const own = load(name);
    if (own) return { icon: own, svg: own.variants.default ?? own.svg };
    const form = /^(.+)-(wordmark|color)$/.exec(name);
    const base = form ? load(form[1]!) : undefined;
    const svg = form && base?.variants[form[2]!];
    return base && svg ? { icon: base, svg } : undefined;
  };
  const permitted = (name: string) => {
    const found = resolve(name);
    return found !== undefined && THESVG_LICENCES.has(found.icon.license) ? found : undefined;
  };
  return {
    source,
    field: "theSvg",
    has: (name) => permitted(name) !== undefined,
    logos(names, colour) {
      return names.flatMap((name): SetLogo[] => {
        const found = permitted(name);
        if (!found) return [];
        const { svg, width, height } = sized(found.svg, colour);
        return [
          {
            variant: variantOf(name, width, height, names),
            name,
            svg,
            licence: found.icon.license,
            fullColour: !found.svg.includes("currentColor"),
          },
        ];
      });
    },
  };
}
