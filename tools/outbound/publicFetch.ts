import { type LookupAddress, lookup as dnsLookup } from "node:dns";
import { type IncomingMessage, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Readable } from "node:stream";
import { isPublicAddress } from "../../src/lib/strangerUrls";

/**
 * Fetches from Node (the importer's image URLs, the discovery tool worker's outbound requests)
 * with the rule workerd cannot apply itself (src/lib/strangerUrls.ts): a name is resolved, and
 * refused when ANY of its addresses is not public (private, loopback, link-local, shared,
 * documentation, multicast, reserved: isPublicAddress). The check is made by the connection's
 * own lookup, so the address connected to is one that was checked: a name that answers a
 * public address to a first query and a private one to the next (DNS rebinding) gains nothing.
 * An IP-literal host is judged as its address, with no lookup.
 */
export class NotPublic extends Error {
  readonly code = "ENOTPUBLIC";
}

type Resolve = (hostname: string) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/** Why the addresses of `hostname` may not be connected to, or null with the addresses when they may. */
export async function publicAddresses(hostname: string, resolve: Resolve = systemResolve): Promise<LookupAddress[]> {
  const host = hostname.replace(/^\[|\]$/g, "");
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await resolve(host);
  if (addresses.length === 0) throw new NotPublic(`${host} has no address`);
  const privateOne = addresses.find((a) => !isPublicAddress(a.address));
  if (privateOne) throw new NotPublic(`${host} resolves to ${privateOne.address}, which is not a public address`);
  return addresses;
}

/** A `lookup` for net.connect that connects only to checked public addresses. */
export function publicLookup(resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    publicAddresses(hostname, resolve).then(
      (addresses) => {
        const wanted = typeof options === "object" && options.family ? addresses.filter((a) => a.family === options.family) : addresses;
        const chosen = wanted.length > 0 ? wanted : addresses;
        if (typeof options === "object" && options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, chosen);
        else callback(null, chosen[0]!.address, chosen[0]!.family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, "", 0),
    );
  };
}

export interface PublicFetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Uint8Array;
  /** "follow" (up to 5 redirects, each checked as the first URL) or "manual" (a redirect is the answer). */
  redirect?: "follow" | "manual";
  signal?: AbortSignal;
  /** The resolver (tests give one of their own; the system's otherwise). */
  resolve?: Resolve;
}

const MAX_REDIRECTS = 5;

/** GET (or `method`) an http(s) URL whose host resolves to public addresses only; throws NotPublic otherwise, before connecting. */
export async function publicFetch(raw: string, options: PublicFetchOptions = {}): Promise<Response> {
  let url = new URL(raw);
  for (let hop = 0; ; hop++) {
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new NotPublic(`scheme ${url.protocol} refused`);
    // Checked before the request exists: a refused name never gets a socket.
    await publicAddresses(url.hostname, options.resolve);
    const response = await requestOnce(url, options);
    const location = response.headers.get("location");
    if (options.redirect === "manual" || response.status < 300 || response.status >= 400 || location === null) return response;
    await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new NotPublic(`more than ${MAX_REDIRECTS} redirects`);
    url = new URL(location, url);
  }
}

function requestOnce(url: URL, options: PublicFetchOptions): Promise<Response> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(
      url,
      { method: options.method ?? "GET", headers: options.headers, lookup: publicLookup(options.resolve), signal: options.signal },
      (incoming: IncomingMessage) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) {
          if (value === undefined) continue;
          for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
        }
        const status = incoming.statusCode ?? 502;
        const empty = status === 204 || status === 304 || options.method === "HEAD";
        resolve(
          new Response(empty ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>), {
            status,
            statusText: incoming.statusMessage,
            headers,
          }),
        );
      },
    );
    request.on("error", reject);
    request.end(options.body);
  });
}
