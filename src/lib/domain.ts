import { parse } from "tldts";

/**
 * Company hosts as the catalogue stores them and lookups compare them: lower case,
 * punycode (IDNA), without a leading `www.` or a trailing dot.
 *
 * Only public hostnames pass: no scheme, path, port, credentials, IP address, `localhost`,
 * bare public suffix, unknown top-level domain, special-use name (`.arpa`, `.onion`), or label
 * that is empty or over 63 octets.
 */
export type DomainResult = { ok: true; domain: string } | { ok: false; reason: string };

const SPECIAL_USE = new Set(["arpa", "onion"]);
const MAX_HOST_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
// Anything that could make the input more than a hostname once handed to the URL parser.
const NOT_HOST_CHARACTER = /[\s/\\?#@:%[\]]/u;

export function normaliseDomain(input: string): DomainResult {
  const host = input.trim().toLowerCase();
  if (host === "") return { ok: false, reason: "empty" };
  // The URL parser would accept and rewrite these; a domain never contains them.
  if (NOT_HOST_CHARACTER.test(host)) return { ok: false, reason: "not a bare hostname" };
  let ascii: string;
  try {
    // WHATWG URL host parsing applies IDNA (UTS #46) mapping and punycode.
    ascii = new URL(`http://${host}`).hostname;
  } catch {
    return { ok: false, reason: "not a valid hostname" };
  }
  // After the mapping: a full-width or ideographic dot typed last ("acme.com。") is one too.
  if (ascii.endsWith(".")) ascii = ascii.slice(0, -1);
  // `www.` is the site's, not the company's, unless what is left is a public suffix itself:
  // `www.gov.uk` is the UK government's domain, `gov.uk` no one's.
  if (ascii.startsWith("www.") && parse(ascii.slice(4)).domain !== null) ascii = ascii.slice(4);
  if (ascii.length === 0 || ascii.length > MAX_HOST_LENGTH) return { ok: false, reason: "hostname length" };

  const labels = ascii.split(".");
  if (labels.length < 2) return { ok: false, reason: "not a public hostname" };
  for (const label of labels) {
    if (label.length === 0 || label.length > MAX_LABEL_LENGTH || !LABEL.test(label)) {
      return { ok: false, reason: "invalid label" };
    }
  }

  // ICANN suffixes only here: a private suffix such as `surge.sh` is still its owner's domain.
  const parsed = parse(ascii);
  if (parsed.isIp) return { ok: false, reason: "IP address" };
  // Special-use names the Public Suffix List lists all the same: reverse DNS and home networks
  // (`.arpa`, `home.arpa`), Tor's `.onion`. No company's site is reached there.
  if (SPECIAL_USE.has(labels.at(-1)!)) return { ok: false, reason: "special-use name" };
  // A host under no ICANN suffix (".invalidtld", ".local") or that is a suffix itself
  // ("co.uk") has no registrable domain, so it names no company.
  if (parsed.domain === null || !parsed.isIcann) {
    return { ok: false, reason: "not a public hostname" };
  }
  return { ok: true, domain: ascii };
}

/**
 * The registrable domain of a normalised host (`docs.github.com` → `github.com`), per the
 * Public Suffix List with private suffixes honoured, so `someone.github.io` stays itself
 * rather than turning into GitHub.
 */
export function registrableDomain(host: string): string | null {
  return registrable(host).domain;
}

/**
 * A registrable domain's name without its public suffix, read as registrableDomain reads it:
 * `acme` for acme.com and acme.co.uk, `vercel` for vercel.app.
 */
export function registrableName(host: string): string | null {
  return registrable(host).domainWithoutSuffix;
}

// A host that is a private suffix itself (`surge.sh`) is its own registrable domain, by the ICANN list.
function registrable(host: string) {
  const withPrivate = parse(host, { allowPrivateDomains: true });
  return withPrivate.domain !== null ? withPrivate : parse(host);
}
