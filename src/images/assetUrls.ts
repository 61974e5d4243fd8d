import { greyKeyParts, isPublicRendition } from "./objectKeys";
import { signAssetUrlPermanently } from "./signedUrls";
import type { RequestFormat } from "./transform";
import { ladderUp } from "./widths";
import { toBase64Url } from "../lib/encoding";

/**
 * Asset URLs name an R2 key as unpadded base64url of its UTF-8 bytes (spec, Public asset).
 * Decoding is total: anything that is not such an encoding of a logo key is null, never an
 * exception, so the route can only ever answer 404 for it.
 */
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const MAX_ENCODED_LENGTH = 700;

export function encodeAssetKey(key: string): string {
  return toBase64Url(new TextEncoder().encode(key));
}

/** The public, permanent URL of a logo object: `{base}/assets/{base64urlKey}`. */
export const assetUrl = (base: string, key: string) => `${base}/assets/${encodeAssetKey(key)}`;

export function decodeAssetKey(encoded: string): string | null {
  if (encoded.length === 0 || encoded.length > MAX_ENCODED_LENGTH || !BASE64URL.test(encoded)) return null;
  // A length of 1 mod 4 can never be produced by base64 encoding.
  if (encoded.length % 4 === 1) return null;
  let key: string;
  try {
    const binary = atob(encoded.replaceAll("-", "+").replaceAll("_", "/"));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    key = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
  // Unpadded encodings are canonical: reject ones whose trailing bits were not zero.
  if (encodeAssetKey(key) !== encoded) return null;
  return isPublicRendition(key) ? key : null;
}

/** What a lookup redirects to: which stored object, in which format, how wide, for which page. */
export interface AssetTarget {
  key: string;
  format: RequestFormat;
  width: number;
  page: "light" | "dark";
}

/**
 * Where a redirect points: the CDN's image-resizing path over the R2 object when a CDN is
 * configured, otherwise this Worker's own asset route, which resizes and converts through the
 * Images binding, so that following the redirect locally yields the real image. The asset
 * route rounds unsigned widths to its ladder; the lookup signs a width between its rungs. A vector is
 * always served by the asset route, which adds the policy that forbids scripts, and so is a
 * greyscale rendition, which may not be made yet (src/images/greyOnDemand.ts): the CDN serves
 * only what the bucket holds.
 */
export function redirectTarget(to: { cdn: string; base: string; secret: string | undefined }, served: AssetTarget): string {
  if (served.format === "svg") return `${to.base}/assets/${encodeAssetKey(served.key)}`;
  const jpg = served.format === "jpg";
  if (to.cdn && !greyKeyParts(served.key)) {
    const options = `width=${served.width},fit=contain,format=${jpg ? "jpeg" : served.format}${jpg ? `,background=${served.page === "dark" ? "%23121212" : "white"}` : ""}`;
    return `${to.cdn}/cdn-cgi/image/${options}/${served.key}`;
  }
  // A width on the asset route's ladder (the default 128 among them) is served as asked to
  // anyone, so only a width between its rungs needs this Worker's signature: the rest redirect
  // to an unsigned URL, 54 bytes shorter, that the asset route checks no signature for.
  const signer = ladderUp(served.width) !== served.width ? to.secret : undefined;
  const query = `width=${signer ? served.width : ladderUp(served.width)}${served.format === "png" ? "" : `&format=${served.format}`}${jpg && served.page === "dark" ? "&theme=dark" : ""}`;
  const url = `${to.base}/assets/${encodeAssetKey(served.key)}?${query}`;
  return signer ? signAssetUrlPermanently(signer, url) : url;
}
