/** A host name as the service's GET /{domain} reads one (src/lib/domain.ts, copied: the SDK is built without the Worker's code). */
const NOT_HOST_CHARACTER = /[\s/\\?#@:%[\]]/u;
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const MAX_HOST_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;

/**
 * Why the service would never look `domain` up as a domain, or null when it might. The spec's
 * `GET /{domain}` takes a "company domain, without protocol or path" (interface.md, section 1),
 * and the service reads a path as one only when it is a host name of two labels or more
 * (src/lib/domain.ts: the checks below, all but its Public Suffix List and IP address ones);
 * names and tickers have routes of their own (`/name/…`, `/ticker/…`), which get does not use.
 * Any other first segment is one of the service's own routes (`/mcp`, `/portal`, `/v1`,
 * `/authorize`…), whose answer (a 401, a page, a 404) would say nothing of the domain, and
 * which the secret key has no business reaching.
 */
export function notADomain(domain: unknown): string | null {
  if (typeof domain !== "string") return `A domain is a string, not ${domain === null ? "null" : typeof domain}`;
  const quoted = JSON.stringify(domain);
  // encodeURIComponent throws on a lone surrogate: no URL can carry it.
  if (/\p{Cs}/u.test(domain)) return `${quoted} is not a domain: it is not well-formed Unicode (a lone surrogate)`;
  const host = domain.trim().toLowerCase();
  if (host === "") return "A domain is required, not an empty string";
  if (NOT_HOST_CHARACTER.test(host))
    return `${quoted} is not a domain: a bare host name is (stripe.com), without scheme, path, port or spaces`;
  // The URL parser maps as the service's does (IDNA, full-width dots, punycode).
  let ascii = parsedUrl(`http://${host}`)?.hostname ?? "";
  if (ascii.endsWith(".")) ascii = ascii.slice(0, -1);
  // As the service drops it: only where a domain is left (`www.com` is one).
  if (ascii.startsWith("www.") && ascii.slice(4).includes(".")) ascii = ascii.slice(4);
  const labels = ascii.split(".");
  if (ascii !== "" && labels.length < 2)
    return `${quoted} is not a domain: a domain has a dot (stripe.com); a company's name or ticker finds it with company({ name }) or company({ ticker })`;
  if (
    ascii === "" ||
    ascii.length > MAX_HOST_LENGTH ||
    labels.some((label) => label.length > MAX_LABEL_LENGTH || !HOST_LABEL.test(label))
  ) {
    return `${quoted} is not a domain: not a valid host name`;
  }
  return null;
}

export function parsedUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}
