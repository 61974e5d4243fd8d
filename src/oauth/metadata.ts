import { cors } from "hono/cors";
import { type Context, Hono } from "hono";
import { publicBase } from "../env";
import type { AppEnv } from "../lib/context";
import { localHostOnly } from "../lib/localHostOnly";
import { guardedOutbound } from "../lib/outboundGuard";
import { CLIENT_METADATA_URLS } from "../lib/strangerUrls";
import { authorizationServer, MCP_SCOPE, resourceOf } from "./authorizationServer";
import { DAY_S } from "../lib/time";

/**
 * Discovery and the protocol endpoints the library serves.
 *
 * Protected-resource metadata (RFC 9728) for /mcp, at the path form clients derive from the
 * resource (`/.well-known/oauth-protected-resource/mcp`) and at the bare form the spec names
 * (`/.well-known/oauth-protected-resource`), which older clients try first. The
 * authorization-server metadata (RFC 8414), token, revocation and registration endpoints
 * belong to @cloudflare/workers-oauth-provider.
 */
/** Mounted at `/.well-known` (src/app.ts): both metadata documents. */
export const wellKnown = new Hono<AppEnv>();

/** Mounted at `/oauth` (src/app.ts): the token, revocation and registration endpoints. */
export const oauthEndpoints = new Hono<AppEnv>();

export function protectedResourceMetadataUrl(base: string): string {
  return `${base}/.well-known/oauth-protected-resource/mcp`;
}

for (const path of ["/oauth-protected-resource", "/oauth-protected-resource/mcp"]) {
  // Public to any page; a browser client sends MCP-Protocol-Version with its fetch, so it asks first.
  wellKnown.use(path, localHostOnly, cors({ origin: "*", allowMethods: ["GET", "OPTIONS"], allowHeaders: ["*"], maxAge: DAY_S }));
  wellKnown.get(path, (c) => {
    const base = publicBase(c.env, c.req.url);
    return c.json(
      {
        resource: resourceOf(base),
        authorization_servers: [base],
        scopes_supported: [MCP_SCOPE],
        bearer_methods_supported: ["header"],
        resource_name: "Logo lookup MCP server",
      },
      200,
      { "Cache-Control": "public, max-age=3600" },
    );
  });
}

// The library routes by the request's own URL, whatever the mount. What it fetches on a
// client's say-so (a client_id's metadata document at the token endpoint, its jwks_uri) passes
// the outbound guard first. Its errors are RFC 6749's `{error, error_description}`; like every
// JSON error of the service they name the request too.
const libraryOwned = async (c: Context<AppEnv>) => {
  const response = await guardedOutbound(CLIENT_METADATA_URLS, () =>
    authorizationServer(publicBase(c.env, c.req.url)).fetch(c.req.raw, c.env, c.executionCtx as ExecutionContext),
  );
  if (response.status < 400 || !response.headers.get("content-type")?.includes("application/json")) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  const named =
    body && typeof body === "object" && !Array.isArray(body) ? JSON.stringify({ ...body, requestId: c.var.ctx.requestId }) : text;
  return new Response(named, { status: response.status, statusText: response.statusText, headers });
};

wellKnown.on(["GET", "OPTIONS"], "/oauth-authorization-server", localHostOnly, libraryOwned);
wellKnown.on(["GET", "OPTIONS"], "/oauth-authorization-server/*", localHostOnly, libraryOwned);
oauthEndpoints.on(["POST", "OPTIONS"], "/token", localHostOnly, libraryOwned);
oauthEndpoints.on(["POST", "OPTIONS"], "/register", localHostOnly, libraryOwned);
oauthEndpoints.on(["GET", "PUT", "DELETE", "OPTIONS"], "/register/*", localHostOnly, libraryOwned);
