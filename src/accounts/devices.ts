import { canonicalBase64Url, toBase64Url } from "../lib/encoding";
import { DAY_S } from "../lib/time";

/**
 * Browsers that have signed in to an account before (OWASP's device cookies, its answer to
 * lockout). A sign-in leaves the browser a token bound to the account's email and password,
 * signed with the service's secret (SIGNED_URL_SECRET, under a purpose of its own). An attempt
 * that brings a valid token for the email it names is counted per token instead of against the
 * account's ceiling from every address: guesses spread over many addresses fill that ceiling,
 * and would otherwise lock the owner out of every browser, theirs included. Without the secret
 * there are no tokens, and every attempt counts as before.
 */
export const DEVICE_COOKIE = "device";
export const DEVICE_TTL_SECONDS = 180 * DAY_S;

const encoder = new TextEncoder();

function signingKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

/**
 * What a token signs: its id, the email, and the account's password hash as it was, so that a
 * new password (one someone else may have known) ends every token made under the old one.
 */
const signed = (account: DeviceAccount, id: string) => encoder.encode(`sign-in device\n${account.email}\n${id}\n${account.passwordHash}`);

export interface DeviceAccount {
  email: string;
  passwordHash: string;
}

/** A fresh token for a browser that just signed in to `account`: `<id>.<signature>`. */
export async function deviceToken(secret: string, account: DeviceAccount): Promise<string> {
  const id = toBase64Url(crypto.getRandomValues(new Uint8Array(16)));
  const signature = await crypto.subtle.sign("HMAC", await signingKey(secret), signed(account, id));
  return `${id}.${toBase64Url(new Uint8Array(signature))}`;
}

/** The id of a token this service made for `account` under its present password, or null for anything else. */
export async function knownDevice(
  secret: string | undefined,
  account: DeviceAccount | undefined,
  token: string | undefined,
): Promise<string | null> {
  if (!secret || !account || !token || token.length > 100) return null;
  const match = /^([\w-]{22})\.([\w-]{43})$/.exec(token);
  if (!match) return null;
  const [, id, signature] = match;
  const mac = canonicalBase64Url(signature!);
  if (!mac) return null;
  const valid = await crypto.subtle.verify("HMAC", await signingKey(secret), mac, signed(account, id!));
  return valid ? id! : null;
}
