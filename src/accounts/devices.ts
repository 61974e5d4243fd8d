import { fromBase64Url, toBase64Url } from "../lib/encoding";

/**
 * Browsers that have signed in to an account before (OWASP's device cookies, its answer to
 * lockout). A sign-in leaves the browser a token bound to the email, signed with the service's
 * secret (SIGNED_URL_SECRET, under a purpose of its own). An attempt that brings a valid token
 * for the email it names is counted per token instead of against the account's ceiling from
 * every address: guesses spread over many addresses fill that ceiling, and would otherwise lock
 * the owner out of every browser, theirs included. Without the secret there are no tokens, and
 * every attempt counts as before.
 */
export const DEVICE_COOKIE = "device";
export const DEVICE_TTL_SECONDS = 180 * 24 * 60 * 60;

const encoder = new TextEncoder();

function signingKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

const signed = (email: string, id: string) => encoder.encode(`sign-in device\n${email}\n${id}`);

/** A fresh token for a browser that just signed in as `email`: `<id>.<signature>`. */
export async function deviceToken(secret: string, email: string): Promise<string> {
  const id = toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
  const signature = await crypto.subtle.sign("HMAC", await signingKey(secret), signed(email, id));
  return `${id}.${toBase64Url(new Uint8Array(signature))}`;
}

/** The id of a token this service made for `email`, or null for anything else. */
export async function knownDevice(secret: string | undefined, email: string, token: string | undefined): Promise<string | null> {
  if (!secret || !token || token.length > 100) return null;
  const match = /^([\w-]{22})\.([\w-]{43})$/.exec(token);
  if (!match) return null;
  const [, id, signature] = match;
  const valid = await crypto.subtle.verify("HMAC", await signingKey(secret), fromBase64Url(signature!), signed(email, id!));
  return valid ? id! : null;
}

