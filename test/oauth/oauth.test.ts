import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { SIGN_IN_LIMITS } from "../../src/accounts/signIn";
import { freezeClock } from "../helpers/clock";
import { limiterNames } from "../../src/limits/rateLimiterClient";
import { oauthHelpers } from "../../src/oauth/authorizationServer";
import {
  approveAs,
  atConsent,
  authorizeUrl,
  BASE,
  Browser,
  callMcp,
  exchangeCode,
  handleOf,
  mcpAccount,
  PASSWORD,
  pkcePair,
  REDIRECT_URI,
  registerClient,
  spendSignIns,
  tokensFor,
} from "./helpers";
import { errorBody } from "../helpers/errors";

const json = async (response: Response) => (await response.json()) as Record<string, unknown>;

describe("discovery", () => {
  it.each(["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"])(
    "%s describes /mcp and names this server as its authorization server",
    async (path) => {
      const response = await exports.default.fetch(`${BASE}${path}`);
      expect(response.status).toBe(200);
      expect(await json(response)).toMatchObject({
        resource: `${BASE}/mcp`,
        authorization_servers: [BASE],
        scopes_supported: ["logos"],
        bearer_methods_supported: ["header"],
      });
    },
  );

  it.each(["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"])(
    "%s lets a browser client fetch it with the MCP-Protocol-Version header",
    async (path) => {
      const preflight = await exports.default.fetch(`${BASE}${path}`, {
        method: "OPTIONS",
        headers: {
          Origin: "https://agent.example",
          "Access-Control-Request-Method": "GET",
          "Access-Control-Request-Headers": "mcp-protocol-version",
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
      expect(preflight.headers.get("access-control-allow-headers")).toBe("*");
      expect(preflight.headers.get("access-control-allow-methods")).toContain("GET");
    },
  );

  it("publishes RFC 8414 metadata: endpoints, S256 only, registration, iss in responses", async () => {
    const metadata = await json(await exports.default.fetch(`${BASE}/.well-known/oauth-authorization-server`));
    expect(metadata).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/authorize`,
      token_endpoint: `${BASE}/oauth/token`,
      registration_endpoint: `${BASE}/oauth/register`,
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
    expect(metadata.client_id_metadata_document_supported).toBe(true);
  });

  it("names the public base URL, not the request's host, when one is configured", async () => {
    // The vitest config leaves PUBLIC_BASE_URL empty; the origin of the request stands in.
    const metadata = await json(await exports.default.fetch("https://other.test/.well-known/oauth-protected-resource"));
    expect(metadata.resource).toBe("https://other.test/mcp");
  });
});

describe("sign-in and consent pages", () => {
  it("shows an accessible sign-in form with fields email and password", async () => {
    const clientId = await registerClient([REDIRECT_URI], "Claude <script>");
    const { challenge } = await pkcePair();
    const page = await new Browser().fetch(authorizeUrl(clientId, challenge));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<html lang="en">');
    expect(html).toMatch(/<label for="email">Email<\/label>\s*<input id="email" name="email" type="email"/);
    expect(html).toMatch(/<label for="password">Password<\/label>\s*<input id="password" name="password" type="password"/);
    expect(html).toContain("Claude &lt;script&gt;");
    expect(html).not.toContain("<script>");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
  });

  it("names the client, its redirect host with a warning, and the scopes on the consent page", async () => {
    const { html } = await atConsent("Inspector");
    expect(html).toContain("Allow Inspector to use your logo account?");
    expect(html).toContain("<strong>127.0.0.1</strong>");
    expect(html).toContain("a program on your own computer");
    expect(html).toContain("Search for company logos");
    expect(html).toContain("Stay connected without signing in again");
    expect(html).toMatch(/value="approve"[^>]*>\s*Approve/);
    expect(html).toMatch(/value="deny"[^>]*>\s*Deny/);
    expect(handleOf(html)).toBeTruthy();
  });

  it.each([
    ["a name of 101 characters", "A".repeat(101), "client_name must be at most 100 characters"],
    [
      "a name padded with blank characters",
      `Claude${"\u2800".repeat(20)}`,
      "client_name must not contain control, format or blank characters",
    ],
    ["a name with a direction override", "Claude\u202Eevil", "client_name must not contain control, format or blank characters"],
    [
      "a name claiming its publisher",
      "Claude (published by anthropic.com)",
      "client_name must not claim a publisher or a verification: the pages say whether a name is verified",
    ],
    [
      "a name claiming verification",
      "Claude \u2014 Verified",
      "client_name must not claim a publisher or a verification: the pages say whether a name is verified",
    ],
  ])("refuses to register %s, which the pages could not show plainly", async (_, name, description) => {
    const response = await exports.default.fetch(`${BASE}/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_client_metadata", error_description: description });
  });

  it.each([["Dev Agent \u{1F469}\u200D\u{1F4BB}"], ["\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645"]])(
    "registers and shows %s, whose joiners are part of its spelling",
    async (name) => {
      const { html } = await atConsent(name);
      expect(html).toContain(`Allow ${name} to use your logo account?`);
    },
  );

  it("shows a stored name that claims a publisher as the client id, on the sign-in page and the consent page", async () => {
    const { clientId } = await oauthHelpers(env, BASE).createClient({
      clientName: "Claude (published by anthropic.com)",
      redirectUris: [REDIRECT_URI],
      tokenEndpointAuthMethod: "none",
    });
    const { challenge } = await pkcePair();
    const account = await mcpAccount();
    const browser = new Browser();
    const url = authorizeUrl(clientId, challenge);
    const signIn = await (await browser.fetch(url)).text();
    expect(signIn).not.toContain("anthropic.com");
    expect(signIn).toContain(`Sign in to connect ${clientId}</h1>`);
    await browser.postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
    const consent = await (await browser.fetch(url)).text();
    expect(consent).not.toContain("anthropic.com");
    expect(consent).toContain(`${clientId} (name not verified)`);
  });

  it("refuses a form body larger than any form, before reading it", async () => {
    const clientId = await registerClient([REDIRECT_URI], "Big Form Agent");
    const { challenge } = await pkcePair();
    const response = await new Browser().postForm(authorizeUrl(clientId, challenge), {
      step: "sign-in",
      email: "x".repeat(100 * 1024),
      password: PASSWORD,
    });
    expect(response.status).toBe(413);
    expect(await response.text()).toContain("This form is too large");
  });

  it("shows a client's name plainly and bounded, whatever it was stored with, and the mark of an unverified name beside it", async () => {
    const padded = `Claude${"\u2800".repeat(5000)} ${"x".repeat(300)}`;
    const { clientId } = await oauthHelpers(env, BASE).createClient({
      clientName: padded,
      redirectUris: [REDIRECT_URI],
      tokenEndpointAuthMethod: "none",
    });
    const { challenge } = await pkcePair();
    const account = await mcpAccount();
    const browser = new Browser();
    const url = authorizeUrl(clientId, challenge);
    const shown = `Claude ${"x".repeat(92)}…`;
    const signIn = await (await browser.fetch(url)).text();
    expect(signIn).toContain(`Sign in to connect ${shown}</h1>`);
    expect(signIn).toContain(`${shown} (name not verified)`);
    await browser.postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
    const html = await (await browser.fetch(url)).text();
    expect(html).toContain(`Allow ${shown} to use your logo account?`);
    expect(html).toContain(`${shown} (name not verified)`);
    expect(html.length).toBeLessThan(10_000);
  });

  it("refuses a wrong password on the page, without a session", async () => {
    const account = await mcpAccount();
    const clientId = await registerClient();
    const { challenge } = await pkcePair();
    const browser = new Browser();
    const response = await browser.postForm(authorizeUrl(clientId, challenge), {
      step: "sign-in",
      email: account.email,
      password: "wrong password!",
    });
    expect(response.status).toBe(401);
    expect(await response.text()).toContain("Invalid email or password");
    expect(browser.cookies.has("__Host-session")).toBe(false);
  });

  it("limits sign-in attempts on the page per account", async () => {
    freezeClock();
    const account = await mcpAccount();
    const clientId = await registerClient();
    const { challenge } = await pkcePair();
    const url = authorizeUrl(clientId, challenge);
    // All but one attempt of the minute spent at once.
    await spendSignIns(
      limiterNames.signInAccountAtAddress(account.email, "unknown"),
      SIGN_IN_LIMITS.perAccountAndAddress,
      SIGN_IN_LIMITS.perAccountAndAddress - 1,
    );
    expect((await new Browser().postForm(url, { step: "sign-in", email: account.email, password: "wrong password!" })).status).toBe(401);
    const refused = await new Browser().postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it("limits sign-in attempts on the page per address, whatever the email", async () => {
    freezeClock();
    const clientId = await registerClient();
    const { challenge } = await pkcePair();
    const url = authorizeUrl(clientId, challenge);
    const ip = `203.0.113.${Math.floor(Math.random() * 250)}`;
    const address = { "CF-Connecting-IP": ip };
    await spendSignIns(limiterNames.signInAddress(ip), SIGN_IN_LIMITS.perAddress, SIGN_IN_LIMITS.perAddress - 1);
    const attempt = await new Browser().postForm(
      url,
      { step: "sign-in", email: "guess-first@example.com", password: "wrong password!" },
      address,
    );
    expect(attempt.status).toBe(401);
    const refused = await new Browser().postForm(
      url,
      { step: "sign-in", email: "guess-last@example.com", password: "wrong password!" },
      address,
    );
    expect(refused.status).toBe(429);
  });

  it("sends a denied consent back with error=access_denied, the state and iss", async () => {
    const { browser, url, handle } = await atConsent();
    const denied = await browser.postForm(url, { step: "consent", handle, decision: "deny" });
    expect(denied.status).toBe(302);
    const back = new URL(denied.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe("state-123");
    expect(back.searchParams.get("iss")).toBe(BASE);
    expect(back.searchParams.get("code")).toBeNull();
  });
});

describe("forgery and fixation", () => {
  it("refuses sign-in and consent forms posted from another site", async () => {
    const account = await mcpAccount();
    const clientId = await registerClient();
    const { challenge } = await pkcePair();
    const browser = new Browser();
    const url = authorizeUrl(clientId, challenge);
    const forged = await browser.postForm(
      url,
      { step: "sign-in", email: account.email, password: PASSWORD },
      { Origin: "https://evil.example" },
    );
    expect(forged.status).toBe(403);
    expect(browser.cookies.has("__Host-session")).toBe(false);

    await browser.postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
    const handle = handleOf(await (await browser.fetch(url)).text())!;
    const forgedConsent = await browser.postForm(url, { step: "consent", handle, decision: "approve" }, { Origin: "https://evil.example" });
    expect(forgedConsent.status).toBe(403);
    expect(forgedConsent.headers.get("location")).toBeNull();
  });

  it("refuses a consent handle replayed from another browser, and a handle used twice", async () => {
    const { account, browser: victim, url, handle } = await atConsent();

    // Another browser, signed in to the same account, without the page's binding cookie.
    const attacker = new Browser();
    await attacker.postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
    const replayed = await attacker.postForm(url, { step: "consent", handle, decision: "approve" });
    expect(replayed.status).toBe(400);
    expect(replayed.headers.get("location")).toBeNull();

    expect((await victim.postForm(url, { step: "consent", handle, decision: "approve" })).status).toBe(302);
    const again = await victim.postForm(url, { step: "consent", handle, decision: "approve" });
    expect(again.status).toBe(400);
  });

  it("connects only the account the consent page named: signed in as another since, nothing is granted", async () => {
    const { account, browser, url, html, handle } = await atConsent();
    const named = /name="account" value="([^"]+)"/.exec(html)?.[1];
    expect(named).toBe(account.id);
    // Another tab of the same browser signs in as someone else.
    const other = await mcpAccount();
    expect((await browser.postForm("/portal/login", { email: other.email, password: PASSWORD })).status).toBe(303);
    const answered = await browser.postForm(url, { step: "consent", handle, account: named!, decision: "approve" });
    expect(answered.status).toBe(400);
    expect(answered.headers.get("location")).toBeNull();
    expect(await answered.text()).toContain("You signed in as another account after this page was shown.");
    // As the page's own account again, the same page still answers.
    expect((await browser.postForm("/portal/login", { email: account.email, password: PASSWORD })).status).toBe(303);
    const approved = await browser.postForm(url, { step: "consent", handle, account: named!, decision: "approve" });
    expect(approved.status).toBe(302);
    expect(new URL(approved.headers.get("location")!).searchParams.get("code")).toMatch(new RegExp(`^${account.id}:`));
  });

  it("issues a fresh session at sign-in, so a planted session id never becomes a signed-in one", async () => {
    const account = await mcpAccount();
    const clientId = await registerClient();
    const { challenge } = await pkcePair();
    const browser = new Browser();
    browser.cookies.set("__Host-session", "planted-by-an-attacker-0123456789abcdefghijklmnop");
    const url = authorizeUrl(clientId, challenge);
    expect(await (await browser.fetch(url)).text()).toContain("Sign in to connect");
    await browser.postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
    const issued = browser.cookies.get("__Host-session");
    expect(issued).not.toBe("planted-by-an-attacker-0123456789abcdefghijklmnop");
    const planted = await exports.default.fetch(`${BASE}/apiaas/whoami`, {
      headers: { Cookie: "__Host-session=planted-by-an-attacker-0123456789abcdefghijklmnop" },
    });
    expect(planted.status).toBe(401);
  });

  it("asks again after signing out: consent needs a live session", async () => {
    const { browser, url, handle } = await atConsent();
    await browser.fetch(`${BASE}/apiaas/logout`, { method: "POST" });
    const response = await browser.postForm(url, { step: "consent", handle, decision: "approve" });
    expect(response.status).toBe(401);
    expect(response.headers.get("location")).toBeNull();
  });
});

describe("authorization requests the server refuses", () => {
  it("redirects a request without PKCE back with invalid_request", async () => {
    const clientId = await registerClient();
    const url = new URL(authorizeUrl(clientId, "unused"));
    url.searchParams.delete("code_challenge");
    url.searchParams.delete("code_challenge_method");
    const response = await new Browser().fetch(url.toString());
    expect(response.status).toBe(302);
    const back = new URL(response.headers.get("location")!);
    expect(back.searchParams.get("error")).toBe("invalid_request");
    expect(back.searchParams.get("state")).toBe("state-123");
  });

  it("refuses the plain PKCE method", async () => {
    const clientId = await registerClient();
    const response = await new Browser().fetch(authorizeUrl(clientId, "a".repeat(43), { code_challenge_method: "plain" }));
    expect(response.status).toBe(302);
    expect(new URL(response.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
  });

  it("never redirects to a redirect URI the client did not register", async () => {
    const clientId = await registerClient();
    const { challenge } = await pkcePair();
    const response = await new Browser().fetch(authorizeUrl(clientId, challenge, { redirect_uri: "https://evil.example/callback" }));
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
    expect(await response.text()).toContain("not valid");
  });

  it("refuses an unknown client on the page", async () => {
    const { challenge } = await pkcePair();
    const response = await new Browser().fetch(authorizeUrl("no-such-client", challenge));
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
  });

  it("answers a client whose metadata document stops answering after the first step with a page, at every step after", async () => {
    // A client whose id is the URL of its metadata document (CIMD), served without leave to
    // cache it: every step fetches it again. The host is outside; fetch stands in for it.
    const clientId = "https://flaky-agent.dev/oauth/client.json";
    const document = {
      client_id: clientId,
      client_name: "Flaky Agent",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    };
    let hostUp = true;
    const realFetch = globalThis.fetch;
    const host = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url !== clientId) return realFetch(input, init);
      return hostUp ? Response.json(document, { headers: { "Cache-Control": "no-store" } }) : new Response("unavailable", { status: 503 });
    });
    try {
      const account = await mcpAccount();
      const { challenge } = await pkcePair();
      const url = authorizeUrl(clientId, challenge);
      const browser = new Browser();
      const signInPage = await browser.fetch(url);
      expect(signInPage.status).toBe(200);
      expect(await signInPage.text()).toContain("Flaky Agent");
      const signedIn = await browser.postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
      expect(signedIn.status).toBe(303);
      const consent = await browser.fetch(url);
      const handle = handleOf(await consent.text())!;

      hostUp = false;
      const unverified = async (response: Response) => {
        expect(response.status).toBe(400);
        expect(response.headers.get("location")).toBeNull();
        expect(await response.text()).toContain("This application could not be verified");
      };
      // The consent page, shown again; the approval of the page already shown.
      await unverified(await browser.fetch(url));
      await unverified(await browser.postForm(url, { step: "consent", handle, decision: "approve", account: account.id }));
      expect(
        host.mock.calls.filter(([input]) => String(input instanceof Request ? input.url : input) === clientId).length,
      ).toBeGreaterThanOrEqual(4);
    } finally {
      host.mockRestore();
    }
  });

  it("refuses a request for another resource", async () => {
    const clientId = await registerClient();
    const { challenge } = await pkcePair();
    const response = await new Browser().fetch(authorizeUrl(clientId, challenge, { resource: "https://elsewhere.example/mcp" }));
    const back = new URL(response.headers.get("location")!);
    expect(response.status).toBe(302);
    expect(back.searchParams.get("error")).toBe("invalid_target");
  });
});

describe("tokens", () => {
  it("refuses a code with the wrong PKCE verifier, and a code used twice", async () => {
    const account = await mcpAccount();
    const clientId = await registerClient();
    const { verifier, challenge } = await pkcePair();
    const back = await approveAs(new Browser(), authorizeUrl(clientId, challenge), account.email);
    const code = back.searchParams.get("code")!;
    const wrong = await exchangeCode(clientId, code, (await pkcePair()).verifier);
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).error).toBe("invalid_grant");
    expect((await exchangeCode(clientId, code, verifier)).status).toBe(200);
    expect((await exchangeCode(clientId, code, verifier)).status).toBe(400);
  });

  it("refuses a code exchanged with a different redirect URI", async () => {
    const account = await mcpAccount();
    const clientId = await registerClient(["http://127.0.0.1:33418/callback", "http://127.0.0.1:33418/other"]);
    const { verifier, challenge } = await pkcePair();
    const back = await approveAs(new Browser(), authorizeUrl(clientId, challenge), account.email);
    const response = await exchangeCode(clientId, back.searchParams.get("code")!, verifier, {
      redirect_uri: "http://127.0.0.1:33418/other",
    });
    expect(response.status).toBe(400);
  });

  it("binds tokens to /mcp and rotates refresh tokens", async () => {
    const account = await mcpAccount();
    const tokens = await tokensFor(account.email);
    expect((await callMcp(tokens.access_token)).status).toBe(200);

    const refresh = (token: string) =>
      exports.default.fetch(`${BASE}/oauth/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: token, client_id: tokens.clientId }).toString(),
      });
    const first = await refresh(tokens.refresh_token);
    expect(first.status).toBe(200);
    const rotated = (await first.json()) as { access_token: string; refresh_token: string; resource?: string };
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect((await callMcp(rotated.access_token)).status).toBe(200);
    // Once the new refresh token is used, the old one is finished.
    expect((await refresh(rotated.refresh_token)).status).toBe(200);
    expect((await refresh(tokens.refresh_token)).status).toBe(400);
  });

  it("keeps the old refresh token working until the new one is used, so that a lost answer can be asked again", async () => {
    const account = await mcpAccount();
    const tokens = await tokensFor(account.email);
    const refresh = async (token: string) => {
      const response = await exports.default.fetch(`${BASE}/oauth/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: token, client_id: tokens.clientId }).toString(),
      });
      return { status: response.status, body: (await response.json()) as { refresh_token?: string; access_token?: string } };
    };
    // The client never got the answer of its first refresh, and asks again with the same token.
    const lost = await refresh(tokens.refresh_token);
    expect(lost.status).toBe(200);
    const again = await refresh(tokens.refresh_token);
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).not.toBe(lost.body.refresh_token);
    expect((await callMcp(again.body.access_token)).status).toBe(200);
    // The token of the answer it did get is used: from then on the old one is finished, and so
    // is the one of the lost answer, which nobody used.
    expect((await refresh(again.body.refresh_token!)).status).toBe(200);
    expect((await refresh(tokens.refresh_token)).status).toBe(400);
    expect((await refresh(lost.body.refresh_token!)).status).toBe(400);
  });

  it("gives an access token an hour: accepted to its last second, refused after", async () => {
    const clock = freezeClock();
    const account = await mcpAccount();
    const clientId = await registerClient();
    const { verifier, challenge } = await pkcePair();
    const back = await approveAs(new Browser(), authorizeUrl(clientId, challenge), account.email);
    const issued = (await (await exchangeCode(clientId, back.searchParams.get("code")!, verifier)).json()) as {
      access_token: string;
      expires_in: number;
    };
    expect(issued.expires_in).toBe(3600);
    // Its expiry is the hour's last second, still accepted; the next is not.
    clock.advance(3600_000);
    expect((await callMcp(issued.access_token)).status).toBe(200);
    clock.advance(1_000);
    const expired = await callMcp(issued.access_token);
    expect(expired.status).toBe(401);
    expect(await errorBody(expired)).toEqual({ error: "Invalid or expired token", code: "unauthorized" });
  });

  it("does not accept a token at another resource", async () => {
    const account = await mcpAccount();
    const tokens = await tokensFor(account.email);
    const response = await exports.default.fetch("https://other.test/mcp", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${tokens.access_token}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
    expect(await errorBody(response)).toEqual({ error: "Invalid or expired token", code: "unauthorized" });
  });

  it("refuses a revoked token with 401 Invalid or expired token", async () => {
    const account = await mcpAccount();
    const tokens = await tokensFor(account.email);
    const revoked = await exports.default.fetch(`${BASE}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: tokens.access_token, client_id: tokens.clientId }).toString(),
    });
    expect(revoked.status).toBe(200);
    const response = await callMcp(tokens.access_token);
    expect(response.status).toBe(401);
    expect(await errorBody(response)).toEqual({ error: "Invalid or expired token", code: "unauthorized" });
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("refuses an expired token with 401 Invalid or expired token", async () => {
    const account = await mcpAccount();
    const tokens = await tokensFor(account.email);
    // Age the stored token record past its expiry, as an hour would.
    const listed = await env.OAUTH_KV.list({ prefix: `token:${account.id}:` });
    expect(listed.keys.length).toBe(1);
    const key = listed.keys[0]!.name;
    const record = (await env.OAUTH_KV.get(key, "json")) as { expiresAt: number };
    await env.OAUTH_KV.put(key, JSON.stringify({ ...record, expiresAt: Math.floor(Date.now() / 1000) - 1 }));
    const response = await callMcp(tokens.access_token);
    expect(response.status).toBe(401);
    expect(await errorBody(response)).toEqual({ error: "Invalid or expired token", code: "unauthorized" });
  });
});

describe("scopes", () => {
  it("row 8: a scope this service does not define is neither shown on the consent page nor granted", async () => {
    const account = await mcpAccount();
    const clientId = await registerClient();
    const { verifier, challenge } = await pkcePair();
    const browser = new Browser();
    const url = authorizeUrl(clientId, challenge, { scope: "logos offline_access admin" });
    await browser.postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
    const html = await (await browser.fetch(url)).text();
    expect(html).toContain("Search for company logos");
    expect(html).not.toContain("admin");
    const approved = await browser.postForm(url, { step: "consent", handle: handleOf(html)!, decision: "approve" });
    const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
    const tokens = (await (await exchangeCode(clientId, code, verifier)).json()) as { scope: string; access_token: string };
    expect(tokens.scope.split(" ").sort()).toEqual(["logos", "offline_access"]);
    const grant = await oauthHelpers(env, BASE).unwrapToken(tokens.access_token);
    expect(grant?.grant.scope).not.toContain("admin");
  });

  it.each([["logos"], [""]])(
    "a client asking for %j is told on the consent page that every grant stays connected, and gets the refresh token it says",
    async (scope) => {
      const account = await mcpAccount();
      const clientId = await registerClient();
      const { verifier, challenge } = await pkcePair();
      const browser = new Browser();
      const url = authorizeUrl(clientId, challenge, { scope });
      await browser.postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
      const html = await (await browser.fetch(url)).text();
      expect(html).toContain("Stay connected without signing in again");
      const approved = await browser.postForm(url, { step: "consent", handle: handleOf(html)!, decision: "approve" });
      const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
      const tokens = (await (await exchangeCode(clientId, code, verifier)).json()) as { scope: string; refresh_token?: string };
      expect(tokens.scope.split(" ").sort()).toEqual(["logos", "offline_access"]);
      expect(tokens.refresh_token).toEqual(expect.any(String));
    },
  );

  it("a client asking only for offline_access is granted logos too, says so on the consent page, and its token works", async () => {
    const account = await mcpAccount();
    const clientId = await registerClient();
    const { verifier, challenge } = await pkcePair();
    const browser = new Browser();
    const url = authorizeUrl(clientId, challenge, { scope: "offline_access" });
    await browser.postForm(url, { step: "sign-in", email: account.email, password: PASSWORD });
    const html = await (await browser.fetch(url)).text();
    expect(html).toContain("Search for company logos");
    expect(html).toContain("Stay connected");
    const approved = await browser.postForm(url, { step: "consent", handle: handleOf(html)!, decision: "approve" });
    const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
    const tokens = (await (await exchangeCode(clientId, code, verifier)).json()) as { scope: string; access_token: string };
    expect(tokens.scope.split(" ").sort()).toEqual(["logos", "offline_access"]);
    expect((await callMcp(tokens.access_token)).status).toBe(200);
  });

  it("a token without logos (an older grant, or one downscoped at the token endpoint) → 403 insufficient_scope", async () => {
    const account = await mcpAccount();
    const clientId = await registerClient();
    const { verifier, challenge } = await pkcePair();
    const helpers = oauthHelpers(env, BASE);
    // Granted as /authorize did before it always granted logos.
    const request = await helpers.parseAuthRequest(new Request(authorizeUrl(clientId, challenge, { scope: "offline_access" })));
    const { redirectTo } = await helpers.completeAuthorization({
      request,
      userId: account.id,
      metadata: {},
      scope: ["offline_access"],
      props: { accountId: account.id },
    });
    const issued = await exchangeCode(clientId, new URL(redirectTo).searchParams.get("code")!, verifier);
    const tokens = (await issued.json()) as { access_token: string; refresh_token: string; scope: string };
    expect(tokens.scope).toBe("offline_access");
    const expectRefused = async (token: string) => {
      const response = await callMcp(token);
      expect(response.status).toBe(403);
      expect(await errorBody(response)).toEqual({ error: 'Insufficient scope: this token does not grant "logos"', code: "forbidden" });
      const header = response.headers.get("www-authenticate")!;
      expect(header).toMatch(/^Bearer /);
      expect(header).toContain('error="insufficient_scope"');
      expect(header).toContain('scope="logos"');
      expect(header).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
    };
    await expectRefused(tokens.access_token);

    // A full grant, with an access token narrowed at refresh (RFC 6749 §6) to offline_access.
    const full = await tokensFor((await mcpAccount()).email);
    const refreshed = await exports.default.fetch(`${BASE}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: full.refresh_token,
        client_id: full.clientId,
        scope: "offline_access",
      }).toString(),
    });
    expect(refreshed.status).toBe(200);
    await expectRefused(((await refreshed.json()) as { access_token: string }).access_token);
    expect((await callMcp(full.access_token)).status).toBe(200);
  });
});
