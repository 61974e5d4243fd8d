import { SITE_URLS, strangerUrlProblem } from "../lib/strangerUrls";

/**
 * Fetching URLs that strangers choose (a site's page, its manifest, its icons), with the
 * rules that keep such fetches from reaching anything but public web servers (SSRF):
 *
 *  - every URL and every redirect's target passes the service's one guard for strangers'
 *    URLs (src/lib/strangerUrls.ts): http(s) on ports 80 and 443, no credentials, no IP
 *    literal, only public names and none known to resolve to a private address;
 *  - redirects followed by hand, at most MAX_REDIRECTS, every hop checked again;
 *  - a discovery's fetches draw on one FetchBudget: a ceiling of requests (redirects
 *    included) and of bytes for the whole discovery, and the hosts it may ask;
 *  - a timeout on every fetch, bodies read as a stream and cut off at a byte limit, a
 *    declared Content-Length over the limit refused before reading;
 *  - nothing of the client's request is forwarded: a fixed User-Agent and Accept only.
 *
 * In production `global_fetch_strictly_public` also keeps private addresses out (DNS names
 * that resolve to them); these checks do not depend on it.
 *
 * DISCOVERY_RESOLVE (local testing): named hosts, and their `www.`, are fetched over plain
 * http from a loopback address instead. Only when the server runs locally, only loopback
 * addresses, and only the hosts named: every other host keeps every rule above.
 */
export const USER_AGENT = "logo-lookup-discovery/1.0 (company-logo service; fetches site icons)";
export const MAX_REDIRECTS = 5;

/** Hosts to fetch from loopback instead (DISCOVERY_RESOLVE), keyed by lower-case host. */
export type ResolveMap = ReadonlyMap<string, string>;
export const NO_RESOLVE: ResolveMap = new Map();

const LOOPBACK_TARGET = /^(127\.(?:\d{1,3}\.){2}\d{1,3}|\[::1\]):(\d{1,5})$/;

/**
 * `host=127.0.0.1:PORT,host2=127.0.0.1:PORT2` → a map, or empty when the server is not
 * local (`publicBaseUrl` set). Entries naming anything but a loopback address are dropped.
 */
export function parseResolve(spec: string, publicBaseUrl: string): ResolveMap {
  const map = new Map<string, string>();
  if (publicBaseUrl !== "" || spec.trim() === "") return map;
  for (const entry of spec.split(",")) {
    const [host, target] = entry.split("=", 2).map((part) => part?.trim().toLowerCase() ?? "");
    if (!host || !target || !LOOPBACK_TARGET.test(target)) continue;
    map.set(host.replace(/^www\./, ""), target);
  }
  return map;
}

export type UrlCheck = { ok: true; url: URL; fetchUrl: string } | { ok: false; reason: string };

/** Whether a URL may be fetched, and the address to fetch it at (a loopback one for resolved hosts). */
export function checkUrl(raw: string | URL, resolve: ResolveMap = NO_RESOLVE): UrlCheck {
  let url: URL;
  try {
    url = typeof raw === "string" ? new URL(raw) : raw;
  } catch {
    return { ok: false, reason: "not a URL" };
  }
  const problem = strangerUrlProblem(url, SITE_URLS);
  if (problem !== null) return { ok: false, reason: problem };
  const host = url.hostname.toLowerCase();
  const target = resolve.get(host.replace(/^www\./, ""));
  const fetchUrl = target ? `http://${target}${url.pathname}${url.search}` : url.href;
  return { ok: true, url, fetchUrl };
}

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
  /** A body over maxBytes: cut off and kept (`truncate`, pages) or refused (`refuse`, images). */
  overflow: "truncate" | "refuse";
  accept: string;
  /** Request headers beside User-Agent and Accept: a re-check's If-None-Match and If-Modified-Since (RFC 9110 §13.1). */
  conditional?: { ifNoneMatch?: string | null | undefined; ifModifiedSince?: string | null | undefined } | undefined;
}

/**
 * Why a fetch came to nothing, as a miss is remembered by it: `refused` before asking (a URL,
 * a host or a budget the rules refuse), `status` an answer other than 2xx, `unanswered` no
 * answer at all (a timeout, a connection that failed), `too large` over its byte limit.
 */
export type FetchFailure = "refused" | "status" | "unanswered" | "too large";

export type Fetched =
  | {
      ok: true;
      url: string;
      status: number;
      contentType: string | null;
      headers: Headers;
      bytes: Uint8Array;
      truncated: boolean;
      /** The validators a later conditional request asks with. */
      etag: string | null;
      lastModified: string | null;
    }
  /** `requested`: whether any request left the Worker. */
  | { ok: false; url: string; reason: string; requested: boolean; failure: FetchFailure; status?: number };

/**
 * What a whole discovery may still spend, shared by all its fetches: requests (each redirect
 * one more) and body bytes. `admits` says which hosts a fetch may ask (null: any the URL guard
 * lets through); it is asked before every hop, redirects included.
 */
export class FetchBudget {
  requestsMade = 0;
  bytesRead = 0;
  constructor(
    readonly maxRequests: number,
    readonly maxBytes: number,
  ) {}
  get requestsLeft(): number {
    return this.maxRequests - this.requestsMade;
  }
  get bytesLeft(): number {
    return Math.max(0, this.maxBytes - this.bytesRead);
  }
}

export interface FetchOptions {
  resolve?: ResolveMap;
  budget?: FetchBudget;
  /** Why a hop's URL may not be asked by this fetch (a host rule of the caller's), or null. */
  admits?: (url: URL) => string | null;
}

/** GET a URL under the rules above. Never throws. */
/** The reason a conditional request's 304 gives: the resource is as the validators say. */
export const NOT_MODIFIED = "status 304";

export async function fetchLimited(raw: string, limits: FetchLimits, options: FetchOptions = {}): Promise<Fetched> {
  const { resolve = NO_RESOLVE, budget, admits } = options;
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let current = raw;
  let requested = false;
  const refused = (reason: string): Fetched => ({ ok: false, url: current, reason, requested, failure: "refused" });
  try {
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const checked = checkUrl(current, resolve);
      if (!checked.ok) return refused(checked.reason);
      const hostRule = admits?.(checked.url) ?? null;
      if (hostRule !== null) return refused(hostRule);
      if (budget && budget.requestsLeft <= 0) return refused(`the discovery's ${budget.maxRequests} requests are spent`);
      if (budget && budget.bytesLeft <= 0) return refused("the discovery's byte budget is spent");
      if (budget) budget.requestsMade++;
      requested = true;
      const response = await fetch(checked.fetchUrl, {
        method: "GET",
        redirect: "manual",
        signal,
        headers: { "User-Agent": USER_AGENT, Accept: limits.accept, ...conditionalHeaders(limits.conditional) },
      });
      // Not Modified answers a conditional request (RFC 9110 §15.4.5): not a redirect, and nothing to read.
      if (response.status === 304) {
        await response.body?.cancel();
        return { ok: false, url: current, reason: NOT_MODIFIED, requested, failure: "status", status: 304 };
      }
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = response.headers.get("location");
        if (!location)
          return {
            ok: false,
            url: current,
            reason: `redirect ${response.status} without Location`,
            requested,
            failure: "status",
            status: response.status,
          };
        // Relative locations resolve against the URL as the site sees it, not the loopback one.
        current = new URL(location, checked.url).href;
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        return { ok: false, url: current, reason: `status ${response.status}`, requested, failure: "status", status: response.status };
      }
      // The discovery's bytes left cap this body as its own limit does.
      const maxBytes = Math.min(limits.maxBytes, budget?.bytesLeft ?? Infinity);
      const overBudget = maxBytes < limits.maxBytes ? "the discovery's byte budget is spent" : `larger than ${limits.maxBytes} bytes`;
      const declared = Number(response.headers.get("content-length") ?? NaN);
      if (limits.overflow === "refuse" && declared > maxBytes) {
        await response.body?.cancel();
        return { ok: false, url: current, reason: overBudget, requested, failure: "too large" };
      }
      const body = await readCapped(response.body, maxBytes, limits.overflow === "truncate");
      if (budget) budget.bytesRead += body.bytes.byteLength;
      if (body.truncated && limits.overflow === "refuse") {
        return { ok: false, url: current, reason: overBudget, requested, failure: "too large" };
      }
      return {
        ok: true,
        url: current,
        status: response.status,
        contentType: response.headers.get("content-type"),
        headers: response.headers,
        ...body,
        etag: response.headers.get("etag"),
        lastModified: response.headers.get("last-modified"),
      };
    }
    return { ok: false, url: current, reason: `more than ${MAX_REDIRECTS} redirects`, requested, failure: "refused" };
  } catch (error) {
    const reason = signal.aborted ? `no answer within ${limits.timeoutMs} ms` : `fetch failed: ${(error as Error).message}`;
    return { ok: false, url: current, reason, requested, failure: "unanswered" };
  }
}

function conditionalHeaders(conditional: FetchLimits["conditional"]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (conditional?.ifNoneMatch) headers["If-None-Match"] = conditional.ifNoneMatch;
  if (conditional?.ifModifiedSince) headers["If-Modified-Since"] = conditional.ifModifiedSince;
  return headers;
}

/**
 * Reads at most `maxBytes` of a body, then stops reading and cancels the rest. With
 * `keepPartial` (pages), a body that stops arriving (the timeout) is kept as far as it came,
 * cut off like an overlong one: a slow site's `<head>` names its icons all the same.
 */
async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  keepPartial = false,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let truncated = false;
  for (;;) {
    let read: ReadableStreamReadResult<Uint8Array>;
    try {
      read = await reader.read();
    } catch (error) {
      if (!keepPartial || length === 0) throw error;
      truncated = true;
      break;
    }
    const { done, value } = read;
    if (done) break;
    const room = maxBytes - length;
    if (value.byteLength > room) {
      chunks.push(value.subarray(0, room));
      length += room;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    length += value.byteLength;
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated };
}

/** `data:` URLs name their bytes inline: decoded here, never fetched. Null when malformed or over the limit. */
export function decodeDataUrl(url: string, maxBytes: number): { bytes: Uint8Array; contentType: string } | null {
  const match = /^data:([^,;]*)((?:;[^,;]*)*?)(;base64)?,(.*)$/is.exec(url);
  if (!match) return null;
  const [, type, , base64, payload] = match;
  try {
    let bytes: Uint8Array;
    if (base64) {
      if (payload!.length > (maxBytes * 4) / 3 + 4) return null;
      const binary = atob(payload!.replace(/\s+/g, ""));
      bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
    } else {
      bytes = new TextEncoder().encode(decodeURIComponent(payload!));
    }
    return bytes.byteLength > maxBytes ? null : { bytes, contentType: type || "text/plain" };
  } catch {
    return null;
  }
}
