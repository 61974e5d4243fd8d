import { Client, type OAuthClientProvider, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, Browser, handleOf, mcpAccount, PASSWORD, REDIRECT_URI } from "./helpers";

/**
 * The whole flow with the MCP TypeScript SDK's own client and OAuth support, headless: the
 * client discovers, registers and sends the "user" to /authorize; a scripted browser signs
 * in and approves; the client exchanges the code and lists the tools.
 */
class HeadlessProvider implements OAuthClientProvider {
  authorizationUrl?: URL;
  private info?: Awaited<ReturnType<OAuthClientProvider["clientInformation"]>>;
  private stored?: Awaited<ReturnType<OAuthClientProvider["tokens"]>>;
  private verifier = "";

  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: "SDK test client",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return "sdk-state";
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: NonNullable<HeadlessProvider["info"]>) {
    this.info = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: NonNullable<HeadlessProvider["stored"]>) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** JSON-RPC methods the client sent to /mcp, in order. */
const sent: string[] = [];
async function workerFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  if (new URL(request.url).pathname === "/mcp" && request.method === "POST") {
    const body = (await request.clone().json()) as { method?: string };
    if (body.method) sent.push(body.method);
  }
  return exports.default.fetch(request);
}

function transport(provider: HeadlessProvider) {
  return new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { authProvider: provider, fetch: workerFetch });
}

/** A person at the browser: signs in and approves whatever the client asked for. */
async function userApproves(url: URL, email: string): Promise<URLSearchParams> {
  const browser = new Browser();
  const signedIn = await browser.postForm(url.toString(), { step: "sign-in", email, password: PASSWORD });
  expect(signedIn.status).toBe(303);
  const consent = await browser.fetch(signedIn.headers.get("location")!);
  const html = await consent.text();
  expect(html).toContain("SDK test client");
  const decided = await browser.postForm(url.toString(), { step: "consent", handle: handleOf(html)!, decision: "approve" });
  expect(decided.status).toBe(302);
  return new URL(decided.headers.get("location")!).searchParams;
}

describe("an MCP SDK client end to end", () => {
  it.each([
    ["a 2025-era client", "initialize", { mode: "legacy" as const }],
    ["a 2026-07-28 client", "server/discover", { mode: "auto" as const }],
  ])("%s (%s): discovery → registration → sign-in → consent → token → tools/list", async (_, handshake, versionNegotiation) => {
    const account = await mcpAccount("launch");
    const provider = new HeadlessProvider();

    const first = new Client({ name: "sdk-test", version: "1.0.0" }, { versionNegotiation });
    await expect(first.connect(transport(provider))).rejects.toBeInstanceOf(UnauthorizedError);
    const url = provider.authorizationUrl!;
    expect(url.origin + url.pathname).toBe(`${BASE}/authorize`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("resource")).toBe(`${BASE}/mcp`);

    const callback = await userApproves(url, account.email);
    expect(callback.get("state")).toBe("sdk-state");
    expect(callback.get("iss")).toBe(BASE);
    const finishing = transport(provider);
    await finishing.finishAuth(callback);
    expect(provider.tokens()?.access_token).toBeTruthy();
    expect(provider.tokens()?.refresh_token).toBeTruthy();

    const client = new Client({ name: "sdk-test", version: "1.0.0" }, { versionNegotiation });
    sent.length = 0;
    await client.connect(transport(provider));
    expect(sent[0]).toBe(handshake);
    expect(client.getServerVersion()?.name).toBe("logo-lookup");
    const { tools } = await client.listTools();
    expect(Array.isArray(tools)).toBe(true);
    await client.close();
  });
});
