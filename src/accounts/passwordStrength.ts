import { isolateCache } from "../lib/isolateCaches";
import { COMMON_PASSWORDS } from "./commonPasswords";

/**
 * Passwords nobody should be allowed to pick: a common password (zxcvbn-ts's maintained list,
 * of which ./commonPasswords.ts keeps those a 10-character rule lets through and the cores
 * they are made of: `npm run passwords:list`), one of those with digits or symbols stuck on
 * ("password123", "letmein!!"), a character or a short run repeated ("aaaaaaaaaa",
 * "abcabcabca"), or a plain sequence ("abcdefghij", "9876543210"). Every place a password is
 * set (sign-up, a password change, `admin account create` and `account password`, the demo
 * account) asks this, through passwordSchema (./accounts.ts).
 *
 * The list is split into a set on the first password set in an isolate, not when the Worker
 * starts: no lookup waits for it.
 */
const lists = isolateCache<"common", ReadonlySet<string>>({
  name: "accounts.commonPasswords",
  holds: "the common passwords refused, as a set, made on the first password set",
  capacity: 1,
  // Some 11,400 short strings in a Set: about 40 bytes of string and 40 of set entry each.
  entryBytes: 2 * 1024 * 1024,
});

const commonPasswords = () => lists.remember("common", () => new Set(COMMON_PASSWORDS.split("\n")));

/** Why a password is too easy to guess, as the end of a sentence ("The password …"), or null. */
export async function weakPasswordReason(password: string): Promise<string | null> {
  const lower = password.toLowerCase();
  const characters = Array.from(lower);
  if (new Set(characters).size <= 2 || repeatsAUnit(characters)) return "repeats the same characters: choose one that is harder to guess";
  if (isSequence(characters)) return "is a simple sequence (like abcdef or 123456): choose one that is harder to guess";
  const common = commonPasswords();
  if (common.has(lower) || common.has(lower.replace(/\s+/g, "")))
    return "is one of the most commonly used passwords: choose one that is harder to guess";
  const core = lower.replace(/^[\d\W_]+|[\d\W_]+$/gu, "");
  if (core.length >= 4 && common.has(core)) return "is a common password with digits or symbols added: choose one that is harder to guess";
  return null;
}

/** A unit of at most four characters repeated to the end ("abab…", "abcabc…"). */
function repeatsAUnit(characters: string[]): boolean {
  for (let unit = 1; unit <= 4 && unit * 2 <= characters.length; unit++) {
    if (characters.every((character, i) => character === characters[i % unit])) return true;
  }
  return false;
}

/** Each character one code point after (or before) the one before it. */
function isSequence(characters: string[]): boolean {
  const codes = characters.map((character) => character.codePointAt(0)!);
  const step = codes[1]! - codes[0]!;
  return (step === 1 || step === -1) && codes.every((code, i) => i === 0 || code - codes[i - 1]! === step);
}
