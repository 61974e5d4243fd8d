import { createServer, type Server } from "node:http";

/** The zone and token the fake knows: a test configures a deployment with these. */
export const FAKE_CDN_ZONE_ID = "0123456789abcdef0123456789abcdef";
export const FAKE_CDN_PURGE_TOKEN = "cf-purge-test-token-0123456789";

/** A purge request as the fake received it. */
export interface ReceivedPurge {
  zone: string;
  authorization: string | null;
  body: unknown;
}

/**
 * Cloudflare's cache purge endpoint (API v4) on 127.0.0.1, as the Worker's CDN purge uses it
 * (src/purge/cdn.ts): `POST /client/v4/zones/{zone_id}/purge_cache` with a bearer token and a
 * JSON body of one kind of target (`tags`, `files`, `prefixes` or `hosts`), answered in the
 * API's envelope `{success, errors, messages, result: {id}}`. A token it does not know is a
 * 403 with error 10000, a zone it does not know a 404 with 7003, a body it cannot read a 400.
 *
 * Tests in workerd read and steer it through its control routes:
 *   GET    /control/requests   the purge requests received, oldest first
 *   DELETE /control/requests   forget them, and answer normally again
 *   PUT    /control/refuse     every purge answered 403, as a token without the permission is
 */
export async function startFakeCdnPurge(): Promise<{ url: string; server: Server }> {
  let received: ReceivedPurge[] = [];
  let refusing = false;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const failure = (status: number, code: number, message: string) =>
      json(status, { success: false, errors: [{ code, message }], messages: [], result: null });
    if (url.pathname === "/control/requests") {
      if (req.method === "DELETE") {
        received = [];
        refusing = false;
        return json(200, { ok: true });
      }
      return json(200, received);
    }
    if (url.pathname === "/control/refuse") {
      refusing = true;
      return json(200, { ok: true });
    }
    const route = /^\/client\/v4\/zones\/([^/]+)\/purge_cache$/.exec(url.pathname);
    if (!route || req.method !== "POST") return failure(404, 7000, `No route for ${req.method} ${url.pathname}`);
    let text = "";
    for await (const chunk of req) text += chunk;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return failure(400, 1012, "Request must contain one of 'purge_everything', 'files', 'tags', 'hosts' or 'prefixes'");
    }
    const zone = decodeURIComponent(route[1]!);
    received.push({ zone, authorization: req.headers.authorization ?? null, body });
    if (refusing || req.headers.authorization !== `Bearer ${FAKE_CDN_PURGE_TOKEN}`) return failure(403, 10000, "Authentication error");
    if (zone !== FAKE_CDN_ZONE_ID)
      return failure(404, 7003, "Could not route to /zones/purge_cache, perhaps your object identifier is invalid?");
    const kinds = ["tags", "files", "prefixes", "hosts"].filter((kind) => Array.isArray((body as Record<string, unknown>)[kind]));
    if (kinds.length !== 1)
      return failure(400, 1012, "Request must contain one of 'purge_everything', 'files', 'tags', 'hosts' or 'prefixes'");
    json(200, { success: true, errors: [], messages: [], result: { id: zone } });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // The test run ends without closing it.
  server.unref();
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("fake CDN purge API did not listen");
  return { url: `http://127.0.0.1:${address.port}`, server };
}
