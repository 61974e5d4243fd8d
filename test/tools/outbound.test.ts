import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotPublic, publicAddresses, publicFetch } from "../../tools/outbound/publicFetch";
import { discoveryOutbound } from "../../tools/outbound/toolWorkerOutbound";

/**
 * The Node side's guard (tools/outbound/): names resolved, and refused when any address is not
 * public, before any connection. Resolvers are given by the tests (no DNS leaves the machine);
 * the servers are on 127.0.0.1 and count the connections they accept.
 */
let server: Server;
let port: number;
let connections = 0;
beforeAll(async () => {
  server = createServer((_, response) => response.writeHead(200, { "content-type": "text/plain" }).end("served"));
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const resolver =
  (table: Record<string, string[]>) =>
  async (host: string): Promise<Array<{ address: string; family: number }>> =>
    (table[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

describe("publicAddresses", () => {
  it.each([
    ["a name of one private address", { "intranet.example.com": ["10.1.2.3"] }, "intranet.example.com"],
    ["a name with one public and one loopback address", { "rebind.example.com": ["93.184.216.34", "127.0.0.1"] }, "rebind.example.com"],
    ["a link-local (cloud metadata) address", { "meta.example.com": ["169.254.169.254"] }, "meta.example.com"],
    ["an IPv6 unique-local address", { "ula.example.com": ["fd00::1"] }, "ula.example.com"],
    ["an IPv4-mapped loopback", { "mapped.example.com": ["::ffff:127.0.0.1"] }, "mapped.example.com"],
    ["a name with no address", {}, "nothing.example.com"],
  ])("refuses %s", async (_, table, host) => {
    await expect(publicAddresses(host, resolver(table))).rejects.toBeInstanceOf(NotPublic);
  });

  it("takes a name whose every address is public", async () => {
    const table = { "public.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"] };
    expect((await publicAddresses("public.example.com", resolver(table))).map((a) => a.address)).toEqual(table["public.example.com"]);
  });
});

describe("publicFetch", () => {
  it("refuses a loopback literal and a name resolving to loopback without connecting", async () => {
    const before = connections;
    await expect(publicFetch(`http://127.0.0.1:${port}/`)).rejects.toThrow(/not a public address/);
    await expect(publicFetch(`http://localhost:${port}/`)).rejects.toThrow(/not a public address/);
    const table = { "looks-public.example.com": ["127.0.0.1"] };
    await expect(publicFetch(`http://looks-public.example.com:${port}/`, { resolve: resolver(table) })).rejects.toBeInstanceOf(NotPublic);
    expect(connections - before).toBe(0);
  });
});

describe("the discovery tool worker's outbound hook", () => {
  const request = (url: string) => ({
    url,
    method: "GET",
    headers: [] as Array<[string, string]>,
    arrayBuffer: async () => new ArrayBuffer(0),
  });

  it("fetches the loopback stand-ins DISCOVERY_RESOLVE names, and refuses every other private address with 502, unconnected", async () => {
    const hook = discoveryOutbound(`standin.com=127.0.0.1:${port}`, resolver({ "rebinding.com": ["198.51.100.1", "10.0.0.7"] }));
    const before = connections;
    const named = await hook(request(`http://127.0.0.1:${port}/`));
    expect([named.status, await named.text()]).toEqual([200, "served"]);
    expect(connections - before).toBe(1);

    for (const url of [`http://127.0.0.2:${port}/`, "https://rebinding.com/favicon.ico", `http://localhost:${port}/`]) {
      const refused = await hook(request(url));
      expect(refused.status, url).toBe(502);
      expect(refused.headers.get("x-outbound-refused"), url).toMatch(/not a public address|has no address/);
    }
    expect(connections - before).toBe(1);
  });
});
