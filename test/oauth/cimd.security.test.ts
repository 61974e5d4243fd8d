import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { refusedOutbound } from "../../src/lib/outboundGuard";
import { CLIENT_METADATA_URLS, isPublicAddress, strangerUrlProblem } from "../../src/lib/strangerUrls";
import { claimSite, elsewhereConnections } from "../discovery/helpers";
import { authorizeUrl, BASE, Browser, pkcePair } from "./helpers";

/**
 * OAuth client metadata documents (CIMD) are fetched on a stranger's say-so: the client_id is
 * the URL. One guard decides before any connection (src/lib/strangerUrls.ts): https on 443,
 * a public name, no IP literal, no name known to resolve to a private address. The library's
 * own fetches run under it (src/lib/outboundGuard.ts).
 */
const loopbackClient = async () => {
  const { elsewherePort } = await claimSite({});
  return `https://127.0.0.1:${elsewherePort}/c.json`;
};

describe("client metadata documents from anywhere", () => {
  it("refuses a loopback client_id at /authorize, with no session, without connecting", async () => {
    const clientId = await loopbackClient();
    const before = await elsewhereConnections();
    const { challenge } = await pkcePair();
    const response = await new Browser().fetch(authorizeUrl(clientId, challenge));
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("could not be verified");
    expect(await elsewhereConnections()).toBe(before);
  });

  it.each([
    "https://127.0.0.1.nip.io/c.json",
    "https://localtest.me/c.json",
    "https://10-0-0-1.sslip.io/c.json",
    "https://metadata.google.internal/c.json",
    "https://[::1]/c.json",
    "https://example.com:8443/c.json",
    "http://example.com/c.json",
  ])("refuses %s before any connection", async (clientId) => {
    expect(strangerUrlProblem(clientId, CLIENT_METADATA_URLS)).not.toBeNull();
    const { challenge } = await pkcePair();
    expect((await new Browser().fetch(authorizeUrl(clientId, challenge))).status).toBe(400);
  });

  it("refuses the library's own fetch of a private client_id at the token endpoint, without connecting", async () => {
    const clientId = await loopbackClient();
    const before = { connections: await elsewhereConnections(), refused: refusedOutbound.count };
    const response = await exports.default.fetch(`${BASE}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "x", code_verifier: "y".repeat(43), client_id: clientId }),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(refusedOutbound.count).toBeGreaterThan(before.refused);
    expect(await elsewhereConnections()).toBe(before.connections);
  });

  it("rate limits /authorize per address", async () => {
    const { challenge } = await pkcePair();
    const url = authorizeUrl("no-such-client", challenge);
    const address = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++) statuses.push((await new Browser().fetch(url, { headers: { "cf-connecting-ip": address } })).status);
    expect(statuses.slice(0, 30).every((status) => status !== 429)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe("public addresses, as the Node side resolves names", () => {
  it.each([
    ["93.184.216.34", true],
    ["2606:4700::1111", true],
    ["127.0.0.1", false],
    ["10.1.2.3", false],
    ["172.20.0.1", false],
    ["192.168.1.1", false],
    ["169.254.169.254", false],
    ["100.64.0.1", false],
    ["0.0.0.0", false],
    ["::1", false],
    ["::ffff:127.0.0.1", false],
    ["fe80::1", false],
    ["fd00::1", false],
    ["64:ff9b::a00:1", false],
    ["2002:0a00:0001::1", false],
  ])("%s is public: %s", (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});
