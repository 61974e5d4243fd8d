import type { Context } from "hono";
import type { Subject } from "../catalogue/resolveLogo";
import { nameKey } from "../catalogue/names";
import type { MissAnswer } from "../discovery/onMiss";
import { MONOGRAM_HEADERS, monogramSvg } from "../fallback/monogram";
import type { AppEnv } from "../lib/context";
import type { Caller } from "./callers";
import { headerName } from "./headers";
import type { LookupOptions } from "./request";

/**
 * A miss answered with a monogram (`fallback=monogram`, or the key's default): the letter of
 * the name the site gave itself when discovery looked at it, else of the domain. Cached for
 * less than a logo, and never past the moment discovery may ask the site again: an hour at
 * most, as long as the miss is remembered when that is shorter (ten minutes after a failed
 * discovery), a minute while it is under way or could not be asked. Redirect or bytes alike,
 * the monogram is the answer itself: there is no object to redirect to.
 */
const MONOGRAM_MAX_AGE_S = 3600;
const MONOGRAM_MIN_AGE_S = 60;

export function monogramResponse(
  c: Context<AppEnv>,
  caller: Caller,
  subject: Subject,
  options: LookupOptions,
  miss: MissAnswer | null,
  limitHeaders: Record<string, string>,
): Response {
  const site = miss && !miss.found ? miss.site : null;
  // A domain letters the site's own name or itself; a ticker its symbol (an exchange is no part
  // of the company's name), a name itself. Each is coloured by what finds the same company
  // however it is written: `NYSE:ACME` and `acme` alike, `/name/Acme` and `/name/ACME` alike.
  const symbol = subject.kind === "ticker" ? subject.value.slice(subject.value.lastIndexOf(":") + 1).toUpperCase() : "";
  const name = subject.kind === "domain" ? (site?.name ?? null) : subject.kind === "ticker" ? symbol : subject.value;
  const seed = subject.kind === "domain" ? subject.value : subject.kind === "ticker" ? symbol : nameKey(subject.value);
  const svg = monogramSvg({
    domain: seed,
    name,
    brandColor: site?.brandColor ?? null,
    size: options.size,
    theme: options.theme,
    greyscale: options.greyscale,
  });
  const retryAt = miss && !miss.found ? miss.retryAt : null;
  const untilRetry = retryAt === null ? MONOGRAM_MAX_AGE_S : Math.floor((retryAt - Date.now()) / 1000);
  const maxAge = Math.max(MONOGRAM_MIN_AGE_S, Math.min(MONOGRAM_MAX_AGE_S, untilRetry));
  const headers: Record<string, string> = {
    ...MONOGRAM_HEADERS,
    "Cache-Control": `public, max-age=${maxAge}`,
    "X-Logo-Source": "monogram",
    ...caller.cors,
    ...limitHeaders,
  };
  if (caller.kind === "secret") {
    Object.assign(headers, {
      ...(subject.kind === "domain" ? { "X-Logo-Domain": subject.value } : {}),
      "X-Company-Name": headerName(name ?? ""),
      "X-Logo-Width": String(options.size),
      "X-Logo-Height": String(options.size),
    });
  }
  const body = new TextEncoder().encode(svg);
  headers["Content-Length"] = String(body.byteLength);
  return new Response(c.req.method === "HEAD" ? null : body, { status: 200, headers });
}
