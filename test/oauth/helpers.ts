import { env, exports } from "cloudflare:workers";
import { insertAccount } from "../helpers/catalogue";
import { clockFrozen } from "../helpers/clock";
import { rateLimiterFor } from "../../src/limits/rateLimiterClient";

export const BASE = "https://logos.test";
export const REDIRECT_URI = "http://127.0.0.1:33418/callback";
export const PASSWORD = "correct horse battery";

/** A browser's cookies, as far as these tests need them: name → value, sent back on every request. */
export class Browser {
  readonly cookies = new Map<string, string>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("Cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    // Browsers name the origin of every form post.
    if (init.method === "POST" && !headers.has("Origin")) headers.set("Origin", BASE);
    const response = await exports.default.fetch(new URL(url, BASE).toString(), { ...init, headers, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const at = pair!.indexOf("=");
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === "" || /max-age=0/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.fetch(url, {
      method: "POST",
      body: new URLSearchParams(fields).toString(),
      headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    });
  }
}

let n = 0;
export async function mcpAccount(plan: "free" | "launch" | "growth" | "enterprise" = "free") {
  const email = `mcp${++n}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  return insertAccount({ email, password: PASSWORD, plan });
}

export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))).replace(/[+/=]/g, "x");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  const challenge = btoa(String.fromCharCode(...digest))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
  return { verifier, challenge };
}

export async function registerClient(redirectUris = [REDIRECT_URI], name = "Test Agent"): Promise<string> {
  const response = await exports.default.fetch(`${BASE}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: redirectUris,
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    }),
  });
  if (response.status !== 201) throw new Error(`registration failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { client_id: string }).client_id;
}

export function authorizeUrl(clientId: string, challenge: string, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: "logos offline_access",
    state: "state-123",
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: `${BASE}/mcp`,
    ...extra,
  });
  return `${BASE}/authorize?${params}`;
}

/** The consent form's handle, read from the page as a browser would. */
export const handleOf = (html: string) => /name="handle" value="([^"]+)"/.exec(html)?.[1];

/** Signs in and approves; returns the redirect back to the client. */
export async function approveAs(browser: Browser, url: string, email: string, password = PASSWORD): Promise<URL> {
  const signInPage = await browser.fetch(url);
  if (signInPage.status !== 200) throw new Error(`authorize: ${signInPage.status} ${await signInPage.text()}`);
  const signedIn = await browser.postForm(url, { step: "sign-in", email, password });
  if (signedIn.status !== 303) throw new Error(`sign-in: ${signedIn.status} ${await signedIn.text()}`);
  const consent = await browser.fetch(signedIn.headers.get("location")!);
  const handle = handleOf(await consent.text());
  const decided = await browser.postForm(url, { step: "consent", handle: handle!, decision: "approve" });
  if (decided.status !== 302) throw new Error(`consent: ${decided.status} ${await decided.text()}`);
  return new URL(decided.headers.get("location")!);
}

export async function exchangeCode(
  clientId: string,
  code: string,
  verifier: string,
  extra: Record<string, string> = {},
): Promise<Response> {
  return exports.default.fetch(`${BASE}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource: `${BASE}/mcp`,
      ...extra,
    }).toString(),
  });
}

/** A full authorization for a fresh account: its access and refresh tokens. */
export async function tokensFor(email: string): Promise<{ access_token: string; refresh_token: string; clientId: string }> {
  const clientId = await registerClient();
  const { verifier, challenge } = await pkcePair();
  const back = await approveAs(new Browser(), authorizeUrl(clientId, challenge), email);
  const response = await exchangeCode(clientId, back.searchParams.get("code")!, verifier);
  if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
  return { ...((await response.json()) as { access_token: string; refresh_token: string }), clientId };
}

export const MCP_ACCEPT = "application/json, text/event-stream";

export function callMcp(
  token: string | undefined,
  body: unknown = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
  path = "/mcp",
  headers: Record<string, string> = {},
) {
  return exports.default.fetch(`${BASE}${path}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: MCP_ACCEPT,
      "MCP-Protocol-Version": "2025-06-18",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** A fresh account signed in at a fresh client's consent page: what the consent tests start from. */
export async function atConsent(clientName = "Test Agent") {
  const account = await mcpAccount();
  const clientId = await registerClient([REDIRECT_URI], clientName);
  const { verifier, challenge } = await pkcePair();
  const browser = new Browser();
  const url = authorizeUrl(clientId, challenge);
  await browser.postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
  const html = await (await browser.fetch(url)).text();
  return { account, clientId, verifier, browser, url, html, handle: handleOf(html)! };
}

/**
 * Counts `attempts` sign-in attempts against the limiter `name` in one call, as that many
 * attempts would. The test's requests after it must fall in the same minute: the test freezes
 * the clock first (test/helpers/clock.ts), so they do.
 */
export async function spendSignIns(name: string, limit: number, attempts: number): Promise<void> {
  if (!clockFrozen()) throw new Error("spendSignIns counts in calendar minutes: freeze the clock first (freezeClock)");
  const decision = await rateLimiterFor(env, name).consume([{ name: "sign-in", period: "minute", limit }], attempts);
  if (!decision.allowed) throw new Error(`could not spend ${attempts} sign-in attempts of ${name}`);
}
