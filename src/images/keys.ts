import type { LogoVariant } from "../../schema";

/**
 * R2 key scheme. Every logo object lives under `logos/`, the only prefix the public asset
 * route serves. Keys carry the content hash of the PNG master, so an object never changes
 * under its key: URLs built from keys can be cached as immutable, and a changed image gets
 * new keys while the old objects are deleted.
 *
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.png                master
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.grey.png           greyscale
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.inverted.png       inverted
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.inverted-grey.png  inverted greyscale
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.original.<ext>     file as imported
 */
export const LOGO_PREFIX = "logos/";

export type Rendition = "master" | "grey" | "inverted" | "invertedGrey";

const renditionSuffix: Record<Rendition, string> = {
  master: ".png",
  grey: ".grey.png",
  inverted: ".inverted.png",
  invertedGrey: ".inverted-grey.png",
};

export interface LogoKeyParts {
  primaryDomain: string;
  variant: LogoVariant;
  sourceSet: string;
  contentHash: string;
}

function stem({ primaryDomain, variant, sourceSet, contentHash }: LogoKeyParts): string {
  return `${LOGO_PREFIX}${primaryDomain}/${variant}.${sourceSet}.${contentHash.slice(0, 16)}`;
}

export function renditionKey(parts: LogoKeyParts, rendition: Rendition): string {
  return stem(parts) + renditionSuffix[rendition];
}

/** The source set a key names (`logos/<domain>/<variant>.<source set>.<hash>…`), or "" for a key of no logo. */
export function sourceSetOfKey(key: string): string {
  return key.slice(key.lastIndexOf("/") + 1).split(".")[1] ?? "";
}

export function originalKey(parts: LogoKeyParts, format: string): string {
  return `${stem(parts)}.original.${format}`;
}

/** Keys the public asset route may serve: under `logos/`, printable, no path tricks. */
export function isLogoKey(key: string): boolean {
  return (
    key.startsWith(LOGO_PREFIX) &&
    key.length <= 512 &&
    !key.includes("..") &&
    !key.includes("//") &&
    // No control characters (C0, DEL, C1) and no backslashes.
    !/[\u0000-\u001f\u007f-\u009f\\]/.test(key)
  );
}

/** Keys the public asset route serves: PNG renditions, never the imported originals. */
export function isPublicRendition(key: string): boolean {
  return isLogoKey(key) && key.endsWith(".png") && !key.includes(".original.");
}
