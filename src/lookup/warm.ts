import { checkedVars, type Vars } from "../env";
import { knownResolution, type Subject } from "../catalogue/resolveLogo";
import { knownTakedowns, takenDownIn } from "../catalogue/takedowns";
import { knownOverride } from "../corrections/overrides";
import { refreshIfStale } from "../discovery/onMiss";
import { carriesSecretKey, visiblePrefix } from "../keys/format";
import { knownKey } from "../keys/verify";
import { accessLog, clock, REQUEST_ID_HEADER, requestIdOf } from "../lib/context";
import { asciiBytes, isolateCache, MAP_ENTRY_BYTES, objectBytes, stringBytes } from "../lib/isolateCaches";
import { spendLease } from "../limits/lookupLimits";
import { publishableCaller } from "./callers";
import { redirectResponse } from "./redirect";
import { firstValues, type LookupOptions, queryOf, REMEMBERED_URL_LENGTH, subjectOf } from "./request";

/**
 * A warm lookup, answered before the router without a single await when the isolate already
 * knows the key and the subject and holds a lease: most hotlink traffic (src/index.ts asks it
 * first). Anything else, undefined: the request takes the full path through the router, which
 * answers it the same way. Read from the raw request, its URL parsed once (warmAsk): a warm
 * redirect costs little more than a trivial Worker's, and routing and a Hono context were most
 * of what it cost.
 */
export function warmLookup(request: Request, env: Env, ctx: ExecutionContext): Response | undefined {
  if (request.method !== "GET") return undefined;
  // Only a lookup URL reads the configuration here: the router answers anything else, and
  // invalid vars too (the lookup refuses them, /health names them).
  const asked = warmAsk(request.url);
  if (!asked) return undefined;
  const vars = checkedVars(env);
  if (!vars.ok || vars.value.LOOKUP_RESPONSE !== "redirect" || request.headers.has("authorization")) return undefined;
  const now = clock.now();
  const key = knownKey(asked.token, now);
  if (key?.type !== "publishable") return undefined;
  let logo = knownResolution(asked.subject, now);
  // A logo whose themes are still to be decided goes to the router, which decides them.
  if (!logo || logo.renditions.pending) return undefined;
  // Taken down, or a list of takedowns not held fresh: the router answers (451, or reads the list).
  const takedowns = knownTakedowns(now);
  if (!takedowns || takenDownIn(takedowns, asked.subject.kind === "domain" ? asked.subject.value : null, logo.domain) !== undefined)
    return undefined;
  // An account with logos of its own: its override for this subject, when the isolate knows it.
  if (key.overrides) {
    const pinned = knownOverride(key.accountId, asked.subject, now);
    if (pinned === undefined) return undefined;
    if (pinned) logo = pinned;
  }
  const identified = publishableCaller(request.headers, key);
  if (!identified.ok) return answered(identified.response, request, vars.value, asked.token, now);
  const decision = spendLease(key, now);
  if (!decision) return undefined;
  refreshIfStale(env, logo, (work) => ctx.waitUntil(work), now);
  return answered(
    redirectResponse(env, vars.value, logo, asked.options, identified.caller.cors, decision),
    request,
    vars.value,
    asked.token,
    now,
  );
}

/**
 * What the router's request context does for every answer: the request's id on it, and its
 * access-log line where ACCESS_LOG asks for warm lookups' too (a console line costs workerd as
 * much as the rest of a warm answer; by default Cloudflare's invocation log, under the same ray
 * id, is the line).
 */
function answered(response: Response, request: Request, vars: Vars, token: string, started: number): Response {
  const requestId = requestIdOf(request);
  response.headers.set(REQUEST_ID_HEADER, requestId);
  if (vars.ACCESS_LOG === "all") accessLog("GET", "/*", response.status, { requestId, started, keyPrefix: visiblePrefix(token) });
  return response;
}

/** What a lookup URL asks for, when the warm path may answer it: a publishable key, a subject and valid options. */
interface WarmAsk {
  token: string;
  subject: Subject;
  options: LookupOptions;
}

// Parsed once per URL: hotlinks repeat the very same URL, and parsing it (query, options,
// subject) was a fifth of what a warm lookup cost in its isolate (measured with npm run bench).
// What a URL asks depends on nothing else, so an entry never goes stale; null is a URL the
// router must answer.
const warmAsks = isolateCache<string, WarmAsk | null>({
  name: "lookup.warmAsks",
  holds: "a lookup URL and what it asks: its publishable key, subject and options",
  capacity: 5_000,
  // The URL; the ask: a key, a subject (a name of 200 characters at most) and six options.
  entryBytes:
    asciiBytes(REMEMBERED_URL_LENGTH) +
    objectBytes(3) +
    asciiBytes(35) +
    objectBytes(2) +
    stringBytes(200) +
    objectBytes(6) +
    MAP_ENTRY_BYTES,
});

function warmAsk(url: string): WarmAsk | null {
  const remembered = url.length <= REMEMBERED_URL_LENGTH;
  let asked = remembered ? warmAsks.get(url) : undefined;
  if (asked !== undefined) return asked;
  // The asset a local redirect leads to, each redirect's next request, is left to the router
  // and never kept here, where it would crowd the lookups out (a query with "/assets/" in it
  // goes there too, and is answered the same way). Asked only of URLs not kept, so a warm
  // lookup never pays for it.
  if (url.includes("/assets/")) return null;
  asked = parseWarmAsk(url);
  if (remembered) warmAsks.set(url, asked);
  return asked;
}

function parseWarmAsk(url: string): WarmAsk | null {
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  const queryStart = url.indexOf("?", pathStart);
  if (pathStart === -1 || queryStart === -1) return null;
  // Escaped paths (IDN hosts, odd characters) are decoded by the router; they take its path.
  const escaped = url.indexOf("%", pathStart);
  if (escaped !== -1 && escaped < queryStart) return null;
  const query = queryOf("publishable", url, () => firstValues(url.slice(queryStart)));
  if (query.token === undefined || !query.options.success || carriesSecretKey(url)) return null;
  const subject = subjectOf(url.slice(pathStart, queryStart));
  if ("invalid" in subject || "personal" in subject) return null;
  return { token: query.token, subject, options: query.options.data };
}
