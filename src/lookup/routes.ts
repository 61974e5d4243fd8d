import { type Context, Hono } from "hono";
import { requestAddress } from "../lib/address";
import { checkedVars } from "../env";
import { reresolve, resolveLogo, withThemes } from "../catalogue/resolveLogo";
import { namesGrey } from "../catalogue/logos";
import { takedownOf, takenDownMessage } from "../catalogue/takedowns";
import { overrideFor } from "../corrections/overrides";
import { discoverOnMiss, type MissAnswer, refreshIfStale } from "../discovery/onMiss";
import { MIME_TYPES, renderImage } from "../images/transform";
import { SVG_HEADERS } from "../images/svgPolicy";
import { carriesSecretKey, keyTypeOf, SECRET_KEY_IN_URL } from "../keys/format";
import { checkRestrictions } from "../keys/restrictions";
import { noteKeyUse } from "../keys/lastUsed";
import { verifyAskedKey } from "../keys/unknownKeys";
import type { AppEnv } from "../lib/context";
import { dependency } from "../lib/dependencies";
import { plainText, rateLimitHeaders, retryAfter } from "../lib/responses";
import { consumeLookup } from "../limits/lookupLimits";
import { log } from "../lib/log";
import { identify } from "./callers";
import { ANY_ORIGIN, EXPOSED_LIMITS, LOOKUP_CACHE, metadataHeaders } from "./headers";
import { monogramResponse } from "./monogramAnswer";
import { redirectResponse, servedAs } from "./redirect";
import { queryOf, subjectOf } from "./request";

/**
 * The domain lookup (spec section 1): GET /{domain}?token=pk_…&size=&greyscale=&theme=, with
 * `format` (png, webp, avif, jpg, svg) and `dpr` (1–3, or `retina=true` for 2), and the same
 * by ticker (/ticker/{ticker}), ISIN (/isin/{isin}), crypto symbol (/crypto/{symbol}), email
 * address (/email/{address}: its domain's company; a person's address at a mail provider is a
 * 404 that says so) and name (/name/{name}).
 *
 * Order of checks, each answering with the spec's status and plain-text message:
 * key (401) → origin and attribution (403) → parameters (400) → limits (429) → logo (404).
 * Every request with a valid key counts against its limits, found or not.
 *
 * With a secret key in `Authorization: Bearer sk_…` (the server SDK) the same routes answer
 * with bytes, up to 1,200 px, and the logo's metadata in headers.
 */

async function lookup(c: Context<AppEnv>): Promise<Response> {
  // Vars that do not validate would fail the lookup halfway (after counting it): it is refused
  // first, in plain text a page can read (CORS), what is wrong only in the logs.
  const vars = checkedVars(c.env);
  if (!vars.ok) {
    log.error("misconfigured", { detail: vars.error.message });
    return plainText("Service misconfigured", 500, ANY_ORIGIN);
  }
  const identified = await identify(c);
  if (!identified.ok) return identified.response;
  const { caller } = identified;

  const parsed = queryOf(caller.kind, c.req.url, () => c.req.query()).options;
  if (!parsed.success) return plainText(parsed.message, 400, caller.cors);
  // Worked out (and remembered) only for a caller with a key, never for anyone's junk.
  const subject = subjectOf(c.req.path);
  if ("invalid" in subject) return plainText(subject.invalid, 400, caller.cors);

  const { defer } = c.var.ctx;
  const now = c.var.ctx.now();
  const decision = await consumeLookup(c.env, caller.key, { now, defer });
  const limitHeaders = caller.kind === "publishable" ? { ...rateLimitHeaders(decision), ...EXPOSED_LIMITS } : rateLimitHeaders(decision);
  if (!decision.allowed) {
    return plainText("Rate limit exceeded", 429, { ...caller.cors, ...limitHeaders, "Retry-After": retryAfter(decision.resetAt, now) });
  }
  const db = c.var.ctx.db;
  noteKeyUse(db, caller.key.id, defer, now);

  // A person's address names no company: found or not, it is counted as any lookup is.
  if ("personal" in subject) return plainText(subject.personal, 404, { ...caller.cors, ...limitHeaders });
  const host = subject.kind === "domain" ? subject.value : null;
  let logo = await resolveLogo(db, subject, now);
  // A domain taken down (docs/corrections.md#takedowns) answers 451 on every route, found or not, and is never discovered.
  const takenDown = await takedownOf(db, host, logo?.domain);
  if (takenDown !== undefined) return takenDownResponse(host ?? logo!.domain, takenDown, { ...caller.cors, ...limitHeaders });
  // The account's own logo for the subject, where it pinned one; the catalogue's company stays.
  if (caller.key.overrides) logo = (await overrideFor(db, caller.key.accountId, subject, logo, now)) ?? logo;
  let miss: MissAnswer | null = null;
  if (!logo && host !== null) {
    miss = await discoverOnMiss(c.env, host, { ...caller.key, address: requestAddress(c.req.raw) }, now);
    if (miss.found) logo = await reresolve(db, subject);
  }
  if (!logo) {
    const fallback = parsed.data.fallback ?? caller.key.fallback ?? "none";
    if (fallback === "monogram") return monogramResponse(c, caller, subject, parsed.data, miss, limitHeaders);
    return plainText("Logo not found", 404, { ...caller.cors, ...limitHeaders });
  }
  refreshIfStale(c.env, logo, c.var.ctx.defer, now);
  logo = await withThemes(c.env.LOGOS, db, subject, logo);

  if (caller.kind === "publishable" && vars.value.LOOKUP_RESPONSE === "redirect") {
    return redirectResponse(c.env, vars.value, logo, parsed.data, caller.cors, decision);
  }
  const served = servedAs(logo, parsed.data);

  const headers = new Headers({ "Cache-Control": LOOKUP_CACHE, ...caller.cors, ...limitHeaders, ...served.fallback });
  headers.set("Content-Type", MIME_TYPES[served.format]);
  if (served.format === "svg") for (const [name, value] of Object.entries(SVG_HEADERS)) headers.set(name, value);
  headers.set("X-Logo-Source", logo.source);
  if (caller.kind === "secret") {
    for (const [name, value] of Object.entries(metadataHeaders(logo, served.width))) headers.set(name, value);
    headers.set("X-Logo-Updated", new Date(logo.updatedAt).toUTCString());
  }
  // A HEAD says what a GET would send without making it, but for an AVIF, which Cloudflare may
  // make as WebP or JPEG instead (transform.ts): only the image made says which.
  if (c.req.method === "HEAD" && served.format !== "avif") return new Response(null, { status: 200, headers });
  const image =
    served.format === "svg"
      ? await dependency(
          "object storage",
          c.env.LOGOS.get(served.key).then(async (object) => object && { bytes: await object.arrayBuffer(), contentType: MIME_TYPES.svg }),
        )
      : await renderImage(c.env, served.key, { width: served.width, format: served.format, page: served.page }, c.var.ctx.defer, (key) =>
          namesGrey(db, key),
        );
  if (!image) {
    log.error("lookup.object_missing", { logoId: logo.logoId });
    return plainText("Logo not found", 404, { ...caller.cors, ...limitHeaders });
  }
  // The type as made: an AVIF Cloudflare could not make comes as WebP or JPEG (transform.ts).
  headers.set("Content-Type", image.contentType);
  headers.set("Content-Length", String(image.bytes.byteLength));
  return new Response(c.req.method === "HEAD" ? null : image.bytes, { status: 200, headers });
}

/**
 * A taken-down domain (RFC 7725, 451 Unavailable For Legal Reasons): the short reason in plain
 * text, as every lookup error is; cached a minute, since a takedown can be lifted.
 */
function takenDownResponse(domain: string, reason: string, headers: Record<string, string>): Response {
  return plainText(takenDownMessage(domain, reason), 451, { ...headers, "Cache-Control": "public, max-age=60" });
}

/** CORS preflight: the key in the URL decides which origin may read the answer. */
async function preflight(c: Context<AppEnv>): Promise<Response> {
  const headers: Record<string, string> = {
    "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization",
    "Access-Control-Max-Age": "86400",
  };
  // Refused as the request it precedes would be.
  if (carriesSecretKey(c.req.url)) return plainText(SECRET_KEY_IN_URL, 401, ANY_ORIGIN);
  const token = c.req.query("token");
  const key =
    token && keyTypeOf(token) === "publishable" ? await verifyAskedKey(c.var.ctx.db, c.env, c.req.raw, token, c.var.ctx.defer) : null;
  // A refused address's preflight passes as an unknown key's does, so that the request it
  // precedes gets a 429 its page can read.
  if (!key || key === "refused") return new Response(null, { status: 204, headers: { ...headers, ...ANY_ORIGIN } });
  const restriction = checkRestrictions(key, c.req.raw.headers);
  if (!restriction.ok) return plainText(restriction.message, 403, restriction.headers);
  return new Response(null, { status: 204, headers: { ...headers, ...restriction.cors } });
}

// One wildcard route per method: Hono then calls the handler directly, without composing a
// chain (a warm redirect is mostly routing; npm run bench).
export const lookupRoutes = new Hono<AppEnv>()
  .options("/*", preflight)
  .on(["GET", "HEAD"], "/*", lookup)
  // A lookup (or asset) URL asked with another method: not "no such logo" (RFC 9110 §15.5.6).
  .on(["POST", "PUT", "PATCH", "DELETE"], "/*", () => plainText("Method not allowed", 405, { Allow: "GET, HEAD, OPTIONS", ...ANY_ORIGIN }));
