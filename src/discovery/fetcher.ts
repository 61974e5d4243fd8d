import { parse } from "tldts";

/**
 * Fetching URLs that strangers choose (a site's page, its manifest, its icons), with the
 * rules that keep such fetches from reaching anything but public web servers (SSRF):
 *
 *  - only `http:` and `https:`, only on ports 80 and 443, no credentials in the URL;
 *  - no IP-literal host (the URL parser turns `0x7f.1`, `2130706433` and the like into
 *    dotted IPv4 first, so every spelling is caught) and no host outside the ICANN section
 *    of the Public Suffix List (`localhost`, `.local`, `.internal`, …);
 *  - redirects followed by hand, at most MAX_REDIRECTS, every hop checked again;
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
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, reason: `scheme ${url.protocol} refused` };
  if (url.port !== "" && url.port !== "80" && url.port !== "443") return { ok: false, reason: `port ${url.port} refused` };
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "credentials in URL refused" };
  const host = url.hostname.toLowerCase();
  if (host.startsWith("[") || /^[\d.]+$/.test(host)) return { ok: false, reason: `IP address ${host} refused` };
  const parsed = parse(host);
  if (parsed.isIp || parsed.domain === null || !parsed.isIcann) return { ok: false, reason: `host ${host} is not a public name` };

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

export type Fetched =
  | {
      ok: true;
      url: string;
      status: number;
      contentType: string | null;
      bytes: Uint8Array;
      truncated: boolean;
      /** The validators a later conditional request asks with. */
      etag: string | null;
      lastModified: string | null;
    }
  /** `requested`: whether any request left the Worker. */
  | { ok: false; url: string; reason: string; requested: boolean };

/** GET a URL under the rules above. Never throws. */
/** The reason a conditional request's 304 gives: the resource is as the validators say. */
export const NOT_MODIFIED = "status 304";

export async function fetchLimited(raw: string, limits: FetchLimits, resolve: ResolveMap = NO_RESOLVE): Promise<Fetched> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let current = raw;
  let requested = false;
  try {
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const checked = checkUrl(current, resolve);
      if (!checked.ok) return { ok: false, url: current, reason: checked.reason, requested };
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
        return { ok: false, url: current, reason: NOT_MODIFIED, requested };
      }
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = response.headers.get("location");
        if (!location) return { ok: false, url: current, reason: `redirect ${response.status} without Location`, requested };
        // Relative locations resolve against the URL as the site sees it, not the loopback one.
        current = new URL(location, checked.url).href;
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        return { ok: false, url: current, reason: `status ${response.status}`, requested };
      }
      const declared = Number(response.headers.get("content-length") ?? NaN);
      if (limits.overflow === "refuse" && declared > limits.maxBytes) {
        await response.body?.cancel();
        return { ok: false, url: current, reason: `larger than ${limits.maxBytes} bytes`, requested };
      }
      const body = await readCapped(response.body, limits.maxBytes, limits.overflow === "truncate");
      if (body.truncated && limits.overflow === "refuse") {
        return { ok: false, url: current, reason: `larger than ${limits.maxBytes} bytes`, requested };
      }
      return {
        ok: true,
        url: current,
        status: response.status,
        contentType: response.headers.get("content-type"),
        ...body,
        etag: response.headers.get("etag"),
        lastModified: response.headers.get("last-modified"),
      };
    }
    return { ok: false, url: current, reason: `more than ${MAX_REDIRECTS} redirects`, requested };
  } catch (error) {
    const reason = signal.aborted ? `no answer within ${limits.timeoutMs} ms` : `fetch failed: ${(error as Error).message}`;
    return { ok: false, url: current, reason, requested };
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
