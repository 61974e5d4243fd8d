import { isPublicRendition } from "../images/keys";
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
