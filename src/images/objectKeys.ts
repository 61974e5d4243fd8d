import type { LogoVariant, RenditionSet } from "../../schema";
import { RENDITIONS_VERSION } from "./renditions";

/**
 * R2 key scheme. Every logo object lives under `logos/`, the only prefix the public asset
 * route serves. Keys carry the content hash of the PNG master, so an object never changes
 * under its key: URLs built from keys can be cached as immutable, and a changed image gets
 * new keys while the old objects are deleted.
 *
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.png                  master
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.original.<ext>       file as imported
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.v<N>.grey.png        greyscale (*)
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.v<N>.light.png       for light pages
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.v<N>.light-grey.png  … greyscale (*)
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.v<N>.dark.png        for dark pages
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.v<N>.dark-grey.png   … greyscale (*)
 *   logos/<primary domain>/<variant>.<source set>.<hash16>.v<N>.svg             sanitised vector
 *
 * (*) The greyscale renditions of most logos are made on the first request for them, from the
 * colour rendition beside them (./greyOnDemand.ts, greyKeyParts), and stored under these keys.
 *
 * No key is stored. The master's and the original's follow from the logo's row and its
 * company's primary domain, which never changes once the company exists (migrations/0010 refuses
 * to change it while the company has logos); the renditions' follow from the master's key, the
 * logo's rendition set (which exist) and the renditions version N that made them
 * (src/images/renditions.ts), so a re-render under a new version never reuses a key whose
 * bytes caches already hold. Version 0 is the scheme before contrast-aware themes: its only
 * derived rendition still served is `<stem>.grey.png`.
 */
export const LOGO_PREFIX = "logos/";

export type Rendition = "master" | "grey" | "light" | "lightGrey" | "dark" | "darkGrey";
export const derivedRenditions = ["grey", "light", "lightGrey", "dark", "darkGrey"] as const satisfies readonly Rendition[];

const suffix: Record<Rendition, string> = {
  master: "",
  grey: "grey",
  light: "light",
  lightGrey: "light-grey",
  dark: "dark",
  darkGrey: "dark-grey",
};

export type { RenditionSet };

/** Logos written before contrast-aware renditions: a master and a greyscale. */
export const LEGACY_RENDITIONS: RenditionSet = { version: 0, light: false, dark: false, plain: "master", vector: false };

export interface LogoKeyParts {
  primaryDomain: string;
  variant: LogoVariant;
  sourceSet: string;
  contentHash: string;
}

function stem({ primaryDomain, variant, sourceSet, contentHash }: LogoKeyParts): string {
  return `${LOGO_PREFIX}${primaryDomain}/${variant}.${sourceSet}.${contentHash.slice(0, 16)}`;
}

export function masterKey(parts: LogoKeyParts): string {
  return `${stem(parts)}.png`;
}

/** The source set a key names (`logos/<domain>/<variant>.<source set>.<hash>…`), or "" for a key of no logo. */
export function sourceSetOfKey(key: string): string {
  return key.slice(key.lastIndexOf("/") + 1).split(".")[1] ?? "";
}

export function originalKey(parts: LogoKeyParts, format: string): string {
  return `${stem(parts)}.original.${format}`;
}

/** The keys a logo's row does not store, and the primary domain they were derived with. */
export interface LogoKeys {
  primaryDomain: string;
  masterKey: string;
  originalKey: string;
}

export function logoKeys(parts: LogoKeyParts, format: string): LogoKeys {
  return { primaryDomain: parts.primaryDomain, masterKey: masterKey(parts), originalKey: originalKey(parts, format) };
}

const stemOf = (master: string) => master.slice(0, -".png".length);

/** A rendition's key, from the master's key and the renditions version that made it. */
export function renditionKey(master: string, rendition: Rendition, version = RENDITIONS_VERSION): string {
  if (rendition === "master") return master;
  if (version === 0) return `${stemOf(master)}.${suffix[rendition]}.png`;
  return `${stemOf(master)}.v${version}.${suffix[rendition]}.png`;
}

/** Each greyscale rendition and the colour rendition it is made from, by the name its key carries (`suffix`). */
const colourOfGrey = new Map<string, "master" | "light" | "dark">([
  [suffix.grey, "master"],
  [suffix.lightGrey, "light"],
  [suffix.darkGrey, "dark"],
]);

/** What a greyscale rendition's key names: the logo (as its row's columns), the version, and the colour rendition it is made from. */
export interface GreyKeyParts {
  primaryDomain: string;
  variant: LogoVariant;
  sourceSet: string;
  /** The first 16 hex digits of the master's SHA-256. */
  hash16: string;
  version: number;
  colour: "master" | "light" | "dark";
  /** The colour rendition's key. */
  colourKey: string;
}

/**
 * The parts of a greyscale rendition's key, for the renditions versions that make greyscale on
 * first request (1 to the current one; version 0 stored its own), or null for any other key.
 * Whether a stored logo names it is the catalogue's to say (src/catalogue/queries.ts, namesGrey).
 */
export function greyKeyParts(key: string): GreyKeyParts | null {
  const match = /^logos\/([^/]+)\/(full|icon)\.([^./]+)\.([0-9a-f]{16})\.v([1-9]\d{0,5})\.([a-z-]+)\.png$/.exec(key);
  if (!match) return null;
  const [, primaryDomain, variant, sourceSet, hash16, version, name] = match;
  const colour = colourOfGrey.get(name!);
  if (!colour || Number(version) > RENDITIONS_VERSION) return null;
  const logo = { primaryDomain: primaryDomain!, variant: variant as LogoVariant, sourceSet: sourceSet!, hash16: hash16! };
  const master = masterKey({ ...logo, contentHash: logo.hash16 });
  return { ...logo, version: Number(version), colour, colourKey: renditionKey(master, colour, Number(version)) };
}

export function vectorKey(master: string, version = RENDITIONS_VERSION): string {
  return `${stemOf(master)}.v${version}.svg`;
}

/** Every object key of a stored logo, for writing and deleting them together. */
export function logoObjectKeys(logo: { masterKey: string; originalKey: string; renditions: RenditionSet }): string[] {
  const { version, light, dark, vector } = logo.renditions;
  const keys = [logo.originalKey, logo.masterKey, renditionKey(logo.masterKey, "grey", version)];
  if (light) keys.push(renditionKey(logo.masterKey, "light", version), renditionKey(logo.masterKey, "lightGrey", version));
  if (dark) keys.push(renditionKey(logo.masterKey, "dark", version), renditionKey(logo.masterKey, "darkGrey", version));
  if (vector) keys.push(vectorKey(logo.masterKey, version));
  // Version 0 also wrote inverted renditions for dark and light logos; deleting a missing key is harmless.
  if (version === 0) keys.push(`${stemOf(logo.masterKey)}.inverted.png`, `${stemOf(logo.masterKey)}.inverted-grey.png`);
  return keys;
}

/** What a request asks the logo to look like. */
export interface Look {
  theme?: "light" | "dark" | undefined;
  greyscale: boolean;
}

/** The stored rendition for a look: the theme's own rendition where the logo has one. */
export function lookRendition(renditions: RenditionSet, look: Look): Rendition {
  const page = look.theme ?? (renditions.plain === "light" ? "light" : undefined);
  const themed = (page === "light" && renditions.light) || (page === "dark" && renditions.dark) ? page : undefined;
  if (themed === "light") return look.greyscale ? "lightGrey" : "light";
  if (themed === "dark") return look.greyscale ? "darkGrey" : "dark";
  return look.greyscale ? "grey" : "master";
}

export function lookKey(logo: { masterKey: string; renditions: RenditionSet }, look: Look): string {
  return renditionKey(logo.masterKey, lookRendition(logo.renditions, look), logo.renditions.version);
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

const fileName = (key: string) => key.slice(key.lastIndexOf("/") + 1);

/** Keys the public asset route serves: PNG renditions and sanitised vectors, never the imported originals. */
export function isPublicRendition(key: string): boolean {
  if (!isLogoKey(key) || fileName(key).includes(".original.")) return false;
  return key.endsWith(".png") || isVectorKey(key);
}

export const isVectorKey = (key: string) => /\.v\d+\.svg$/.test(fileName(key));
