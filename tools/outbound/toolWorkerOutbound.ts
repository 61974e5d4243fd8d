import { parseResolve } from "../../src/discovery/fetcher";
import { NotPublic, type PublicFetchOptions, publicFetch } from "./publicFetch";

/**
 * The outbound hook of a tool worker that fetches strangers' sites (`admin discover`): workerd
 * hands every fetch the worker makes to this Node function (wrangler's `dev.outboundService`),
 * which resolves the host and refuses it when any address is not public, before connecting
 * (./publicFetch.ts). The one exception is what the operator named: the loopback addresses
 * DISCOVERY_RESOLVE maps hosts to (local stand-ins of sites), fetched as they are.
 *
 * A refusal is answered 502 with the reason in `X-Outbound-Refused`: to discovery, a site that
 * did not answer.
 */
/** A request as workerd hands it to Node: what the hook reads of it. */
export interface OutboundRequest {
  url: string;
  method: string;
  headers: Iterable<[string, string]>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

export type OutboundHook = (request: OutboundRequest) => Promise<Response>;

export function discoveryOutbound(resolveSpec: string, resolve?: PublicFetchOptions["resolve"]): OutboundHook {
  const named = new Set(parseResolve(resolveSpec, "").values());
  return async (request) => {
    const url = new URL(request.url);
    const headers = Object.fromEntries(request.headers);
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : new Uint8Array(await request.arrayBuffer());
    if (url.protocol === "http:" && named.has(url.host)) return fetch(url, { method: request.method, headers, body, redirect: "manual" });
    try {
      return await publicFetch(url.href, { method: request.method, headers, body, redirect: "manual", resolve });
    } catch (error) {
      if (!(error instanceof NotPublic)) throw error;
      return new Response(`refused: ${error.message}`, { status: 502, headers: { "X-Outbound-Refused": error.message } });
    }
  };
}
