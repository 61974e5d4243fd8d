import { constantTimeEqual, fromBase64, toBase64 } from "../lib/encoding";

/**
 * Password hashing: PBKDF2-SHA-256 through WebCrypto, so the Worker and the Node CLI
 * produce and check the same hashes. 100,000 iterations is the most workerd's WebCrypto
 * accepts; the count is stored with each hash so it can be raised later without a reset.
 * Stored form: `pbkdf2-sha256$<iterations>$<salt base64>$<hash base64>`.
 */
export const PBKDF2_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;
const SCHEME = "pbkdf2-sha256";

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, HASH_BITS);
  return new Uint8Array(bits);
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(password, salt, PBKDF2_ITERATIONS);
  return [SCHEME, PBKDF2_ITERATIONS, toBase64(salt), toBase64(hash)].join("$");
}

/**
 * Checked against when a sign-in names no account, so that a miss costs what a wrong password
 * does: the same scheme and iterations, a hash no password derives to. A constant, so that no
 * attempt pays for making it (the first miss in an isolate used to hash twice).
 */
export const DECOY_HASH = [SCHEME, PBKDF2_ITERATIONS, toBase64(new Uint8Array(SALT_BYTES)), toBase64(new Uint8Array(HASH_BITS / 8))].join(
  "$",
);

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, iterationText, saltText, hashText] = stored.split("$");
  const iterations = Number(iterationText);
  if (scheme !== SCHEME || !Number.isInteger(iterations) || !saltText || !hashText) return false;
  const expected = fromBase64(hashText);
  const actual = await derive(password, fromBase64(saltText), iterations);
  return constantTimeEqual(actual, expected);
}
