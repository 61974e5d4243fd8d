import { OAuthAuthorizationServer, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { localhostAllowedHostnames } from "@modelcontextprotocol/server";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { readVars } from "../env";

/**
 * The OAuth 2.1 authorization server MCP clients discover (@cloudflare/workers-oauth-provider):
 * RFC 8414 metadata, dynamic client registration (RFC 7591), Client ID Metadata Documents,
 * the token endpoint with PKCE S256, rotating refresh tokens and revocation (RFC 7009).
 * Tokens are bound to one resource, this Worker's `/mcp` (RFC 8707). Grants, tokens and
 * clients live in the OAUTH_KV namespace, secrets only as hashes.
 *
 * The interactive step, `/authorize` (sign-in and consent), is ours: see authorize.tsx.
 */

/** The one scope: use the logo tools within the account's plan. */
export const MCP_SCOPE = "logos";
export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  [MCP_SCOPE]: "Search for company logos and fetch them, counted against your plan",
  offline_access: "Stay connected without signing in again (refresh tokens)",
};

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/**
 * The public origin everything is named after: PUBLIC_BASE_URL when set, otherwise the origin
 * of the request (the local default, e.g. http://localhost:8787).
 */
export function publicBase(env: Env, requestUrl: string): string {
  return readVars(env).PUBLIC_BASE_URL || new URL(requestUrl).origin;
}

export const resourceOf = (base: string) => `${base}/mcp`;

/**
 * DNS-rebinding protection for a local server. Without PUBLIC_BASE_URL the service names itself
 * after the request, and a plain-http request can only be a local server (Cloudflare serves
 * https): its Host must then be a local name, or a page on another site that pointed its own
 * name at 127.0.0.1 would be served under that name. Routes that name the service (discovery,
 * authorization, /mcp) refuse such requests with 403 before anything else.
 */
export const localHostOnly = createMiddleware<AppEnv>(async (c, next) => {
  const url = new URL(c.req.url);
  if (!readVars(c.env).PUBLIC_BASE_URL && url.protocol === "http:" && !localhostAllowedHostnames().includes(url.hostname)) {
    return c.json({ error: `Invalid Host: ${url.hostname}` }, 403, { "Cache-Control": "no-store" });
  }
  await next();
});

// Construction validates the configuration; one server per public origin per isolate.
const servers = new Map<string, OAuthAuthorizationServer<Env>>();

export function authorizationServer(base: string): OAuthAuthorizationServer<Env> {
  let server = servers.get(base);
  if (!server) {
    server = new OAuthAuthorizationServer<Env>({
      issuer: base,
      resources: [resourceOf(base)],
      defaultResource: resourceOf(base),
      authorizeEndpoint: `${base}/authorize`,
      tokenEndpoint: `${base}/oauth/token`,
      clientRegistrationEndpoint: `${base}/oauth/register`,
      scopesSupported: Object.keys(SCOPE_DESCRIPTIONS),
      accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTTL: REFRESH_TOKEN_TTL_SECONDS,
      clientIdMetadataDocumentEnabled: true,
      // What failed and why, for operators; never a token or a secret.
      onError: ({ status, code, internal }) => {
        console.warn(`oauth: ${status} ${code} (${internal.category}/${internal.reason})`);
      },
    });
    if (servers.size > 8) servers.clear();
    servers.set(base, server);
  }
  return server;
}

export function oauthHelpers(env: Env, base: string): OAuthHelpers {
  return authorizationServer(base).getOAuthApi(env);
}

/** What a grant carries into every /mcp request: whose account the token acts for. */
export interface GrantProps {
  accountId: string;
}
