import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, MCP_ACCEPT, mcpAccount, tokensFor } from "../oauth/helpers";
import { errorBody } from "../helpers/errors";

/** The transport's own refusals, after authentication: each with a JSON-RPC error body. */
async function token() {
  const account = await mcpAccount("launch");
  return (await tokensFor(account.email)).access_token;
}

const send = (access: string, init: { method: string; body?: string; headers?: Record<string, string> }, base = BASE) =>
  exports.default.fetch(`${base}/mcp`, {
    ...init,
    headers: {
      Authorization: `Bearer ${access}`,
      "Content-Type": "application/json",
      Accept: MCP_ACCEPT,
      "MCP-Protocol-Version": "2025-06-18",
      ...init.headers,
    },
  });

const LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
const errorOf = async (response: Response) => ((await response.json()) as { error: { code: number; message: string } }).error;

describe("/mcp transport", () => {
  it.each(["GET", "DELETE"])("%s → 405: the endpoint is stateless, there is no session to open or end", async (method) => {
    const response = await send(await token(), { method });
    expect(response.status).toBe(405);
    expect((await errorOf(response)).message).toBe("Method not allowed.");
  });

  it("406 when Accept does not allow both JSON and SSE", async () => {
    const response = await send(await token(), { method: "POST", body: LIST, headers: { Accept: "application/json" } });
    expect(response.status).toBe(406);
    expect((await errorOf(response)).message).toContain("must accept both application/json and text/event-stream");
  });

  it("413 for a body over 1 MB; one just under is read", async () => {
    const access = await token();
    const padded = (size: number) => {
      const shell = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { pad: "" } } });
      return shell.replace('"pad":""', `"pad":"${"x".repeat(size - shell.length)}"`);
    };
    expect((await send(access, { method: "POST", body: padded(1024 * 1024 + 1) })).status).toBe(413);
    expect((await send(access, { method: "POST", body: padded(1024 * 1024) })).status).toBe(200);
  });

  it("a JSON-RPC parse error for malformed JSON", async () => {
    const response = await send(await token(), { method: "POST", body: "{not json" });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).code).toBe(-32700);
  });

  it("403 for a page on another site (DNS rebinding); the server's own origin and no Origin pass", async () => {
    const access = await token();
    const foreign = await send(access, { method: "POST", body: LIST, headers: { Origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect((await errorOf(foreign)).message).toContain("evil.example");
    expect((await send(access, { method: "POST", body: LIST, headers: { Origin: BASE } })).status).toBe(200);
    expect((await send(access, { method: "POST", body: LIST })).status).toBe(200);
  });

  it("a page it admits gets CORS: the preflight answered before authentication, the challenge and the answer readable", async () => {
    const inspector = "http://localhost:6274";
    const preflight = await exports.default.fetch("http://localhost:8787/mcp", {
      method: "OPTIONS",
      headers: {
        Origin: inspector,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type,mcp-protocol-version",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(inspector);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");

    const unauthorized = await exports.default.fetch("http://localhost:8787/mcp", {
      method: "POST",
      body: LIST,
      headers: { Origin: inspector, "Content-Type": "application/json", Accept: MCP_ACCEPT },
    });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe(inspector);
    expect(unauthorized.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");

    const served = await send(await token(), { method: "POST", body: LIST, headers: { Origin: BASE } });
    expect(served.status).toBe(200);
    expect(served.headers.get("access-control-allow-origin")).toBe(BASE);
    expect(served.headers.get("vary")).toContain("Origin");

    const foreign = await exports.default.fetch(`${BASE}/mcp`, {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    expect((await send(await token(), { method: "POST", body: LIST })).headers.get("access-control-allow-origin")).toBeNull();
  });

  it("a local server (plain http, no PUBLIC_BASE_URL) answers only to local host names: a rebound name gets 403 everywhere it would name itself", async () => {
    for (const path of ["/mcp", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/authorize"]) {
      const rebound = await exports.default.fetch(`http://evil.example.com${path}`, {
        method: path === "/mcp" ? "POST" : "GET",
        headers: { Origin: "http://evil.example.com", "Content-Type": "application/json", Accept: MCP_ACCEPT },
        body: path === "/mcp" ? LIST : undefined,
      });
      expect(rebound.status, path).toBe(403);
      expect(await errorBody(rebound)).toEqual({ error: "Invalid Host: evil.example.com", code: "forbidden" });
    }
    // The same requests to a local name reach the service.
    const local = await exports.default.fetch("http://localhost:8787/.well-known/oauth-protected-resource/mcp");
    expect(local.status).toBe(200);
    expect(((await local.json()) as { resource: string }).resource).toBe("http://localhost:8787/mcp");
    expect((await exports.default.fetch("http://127.0.0.1:8787/mcp", { method: "POST", body: LIST })).status).toBe(401);
  });
});
