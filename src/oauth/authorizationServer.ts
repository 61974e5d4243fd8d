import { OAuthAuthorizationServer, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { isolateCache } from "../lib/isolateCaches";
import { guardedMethods } from "../lib/outboundGuard";
import { CLIENT_METADATA_URLS } from "../lib/strangerUrls";
import { clientNameProblem } from "./clientNames";
import { log } from "../lib/log";
import { DAY_S, HOUR_S } from "../lib/time";

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
export const OFFLINE_SCOPE = "offline_access";
export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  [MCP_SCOPE]: "Search for company logos and fetch them, counted against your plan",
  [OFFLINE_SCOPE]: "Stay connected without signing in again (refresh tokens)",
};

export const ACCESS_TOKEN_TTL_SECONDS = HOUR_S;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * DAY_S;

export const resourceOf = (base: string) => `${base}/mcp`;

// Construction validates the configuration; one server per public origin per isolate.
const servers = isolateCache<string, OAuthAuthorizationServer<Env>>({
  name: "oauth.servers",
  holds: "a public origin and the authorization server configured for it",
  capacity: 8,
  entryBytes: 32 * 1024,
});

export function authorizationServer(base: string): OAuthAuthorizationServer<Env> {
  return servers.remember(
    base,
    () =>
      new OAuthAuthorizationServer<Env>({
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
        // A name the pages could not show plainly is refused at registration (clientNames.ts).
        clientRegistrationCallback: ({ clientMetadata }) => {
          const problem = clientNameProblem(clientMetadata.client_name);
          return problem ? { code: "invalid_client_metadata", description: problem } : undefined;
        },
        // What failed and why, for operators; never a token or a secret.
        onError: ({ status, code, internal }) => {
          log.warn("oauth.refused", { status, code, category: internal.category, reason: internal.reason });
        },
      }),
  );
}

/**
 * The library's helpers, every call checked by the outbound guard: what a client names (its
 * metadata document's URL, the keys it points to) is fetched only from https on 443 under a
 * public name, and refused before any connection otherwise (src/lib/outboundGuard.ts).
 */
export function oauthHelpers(env: Env, base: string): OAuthHelpers {
  return guardedMethods(CLIENT_METADATA_URLS, authorizationServer(base).getOAuthApi(env));
}

/** What a grant carries into every /mcp request: whose account the token acts for. */
export interface GrantProps {
  accountId: string;
}
