import freeMailDomains from "email-providers/all.json";
import disposableMailDomains from "disposable-email-domains-js/dist/dict/disposable_email_blocklist.json";
import { normaliseDomain, registrableDomain } from "../lib/domain";

/**
 * An email address names the company of its domain (`jane@stripe.com` → stripe.com), unless the
 * domain is a mail provider's that anyone can sign up to, free or disposable: `jane@gmail.com`
 * is a person, not Google. The lists are maintained packages: `email-providers` (free mail,
 * some 8,700 domains) and `disposable-email-domains-js` (the disposable-email-domains
 * blocklist), with the few corrections below. Only the domain is kept: the local part is never
 * stored, cached or logged (src/lib/log.ts redacts addresses in log lines).
 */
export type EmailDomain = { kind: "company"; domain: string } | { kind: "personal"; domain: string } | { kind: "invalid"; message: string };

export const PERSONAL_ADDRESS = "Personal email address: no company logo";

/** Mail providers the lists leave out. */
const ALSO_PERSONAL = ["fastmail.com", "fastmail.fm", "tutanota.com", "tutanota.de", "tuta.io", "tuta.com", "duck.com"];
/** Companies the free-mail list holds though their addresses are their staff's. */
const NOT_PERSONAL = new Set(["clerk.com", "saudia.com"]);

let personal: Set<string> | undefined;
/** Built on the first email lookup, not when the Worker starts: most isolates never make one. */
function personalDomains(): Set<string> {
  if (!personal) {
    personal = new Set([...freeMailDomains, ...disposableMailDomains, ...ALSO_PERSONAL]);
    for (const domain of NOT_PERSONAL) personal.delete(domain);
  }
  return personal;
}

/** Whether an address at this normalised host is a person's: the host or its registrable domain is a mail provider's. */
export function isPersonalMailDomain(host: string): boolean {
  const domains = personalDomains();
  if (domains.has(host)) return true;
  const registrable = registrableDomain(host);
  return registrable !== null && registrable !== host && domains.has(registrable);
}

const MAX_ADDRESS_LENGTH = 254;
const MAX_LOCAL_PART_LENGTH = 64;

/**
 * The domain an address names, normalised as hosts are (an IDN domain to punycode): a
 * company's, or a person's (a mail provider's), or why it is no address. The local part is
 * checked for its length alone: whatever it holds, the domain is what the lookup reads.
 */
export function emailDomain(address: string): EmailDomain {
  const trimmed = address.trim();
  const at = trimmed.lastIndexOf("@");
  if (at === -1) return { kind: "invalid", message: "Invalid email address: no @" };
  if (trimmed.length > MAX_ADDRESS_LENGTH || at === 0 || at > MAX_LOCAL_PART_LENGTH) {
    return { kind: "invalid", message: "Invalid email address: 1 to 64 characters before the @, 254 in all" };
  }
  const host = normaliseDomain(trimmed.slice(at + 1));
  if (!host.ok) return { kind: "invalid", message: "Invalid email address: its domain is not a public hostname" };
  return isPersonalMailDomain(host.domain) ? { kind: "personal", domain: host.domain } : { kind: "company", domain: host.domain };
}
