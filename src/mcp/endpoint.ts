import { eq } from "drizzle-orm";
import { localhostAllowedOrigins, originValidationResponse, readRequestBody } from "@modelcontextprotocol/server";
import { Hono } from "hono";
import { accounts, apiClients } from "../../schema";
import { type AppEnv, localHostOnly, publicBase } from "../env";
import { planLimits } from "../limits/plans";
import { keyTypeOf } from "../keys/format";
import { catalogueReader, createDb } from "../lib/db";
import { dependency } from "../lib/dependencies";
import { bearerToken, jsonError, jsonErrorHandler, retryAfter } from "../lib/responses";
import { countMcpRequest, mcpWindows, type Toolset } from "../limits/mcpLimits";
import { authorizationServer, type GrantProps, MCP_SCOPE, resourceOf } from "../oauth/authorizationServer";
import { protectedResourceMetadataUrl } from "../oauth/discovery";
import type { McpCaller } from "./context";
import { MAX_MCP_BODY_BYTES, serveMcp } from "./server";

/**
 * /mcp at the HTTP level (spec "Agent endpoint, HTTP level"): everything that happens before
 * the MCP server sees the request, each refusal with the spec's status and JSON body.
 *
 *   no bearer token, or an API key
 *   (pk_/sk_) where a token belongs       401 Authorization required
 *   a token the authorization server does
 *   not accept: unknown, expired, revoked,
 *   or issued for another resource        401 Invalid or expired token
 *   account without an API client         403 No API client associated with this account
 *   plan (or account) without MCP access  403 Your plan does not include MCP access
 *   per-minute plan limit                 429 Rate limit exceeded, Retry-After: 60
 *   Free daily cap                        429 Daily limit of <n> requests exceeded. …
 *   anything unexpected                   500 Internal MCP server error (detail in logs only)
 *
 * Before all of it, a browser page on another site (DNS rebinding) is turned away: a local
 * server answers only to local host names (localHostOnly), and a request with an Origin must
 * come from this server's own host (or, on a local server, from a local page such as the MCP
 * Inspector). Agents send no Origin.
 *
 * Both 401s carry `WWW-Authenticate: Bearer resource_metadata="…"` so clients can discover
 * the authorization server. Each call that passes these checks counts one `mcp_request`.
 */
export const mcp = new Hono<AppEnv>();

// The shape of every token our authorization server issues, `{accountId}:{grantId}:{secret}`
// (workers-oauth-provider: a 16-character grant id, a 32-character secret). Anything else is
// invalid without asking, and must be: the server looks a token up under a storage key built
// from its first two parts, and a long enough forgery overflowed that key, answering 503 for
// a bad credential.
const ISSUED_TOKEN = /^[^:]{1,128}:[\w-]{16}:[\w-]{32}$/;

// Whatever fails after authentication (storage, the limiter, the MCP server) answers in the
// endpoint's own format; the detail goes to the logs only.
// The spec's words for any failure before the tools run, a failed dependency too (then 503).
mcp.onError(jsonErrorHandler("Internal MCP server error", "Internal MCP server error"));

mcp.all("/mcp", localHostOnly, async (c) => {
  const base = publicBase(c.env, c.req.url);
  const host = new URL(base).hostname;
  const foreign = originValidationResponse(c.req.raw, localhostAllowedOrigins().includes(host) ? localhostAllowedOrigins() : [host]);
  if (foreign) return foreign;
  const challenge = `Bearer realm="OAuth", resource_metadata="${protectedResourceMetadataUrl(base)}", scope="${MCP_SCOPE}"`;

  const token = bearerToken(c.req.header("authorization"));
  // An API key is not a token; whether a token is valid is the authorization server's to say.
  if (!token || keyTypeOf(token) !== null) return jsonError(c, "unauthorized", "Authorization required", { "WWW-Authenticate": challenge });

  const invalid = () => jsonError(c, "unauthorized", "Invalid or expired token", { "WWW-Authenticate": `${challenge}, error="invalid_token"` });
  if (!ISSUED_TOKEN.test(token)) return invalid();
  const validated = await dependency("authorization server", authorizationServer(base).validateToken<GrantProps>(resourceOf(base), token, c.env));
  if (!validated) return invalid();

  const db = createDb(c.env.DB);
  const accountId = validated.props.accountId;
  const [account, client] = await Promise.all([
    db.query.accounts.findFirst({ where: eq(accounts.id, accountId), columns: { plan: true, mcpAccess: true } }),
    db.query.apiClients.findFirst({ where: eq(apiClients.accountId, accountId), columns: { id: true }, orderBy: apiClients.createdAt }),
  ]);
  // A token outliving its account is as good as revoked.
  if (!account) return invalid();
  if (!client) return jsonError(c, "forbidden", "No API client associated with this account");
  if (!planLimits[account.plan].mcp.access || !account.mcpAccess) return jsonError(c, "forbidden", "Your plan does not include MCP access");

  // Read here (within the spec's 1 MB) so that a JSON-RPC batch counts each of its messages:
  // one call of 20 tools/call must not cost what one tool call costs.
  const body = c.req.method === "POST" ? await readRequestBody(c.req.raw, MAX_MCP_BODY_BYTES) : { tooLarge: false as const, text: null };
  if (body.tooLarge) return tooLarge();
  const toolset: Toolset = c.req.query("toolset") === "three" ? "three" : "seven";
  const now = Date.now();
  const decision = await countMcpRequest(c.env, accountId, account.plan, toolset, now, messageCount(body.text));
  if (!decision.allowed) {
    if (decision.dailyLimit !== undefined) {
      return jsonError(c, "rate_limited", `Daily limit of ${decision.dailyLimit} requests exceeded. Upgrade your plan for higher limits.`, { "Retry-After": retryAfter(decision.resetAt, now) });
    }
    return jsonError(c, "rate_limited", "Rate limit exceeded", { "Retry-After": "60" });
  }

  // The plan has one request window (Free: the day, paid plans: the minute); `_meta.usage` reports it.
  const window = mcpWindows(account.plan, toolset)[0];
  const caller: McpCaller = {
    accountId,
    clientId: client.id,
    oauthClientId: validated.clientId,
    plan: account.plan,
    toolset,
    base,
    requests: window ? { current: window.limit - decision.remaining, limit: window.limit } : null,
  };
  const request = body.text === null ? c.req.raw : new Request(c.req.raw, { body: body.text });
  return serveMcp(request, { caller, env: c.env, db, catalogue: catalogueReader(c.env.DB), defer: (work) => c.executionCtx.waitUntil(work) });
});

/** JSON-RPC messages in a body: the length of a batch, otherwise one (malformed bodies included). */
export function messageCount(text: string | null): number {
  if (text === null || !text.trimStart().startsWith("[")) return 1;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? Math.max(1, parsed.length) : 1;
  } catch {
    return 1;
  }
}

/** The transport's own answer to a body over the limit (spec "Body limit": 1 MB). */
function tooLarge(): Response {
  const error = { code: -32000, message: `Payload Too Large: Request body must not exceed ${MAX_MCP_BODY_BYTES} bytes` };
  return Response.json({ jsonrpc: "2.0", error, id: null }, { status: 413, headers: { "Cache-Control": "no-store" } });
}
