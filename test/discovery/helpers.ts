import { env } from "cloudflare:workers";
import { encode } from "fast-png";
import { toBase64 } from "../../src/lib/encoding";
import type { Route } from "../fakes/websites";

/**
 * Fake company websites for discovery (test/fakes/websites.ts): each test claims a site of
 * its own, so nothing an isolate remembers about one domain carries over to another test.
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
  };
  await site.set(routes);
  return site;
}

export async function elsewhereRequests(): Promise<unknown[]> {
  return (await control("/elsewhere/requests")).json();
}

export const page = (head: string, body = ""): Route => ({ type: "text/html; charset=utf-8", body: `<!doctype html><html><head>${head}</head><body>${body}</body></html>` });
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

/**
 * An ICO file (ICONDIR, one ICONDIRENTRY per image) holding PNG entries as they are and BMP
 * entries as a 32-bit BITMAPINFOHEADER DIB, bottom-up, with its AND mask.
 */
export function ico(entries: Array<{ png: Uint8Array; size: number } | { bmp: { size: number; rgba: [number, number, number, number] } }>): Uint8Array {
  const blobs = entries.map((entry) => ("png" in entry ? entry.png : bmpEntry(entry.bmp.size, entry.bmp.rgba)));
  const header = new Uint8Array(6 + 16 * entries.length);
  const view = new DataView(header.buffer);
  view.setUint16(2, 1, true);
  view.setUint16(4, entries.length, true);
  let offset = header.length;
  entries.forEach((entry, i) => {
    const size = "png" in entry ? entry.size : entry.bmp.size;
    const at = 6 + 16 * i;
    view.setUint8(at, size >= 256 ? 0 : size);
    view.setUint8(at + 1, size >= 256 ? 0 : size);
    view.setUint16(at + 4, 1, true);
    view.setUint16(at + 6, 32, true);
    view.setUint32(at + 8, blobs[i]!.length, true);
    view.setUint32(at + 12, offset, true);
    offset += blobs[i]!.length;
  });
  const out = new Uint8Array(offset);
  out.set(header);
  let at = header.length;
  for (const blob of blobs) {
    out.set(blob, at);
    at += blob.length;
  }
  return out;
}

function bmpEntry(size: number, [r, g, b, a]: [number, number, number, number]): Uint8Array {
  const maskRow = Math.ceil(size / 32) * 4;
  const out = new Uint8Array(40 + size * size * 4 + maskRow * size);
  const view = new DataView(out.buffer);
  view.setUint32(0, 40, true);
  view.setInt32(4, size, true);
  view.setInt32(8, size * 2, true);
  view.setUint16(12, 1, true);
  view.setUint16(14, 32, true);
  for (let i = 0; i < size * size; i++) out.set([b, g, r, a], 40 + i * 4);
  return out;
}
