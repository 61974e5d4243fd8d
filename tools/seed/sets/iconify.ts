import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { SourceSet } from "../../../src/licences/sources";
import { type BrandSet, type SetLogo, variantOf, withoutColourings } from "./types";

interface IconifyIcon {
  body: string;
  width?: number;
  height?: number;
  left?: number;
  top?: number;
}

export interface IconifyJson {
  icons: Record<string, IconifyIcon>;
  aliases?: Record<string, { parent: string }>;
  width?: number;
  height?: number;
}

interface IconifyInfo {
  license: { spdx?: string; title: string };
}

/** Reads an `@iconify-json/*` package: its icons and the licence its metadata declares. */
export function readIconifyPackage(pkg: string): { json: IconifyJson; licence: string } {
  const json = JSON.parse(readFileSync(fileURLToPath(import.meta.resolve(`${pkg}/icons.json`)), "utf8")) as IconifyJson;
  const info = JSON.parse(readFileSync(fileURLToPath(import.meta.resolve(`${pkg}/info.json`)), "utf8")) as IconifyInfo;
  return { json, licence: info.license.spdx ?? info.license.title };
}

/**
 * An Iconify JSON set. Monochrome bodies draw in `currentColor`, which is replaced by the
 * brand colour: the master is a PNG, where there is no current colour to inherit.
 */
export function iconifySet(source: SourceSet, field: string, pkg: string): BrandSet & { licence: string; json: IconifyJson } {
  const { json, licence } = readIconifyPackage(pkg);
  const resolve = (name: string) => json.icons[name] ?? (json.aliases?.[name] ? json.icons[json.aliases[name].parent] : undefined);
  return {
    source,
    field,
    licence,
    json,
    has: (name) => resolve(name) !== undefined,
    logos(names, colour) {
      // Shortest first: `google` before `google-wordmark`, the plain form before its variants.
      const present = withoutColourings(names.filter((name) => resolve(name) !== undefined)).sort((a, b) => a.length - b.length);
      return present.map((name): SetLogo => {
        const icon = resolve(name)!;
        const width = icon.width ?? json.width ?? 16;
        const height = icon.height ?? json.height ?? 16;
        const mono = icon.body.includes("currentColor");
        const body = mono ? icon.body.replaceAll("currentColor", colour ?? "#000000") : icon.body;
        const svg =
          `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ` +
          `width="${width}" height="${height}" viewBox="${icon.left ?? 0} ${icon.top ?? 0} ${width} ${height}">${body}</svg>`;
        return { variant: variantOf(name, width, height, present), name, svg, licence, fullColour: !mono };
      });
    },
  };
}
