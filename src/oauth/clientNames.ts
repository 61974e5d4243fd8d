/**
 * What an application calls itself, as the sign-in, consent and connections pages show it.
 * Anyone may register a client (RFC 7591) or publish a metadata document under any name, so a
 * name is bounded and stripped of what renders as nothing: a name padded with blank
 * characters would push the consent page's "name not verified" out of sight.
 */
export const MAX_CLIENT_NAME = 100;

// Controls, format characters (zero-width spaces, direction marks and overrides), line and
// paragraph separators, and letters that render blank (Braille blank, the Hangul fillers); not
// the joiners that emoji sequences (👩‍💻) and Persian or Indic spelling need (U+200C, U+200D).
const INVISIBLE_SOURCE = String.raw`[\p{Cc}\p{Zl}\p{Zp}\u2800\u115F\u1160\u3164\uFFA0]|(?![\u200C\u200D])\p{Cf}`;
const INVISIBLE = new RegExp(INVISIBLE_SOURCE, "gu");
const HAS_INVISIBLE = new RegExp(INVISIBLE_SOURCE, "u");

const CLAIMS_VERIFICATION = /published\s+by|\bverified\b/iu;

/** Why a registration's `client_name` is refused, or null when it may be kept. */
export function clientNameProblem(name: unknown): string | null {
  // The library itself refuses a name that is not a string.
  if (typeof name !== "string") return null;
  if ([...name].length > MAX_CLIENT_NAME) return `client_name must be at most ${MAX_CLIENT_NAME} characters`;
  if (HAS_INVISIBLE.test(name)) return "client_name must not contain control, format or blank characters";
  // "Claude (published by anthropic.com)" would read, beside the pages' own mark, as verified.
  if (CLAIMS_VERIFICATION.test(name))
    return "client_name must not claim a publisher or a verification: the pages say whether a name is verified";
  return null;
}

/**
 * The name to show: invisible characters dropped, spaces collapsed, at most MAX_CLIENT_NAME
 * characters. A name claiming a publisher or a verification (one registered before the rule,
 * or a metadata document's, which registration never sees) is shown as the client id.
 */
export function shownClientName(name: string | undefined, clientId: string): string {
  const plain = (name ?? "").replace(INVISIBLE, "").replace(/\s+/gu, " ").trim();
  if (!plain || CLAIMS_VERIFICATION.test(plain)) return clientId;
  const characters = [...plain];
  return characters.length > MAX_CLIENT_NAME ? `${characters.slice(0, MAX_CLIENT_NAME - 1).join("")}…` : plain;
}
