import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/**
 * Company websites for discovery tests: plain HTTP servers on 127.0.0.1, one port per site,
 * each handed to the Worker through DISCOVERY_RESOLVE under a public-looking host name
 * (`fakesite-7.com=127.0.0.1:PORT`). Tests claim a fresh site, give it its pages, and read
 * back what the Worker asked for.
 *
 * A control server (its URL is the DISCOVERY_FAKE_SITES binding) speaks JSON:
 *   POST /claim                      → {host, port}: a free site, the one handed back longest ago
 *   POST /release                    hands every claimed site back, its pages and records
 *                                    emptied (the worker tests' setup, after each file)
 *   PUT  /sites/{host}               {routes: {path: Route}} sets the site's pages
 *   GET  /sites/{host}/requests      → [{path, headers}] every request the site received
 *   GET  /elsewhere/requests         → requests to the "elsewhere" server, a loopback port
 *                                      that DISCOVERY_RESOLVE does not name
 *   GET  /elsewhere/connections      → {count}: TCP connections it accepted, HTTP or not (a
 *                                      TLS handshake to it is one, though no request follows)
 * A Route is {status?, type?, body? (text), base64? (bytes), location?, endless?: true (an
 * HTML page that never ends), size? (bytes of a PNG-looking body streamed, never held),
 * drip?: true (its body at once, then a space every 100 ms, never ending), declaredLength?
 * (the Content-Length sent instead of the true one; a body shorter than declared is cut off
 * by closing the connection, as a lying server's would be), etag? (sent as the ETag; an If-None-Match naming it is answered 304), stall? (that many bytes of the body
 * at once, the rest only when the test resumes the site's bodies: a slow body whose slowness
 * the test decides), redirects? (with `location`: that many redirects in a row, the path
 * answering 302 to itself with `?hop=n` until the last hop goes to `location`)}.
 * `POST /sites/{host}/resume` sends the rest of every body the site stalled.
 * `GET /sites/{host}/sent` → {bytes} the site wrote into bodies in all, so a test can see a
 * download was cut off.
 */
export const SITE_COUNT = 160;

export interface Route {
  status?: number;
  type?: string;
  body?: string;
  base64?: string;
  location?: string;
  endless?: boolean;
  size?: number;
  drip?: boolean;
  declaredLength?: number;
  stall?: number;
  redirects?: number;
  /** Sent as the ETag; a request whose If-None-Match names it is answered 304 without a body (RFC 9110 §13.1.2). */
  etag?: string;
}

interface Site {
  host: string;
  port: number;
  routes: Record<string, Route>;
  requests: Array<{ path: string; headers: Record<string, string | string[] | undefined> }>;
  sent: number;
  /** Bodies stalled part way, each finished when the test resumes them. */
  stalled: Array<() => void>;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function serve(site: Pick<Site, "routes" | "requests" | "sent" | "stalled">, req: IncomingMessage, res: ServerResponse) {
  const path = (req.url ?? "/").split("?")[0]!;
  site.requests.push({ path: req.url ?? "/", headers: req.headers });
  const route = site.routes[path];
  if (!route) {
    res.writeHead(404, { "Content-Type": "text/plain" });
    return res.end("not found");
  }
  if (route.redirects !== undefined) {
    const hop = Number(new URL(req.url ?? "/", "http://site").searchParams.get("hop") ?? 0);
    res.writeHead(302, { Location: hop + 1 < route.redirects ? `${path}?hop=${hop + 1}` : (route.location ?? "/") });
    return res.end();
  }
  const headers: Record<string, string> = { "Content-Type": route.type ?? "text/html" };
  if (route.location) headers.Location = route.location;
  if (route.etag !== undefined) {
    headers.ETag = route.etag;
    if (req.headers["if-none-match"] === route.etag) {
      res.writeHead(304, { ETag: route.etag });
      return res.end();
    }
  }
  if (route.endless || route.size !== undefined) {
    res.writeHead(route.status ?? 200, headers);
    let written = 0;
    const chunk = route.endless ? Buffer.from(`<p>${"lorem ipsum ".repeat(1300)}</p>\n`) : Buffer.alloc(64 * 1024);
    const first = route.endless ? Buffer.from("<!doctype html><html><head><title>Endless</title></head><body>") : PNG_SIGNATURE;
    res.write(first);
    const pump = () => {
      while (!res.destroyed && (route.endless || written < route.size!)) {
        written += chunk.length;
        site.sent += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      if (!res.destroyed) res.end();
    };
    res.on("close", () => undefined);
    return pump();
  }
  const body = route.base64 !== undefined ? Buffer.from(route.base64, "base64") : Buffer.from(route.body ?? "");
  if (route.drip) {
    res.writeHead(route.status ?? 200, headers);
    res.write(body);
    const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(" ")), 100);
    res.on("close", () => clearInterval(drip));
    return;
  }
  if (route.stall !== undefined) {
    res.writeHead(route.status ?? 200, { ...headers, "Content-Length": String(body.length) });
    res.write(body.subarray(0, route.stall));
    site.sent += Math.min(route.stall, body.length);
    site.stalled.push(() => {
      if (res.destroyed) return;
      site.sent += Math.max(0, body.length - route.stall!);
      res.end(body.subarray(route.stall));
    });
    return;
  }
  site.sent += body.length;
  res.writeHead(route.status ?? 200, { ...headers, "Content-Length": String(route.declaredLength ?? body.length) });
  if (route.declaredLength !== undefined && route.declaredLength > body.length) {
    // Fewer bytes than declared: the connection closes under the reader, as a lying server's does.
    res.write(body);
    return void res.socket?.end();
  }
  res.end(body);
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("fake websites: no port");
  return address.port;
}

export async function startFakeWebsites(): Promise<{ controlUrl: string; resolve: string }> {
  const sites: Site[] = [];
  for (let i = 0; i < SITE_COUNT; i++) {
    const site: Site = { host: `fakesite-${i}.com`, port: 0, routes: {}, requests: [], sent: 0, stalled: [] };
    site.port = await listen(createServer((req, res) => serve(site, req, res)));
    sites.push(site);
  }
  const elsewhere = { routes: {} as Record<string, Route>, requests: [] as Site["requests"], sent: 0, stalled: [] as Site["stalled"] };
  const elsewhereServer = createServer((req, res) => {
    elsewhere.routes = { [(req.url ?? "/").split("?")[0]!]: { type: "image/png", base64: PNG_SIGNATURE.toString("base64") } };
    serve(elsewhere, req, res);
  });
  let elsewhereConnections = 0;
  elsewhereServer.on("connection", () => elsewhereConnections++);
  const elsewherePort = await listen(elsewhereServer);
  // Sites handed back go to the end of the line: a host is claimed again as late as possible,
  // long after anything a test left running (a discovery on the queue) has asked it.
  const free = [...sites];

  const control = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "POST" && url.pathname === "/claim") {
      const site = free.shift();
      return site
        ? reply(200, { host: site.host, port: site.port, elsewherePort })
        : reply(409, { error: "no fake sites left: one test file claimed them all (raise SITE_COUNT)" });
    }
    if (req.method === "POST" && url.pathname === "/release") {
      const claimed = sites.filter((site) => !free.includes(site));
      for (const site of claimed) {
        for (const finish of site.stalled) finish();
        Object.assign(site, { routes: {}, requests: [], sent: 0, stalled: [] });
      }
      free.push(...claimed);
      elsewhere.requests = [];
      return reply(200, { released: claimed.length });
    }
    if (url.pathname === "/elsewhere/requests") return reply(200, elsewhere.requests);
    if (url.pathname === "/elsewhere/connections") return reply(200, { count: elsewhereConnections });
    const match = /^\/sites\/([^/]+)(\/requests|\/sent|\/resume)?$/.exec(url.pathname);
    const site = match && sites.find((s) => s.host === match[1]);
    if (!site) return reply(404, { error: "unknown site" });
    if (req.method === "PUT" && !match![2]) {
      site.routes = (JSON.parse(Buffer.concat(chunks).toString()) as { routes: Record<string, Route> }).routes;
      site.requests = [];
      site.sent = 0;
      return reply(200, { ok: true });
    }
    if (req.method === "POST" && match![2] === "/resume") {
      for (const finish of site.stalled.splice(0)) finish();
      return reply(200, { ok: true });
    }
    if (match![2] === "/requests") return reply(200, site.requests);
    if (match![2] === "/sent") return reply(200, { bytes: site.sent });
    return reply(404, { error: "unknown route" });
  });
  const controlPort = await listen(control);
  return {
    controlUrl: `http://127.0.0.1:${controlPort}`,
    resolve: sites.map((s) => `${s.host}=127.0.0.1:${s.port}`).join(","),
  };
}
