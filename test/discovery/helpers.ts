import { env } from "cloudflare:workers";
import { encode } from "fast-png";
import { toBase64 } from "../../src/lib/encoding";
import type { Route } from "../fakes/websites";

/**
 * Fake company websites for discovery (test/fakes/websites.ts): each test claims a site of
 * its own, so nothing an isolate remembers about one domain carries over to another test. The
 * sites a file claimed are handed back after it (test/helpers/setup.ts), and claimed again only
 * once every other one has been.
 */
export type { Route } from "../fakes/websites";

export interface FakeSite {
  host: string;
  /** A loopback port DISCOVERY_RESOLVE does not name. */
  elsewherePort: number;
  requests(): Promise<Array<{ path: string; headers: Record<string, string> }>>;
  /** Body bytes the site wrote in all. */
  sent(): Promise<number>;
  set(routes: Record<string, Route>): Promise<void>;
  /** Sends the rest of every body the site stalled (Route `stall`). */
  resume(): Promise<void>;
}

const control = (path: string, init?: RequestInit) => fetch(`${env.DISCOVERY_FAKE_SITES}${path}`, init);

export async function claimSite(routes: Record<string, Route>): Promise<FakeSite> {
  const { host, elsewherePort } = (await (await control("/claim", { method: "POST" })).json()) as { host: string; elsewherePort: number };
  const site: FakeSite = {
    host,
    elsewherePort,
    requests: async () => (await control(`/sites/${host}/requests`)).json(),
    sent: async () => ((await (await control(`/sites/${host}/sent`)).json()) as { bytes: number }).bytes,
    set: async (next) => {
      await control(`/sites/${host}`, { method: "PUT", body: JSON.stringify({ routes: next }) });
    },
    resume: async () => {
      await control(`/sites/${host}/resume`, { method: "POST" });
    },
  };
  await site.set(routes);
  return site;
}

/**
 * A domain nobody knows, as a lookup test needs one: a fake site whose every page is a 404, so
 * that discovery asks it (never the internet, test/helpers/outboundGuard.ts) and finds nothing.
 * Its host is handed back after the file, with the rest (test/helpers/setup.ts).
 */
export async function emptySite(): Promise<string> {
  return (await claimSite({})).host;
}

export async function elsewhereRequests(): Promise<unknown[]> {
  return (await control("/elsewhere/requests")).json();
}

/** TCP connections the "elsewhere" loopback server accepted, requests or not. */
export async function elsewhereConnections(): Promise<number> {
  return ((await (await control("/elsewhere/connections")).json()) as { count: number }).count;
}

export const page = (head: string, body = ""): Route => ({
  type: "text/html; charset=utf-8",
  body: `<!doctype html><html><head>${head}</head><body>${body}</body></html>`,
});
export const image = (bytes: Uint8Array, type = "image/png"): Route => ({ type, base64: toBase64(bytes) });
export const text = (body: string, type: string): Route => ({ type, body });

/** A real PNG of one flat colour. */
export function png(width: number, height: number, rgba: [number, number, number, number] = [200, 30, 30, 255]): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set(rgba, i);
  return encode({ width, height, data, channels: 4, depth: 8 });
}

export const svg = (fill = "#0a7d5a") =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="24" height="24"><rect width="24" height="24" rx="4" fill="${fill}"/></svg>`;

export { ico } from "../fixtures/icons";
