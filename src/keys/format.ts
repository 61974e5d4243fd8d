import { randomBase62, sha256Hex } from "../lib/encoding";
import type { KeyType } from "../../schema";

/**
 * Key format: `pk_` (publishable, goes in URLs) or `sk_` (secret, Authorization header only),
 * then 32 base62 characters: about 190 bits from the CSPRNG. Keys are never stored;
 * `hashKey` gives the value the catalogue indexes them by.
 */
export const KEY_BODY_LENGTH = 32;
const PREFIX_BODY_LENGTH = 6;
const KEY_PATTERN = /^(pk|sk)_[0-9A-Za-z]{32}$/;

export const keyTypePrefix: Record<KeyType, "pk_" | "sk_"> = { publishable: "pk_", secret: "sk_" };

export function generateKey(type: KeyType): string {
  return keyTypePrefix[type] + randomBase62(KEY_BODY_LENGTH);
}

/** The type a well-formed key claims, or null for anything that is not a key at all. */
export function keyTypeOf(key: string): KeyType | null {
  if (!KEY_PATTERN.test(key)) return null;
  return key.startsWith("pk_") ? "publishable" : "secret";
}

const SECRET_KEY_IN_TEXT = /sk_[0-9A-Za-z]{32}/;

/** What a request carrying a secret key in its URL is refused with (401). */
export const SECRET_KEY_IN_URL = "Secret keys (sk_…) must not be sent in URLs; send them in the Authorization header";

/**
 * Whether a URL carries a secret key, in its path or in a parameter of any name,
 * percent-encoded or not. Such a request is refused whatever else it carries: a URL ends up
 * in logs, browser histories and Referer headers, and the key with it. Escapes are read one
 * by one, so a malformed one elsewhere (`?q=100%`) hides nothing; a key is all ASCII, which
 * each escape of it decodes to alone.
 */
export function carriesSecretKey(url: string): boolean {
  if (SECRET_KEY_IN_TEXT.test(url)) return true;
  if (!url.includes("%")) return false;
  return SECRET_KEY_IN_TEXT.test(url.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))));
}

/** The short, non-secret part shown in listings: `pk_` and the first six characters. */
export function visiblePrefix(key: string): string {
  return key.slice(0, 3 + PREFIX_BODY_LENGTH);
}

/** The key's last four characters: shown after the prefix, still far too little to guess the rest from. */
export function lastFourOf(key: string): string {
  return key.slice(-4);
}

export function hashKey(key: string): Promise<string> {
  return sha256Hex(key);
}
