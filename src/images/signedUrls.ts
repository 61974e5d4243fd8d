import { createHmac } from "node:crypto";
import { asciiBytes, isolateCache, MAP_ENTRY_BYTES } from "../lib/isolateCaches";
import { fail, ok, type Result } from "../lib/errors";
import { canonicalBase64Url, toBase64Url } from "../lib/encoding";
import { log } from "../lib/log";

/**
 * Signed, time-limited asset URLs for the three-tool form's get_logo (spec: "a signed,
 * time-limited storage URL", `expiresIn: 3600`). The URL is an ordinary `/assets/…` URL with
 * `expires` (Unix seconds) and `signature`: HMAC-SHA-256, keyed by `SIGNED_URL_SECRET`, over
 * the path and every other query parameter in sorted order, so no part can be changed. The
 * lookup signs its redirects to widths between the ladder's rungs the same way, without `expires`.
 */
export const SIGNED_URL_LIFETIME_SECONDS = 3600;

const keys = isolateCache<string, Promise<CryptoKey>>({
  name: "assets.signingKeys",
  holds: "SIGNED_URL_SECRET and the HMAC key imported from it",
  capacity: 4,
  entryBytes: asciiBytes(1024) + 1024 + MAP_ENTRY_BYTES,
});

function hmacKey(secret: string): Promise<CryptoKey> {
  return keys.remember(secret, () =>
    crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]),
  );
}

function signedText(url: URL): Uint8Array {
  const params = [...url.searchParams].filter(([name]) => name !== "signature").sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return new TextEncoder().encode(`${url.pathname}?${new URLSearchParams(params)}`);
}

export async function signAssetUrl(
  secret: string | undefined,
  url: string,
  now = Date.now(),
): Promise<Result<{ url: string; expiresIn: number }>> {
  if (!secret) {
    log.error("signed_urls.secret_not_set");
    return fail("internal", "Unable to generate signed URL. Try again later");
  }
  const signed = new URL(url);
  signed.searchParams.set("expires", String(Math.floor(now / 1000) + SIGNED_URL_LIFETIME_SECONDS));
  const signature = await crypto.subtle.sign("HMAC", await hmacKey(secret), signedText(signed));
  signed.searchParams.set("signature", toBase64Url(new Uint8Array(signature)));
  return ok({ url: signed.toString(), expiresIn: SIGNED_URL_LIFETIME_SECONDS });
}

/**
 * A signature without expiry: this Worker vouching for a URL it built itself, such as a
 * lookup's redirect to an exact width the public route would round to its ladder. Synchronous
 * (node:crypto), so a warm lookup can build its answer without awaiting; the check below
 * verifies it like any other.
 */
export function signAssetUrlPermanently(secret: string, url: string): string {
  // A relative URL (no public base configured) is signed over the same path and query.
  const relative = url.startsWith("/");
  const signed = new URL(url, RELATIVE_BASE);
  signed.searchParams.set("signature", toBase64Url(new Uint8Array(createHmac("sha256", secret).update(signedText(signed)).digest())));
  return relative ? `${signed.pathname}${signed.search}` : signed.toString();
}

const RELATIVE_BASE = "http://relative.invalid";

export type SignatureCheck = "unsigned" | "valid" | "expired" | "invalid";

/** Whether a request URL carries a signature, and if so whether it holds now. */
export async function checkAssetSignature(secret: string | undefined, url: URL, now = Date.now()): Promise<SignatureCheck> {
  const signature = url.searchParams.get("signature");
  const expires = url.searchParams.get("expires");
  if (signature === null && expires === null) return "unsigned";
  if (!secret || signature === null || (expires !== null && !/^\d{1,12}$/.test(expires)) || !/^[\w-]{43}$/.test(signature))
    return "invalid";
  const bytes = canonicalBase64Url(signature);
  if (!bytes) return "invalid";
  // verify compares in constant time.
  const genuine = await crypto.subtle.verify("HMAC", await hmacKey(secret), bytes, signedText(url));
  if (!genuine) return "invalid";
  return expires !== null && Number(expires) * 1000 <= now ? "expired" : "valid";
}
