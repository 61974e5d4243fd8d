import { createServer, type Server } from "node:http";

/**
 * A DNS-over-HTTPS resolver on 127.0.0.1 speaking the JSON wire format
 * (`GET /dns-query?name=…&type=TXT`, `Accept: application/dns-json`), as Cloudflare's and
 * Google's resolvers answer it: `{Status, Question, Answer: [{name, type: 16, TTL, data}]}`,
 * each TXT record's data a quoted character-string. Status 3 (NXDOMAIN) for a name it holds
 * nothing for.
 *
 * Tests set what it answers through its control routes:
 *   PUT    /records/{name}   {txt: string[]}  the name's TXT records
 *   DELETE /records/{name}                    the name gone (NXDOMAIN)
 *   PUT    /failing/{name}                    the resolver answers 503 for the name
 */
export async function startFakeDns(): Promise<{ url: string; server: Server }> {
  const records = new Map<string, string[]>();
  const failing = new Set<string>();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const json = (status: number, body: unknown, type = "application/dns-json") => {
      res.writeHead(status, { "Content-Type": type });
      res.end(JSON.stringify(body));
    };
    const control = /^\/(records|failing)\/(.+)$/.exec(url.pathname);
    if (control) {
      const name = decodeURIComponent(control[2]!).toLowerCase();
      if (control[1] === "failing") failing.add(name);
      else if (req.method === "DELETE") records.delete(name);
      else {
        let body = "";
        for await (const chunk of req) body += chunk;
        records.set(name, (JSON.parse(body) as { txt: string[] }).txt);
      }
      return json(204, null, "application/json");
    }
    if (url.pathname !== "/dns-query" || req.method !== "GET") return json(404, { error: "not found" }, "application/json");
    const name = (url.searchParams.get("name") ?? "").toLowerCase().replace(/\.$/, "");
    if (url.searchParams.get("type") !== "TXT" || req.headers.accept !== "application/dns-json")
      return json(400, { error: "this resolver answers TXT questions in application/dns-json only" }, "application/json");
    if (failing.has(name)) return json(503, { error: "upstream unavailable" }, "application/json");
    const held = records.get(name);
    json(200, {
      Status: held ? 0 : 3,
      TC: false,
      RD: true,
      RA: true,
      AD: false,
      CD: false,
      Question: [{ name: `${name}.`, type: 16 }],
      ...(held
        ? { Answer: held.map((txt) => ({ name: `${name}.`, type: 16, TTL: 300, data: `"${txt.replace(/["\\]/g, "\\$&")}"` })) }
        : {}),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // The test run ends without closing it.
  server.unref();
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("fake DNS resolver did not listen");
  return { url: `http://127.0.0.1:${address.port}`, server };
}
