import { cors } from "hono/cors";
import { requestAddress } from "../lib/address";
import { guardedOutbound } from "../lib/outboundGuard";
import { CLIENT_METADATA_URLS } from "../lib/strangerUrls";
import { eq } from "drizzle-orm";
import {
  classifyInboundRequest,
  isInitializeRequest,
  isJSONRPCRequest,
  isJsonContentType,
  localhostAllowedOrigins,
  originValidationResponse,
  readRequestBody,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/server";
import { Hono } from "hono";
import { accounts, apiClients } from "../../schema";
import { publicBase } from "../env";
import type { AppEnv } from "../lib/context";
import { localHostOnly } from "../lib/localHostOnly";
import { planLimits } from "../limits/plans";
import { keyTypeOf } from "../keys/format";
import { catalogueReader } from "../lib/db";
import { dependency } from "../lib/dependencies";
import { bearerToken, jsonError, jsonErrorHandler, retryAfter } from "../lib/responses";
import { countMcpRequest, mcpWindows, type Toolset } from "../limits/mcpLimits";
import { authorizationServer, type GrantProps, MCP_SCOPE, resourceOf } from "../oauth/authorizationServer";
import { protectedResourceMetadataUrl } from "../oauth/metadata";
import type { McpCaller } from "./context";
import { MAX_REQUEST_BASE64_CHARS } from "./delivery";
import { overridesOf } from "../corrections/overrides";
import type { LogoOverride } from "../../schema";
import { MAX_MCP_BODY_BYTES, serveMcp } from "./server";
import { DAY_S } from "../lib/time";

/**
 * /mcp at the HTTP level (spec "Agent endpoint, HTTP level"): everything that happens before
 * the MCP server sees the request, each refusal with the spec's status and JSON body.
 *
 *   no bearer token, or an API key
 *   (pk_/sk_) where a token belongs       401 Authorization required
 *   a bearer not shaped like our tokens   401 Authorization required (challenge: invalid_token)
 *   a token of our shape the authorization
 *   server does not accept: unknown,
 *   expired, revoked, or issued for
 *   another resource                      401 Invalid or expired token
 *   a token without the `logos` scope     403 Insufficient scope… (challenge: insufficient_scope)
 *   account without an API client         403 No API client associated with this account
 *   plan (or account) without MCP access  403 Your plan does not include MCP access
 *   a JSON-RPC batch the transport would
 *   refuse whole                          400 its JSON-RPC error, counting nothing
 *   per-minute plan limit                 429 Rate limit exceeded, Retry-After: 60
 *   Free daily cap                        429 Daily limit of <n> requests exceeded. …
 *   anything unexpected                   500 Internal MCP server error (detail in logs only)
 *
 * Before all of it, a browser page on another site (DNS rebinding) is turned away: a local
 * server answers only to local host names (localHostOnly), and a request with an Origin must
 * come from this server's own host (or, on a local server, from a local page such as the MCP
 * Inspector). Agents send no Origin. A page admitted gets CORS, its preflight free.
 *
 * The 401s and the 403 for scope carry `WWW-Authenticate: Bearer resource_metadata="…"` so
 * clients can discover the authorization server. Each call that passes these checks counts
 * one `mcp_request`, a batch one per request in it (see `chargeFor`).
 */
/** Mounted at `/mcp` (src/app.ts). */
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

/**
 * Pages: a browser page on another site is turned away (above); a page this endpoint admits (its
 * own site, or a local page on a local server) gets CORS on every answer, the 401's challenge
 * readable, and a preflight answered before authentication (a preflight carries no token).
 */
mcp.use(
  "/",
  localHostOnly,
  async (c, next) => {
    const host = new URL(publicBase(c.env, c.req.url)).hostname;
    const foreign = originValidationResponse(c.req.raw, localhostAllowedOrigins().includes(host) ? localhostAllowedOrigins() : [host]);
    if (foreign) return foreign;
    await next();
  },
  // Whatever Origin is left is admitted: CORS for it, agents (no Origin) untouched.
  cors({
    origin: (origin) => origin || null,
    allowMethods: ["POST"],
    exposeHeaders: ["WWW-Authenticate", "Retry-After", "Mcp-Session-Id"],
    maxAge: DAY_S,
  }),
);

mcp.all("/", async (c) => {
  const base = publicBase(c.env, c.req.url);
  const challenge = `Bearer realm="OAuth", resource_metadata="${protectedResourceMetadataUrl(base)}", scope="${MCP_SCOPE}"`;

  const token = bearerToken(c.req.header("authorization"));
  // An API key is not a token; whether a token is valid is the authorization server's to say.
  if (!token || keyTypeOf(token) !== null) return jsonError(c, "unauthorized", "Authorization required", { "WWW-Authenticate": challenge });

  // RFC 6750 §3.1: a malformed token is `invalid_token` too; the spec keeps "Invalid or
  // expired token" for tokens that were ours (expired, revoked), so one that never could have
  // been is answered as no credential at all.
  const invalidChallenge = { "WWW-Authenticate": `${challenge}, error="invalid_token"` };
  if (!ISSUED_TOKEN.test(token)) return jsonError(c, "unauthorized", "Authorization required", invalidChallenge);
  const invalid = () => jsonError(c, "unauthorized", "Invalid or expired token", invalidChallenge);
  const validated = await dependency(
    "authorization server",
    guardedOutbound(CLIENT_METADATA_URLS, () => authorizationServer(base).validateToken<GrantProps>(resourceOf(base), token, c.env)),
  );
  if (!validated) return invalid();
  // The grant is what the user approved: a token without `logos` (an older grant of only
  // offline_access, or one downscoped at the token endpoint) may not use the tools. RFC 6750
  // §3.1: 403 insufficient_scope naming the scope, which MCP clients re-authorize for.
  if (!validated.scope?.includes(MCP_SCOPE)) {
    return jsonError(c, "forbidden", `Insufficient scope: this token does not grant "${MCP_SCOPE}"`, {
      "WWW-Authenticate": `${challenge}, error="insufficient_scope"`,
    });
  }

  const db = c.var.ctx.db;
  const accountId = validated.props.accountId;
  const [account, client] = await Promise.all([
    db.query.accounts.findFirst({ where: eq(accounts.id, accountId), columns: { plan: true, mcpAccess: true, emailConfirmedAt: true } }),
    db.query.apiClients.findFirst({ where: eq(apiClients.accountId, accountId), columns: { id: true }, orderBy: apiClients.createdAt }),
  ]);
  // A token outliving its account is as good as revoked.
  if (!account) return invalid();
  if (!client) return jsonError(c, "forbidden", "No API client associated with this account");
  if (!planLimits[account.plan].mcp.access || !account.mcpAccess) return jsonError(c, "forbidden", "Your plan does not include MCP access");

  // Read here (within the spec's 1 MB) so that a JSON-RPC batch counts each of its requests:
  // one call of 20 tools/call must not cost what one tool call costs.
  const body = c.req.method === "POST" ? await readRequestBody(c.req.raw, MAX_MCP_BODY_BYTES) : { tooLarge: false as const, text: null };
  if (body.tooLarge) return tooLarge();
  const charge = chargeFor(body.text, c.req.raw.headers);
  if (!charge.ok) return batchRefused(charge.error);
  const toolset: Toolset = c.req.query("toolset") === "three" ? "three" : "seven";
  const now = Date.now();
  const decision = await countMcpRequest(c.env, accountId, account.plan, toolset, now, charge.messages);
  if (!decision.allowed) {
    if (decision.dailyLimit !== undefined) {
      return jsonError(c, "rate_limited", `Daily limit of ${decision.dailyLimit} requests exceeded. Upgrade your plan for higher limits.`, {
        "Retry-After": retryAfter(decision.resetAt, now),
      });
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
    emailConfirmed: account.emailConfirmedAt !== null,
    address: requestAddress(c.req.raw),
    toolset,
    base,
    requests: window ? { current: window.limit - decision.remaining, limit: window.limit } : null,
  };
  const request = body.text === null ? c.req.raw : new Request(c.req.raw, { body: body.text });
  const catalogue = catalogueReader(c.env.DB);
  let overrides: Promise<ReadonlyMap<string, LogoOverride>> | undefined;
  return serveMcp(request, {
    caller,
    env: c.env,
    db,
    catalogue,
    overrides: () => (overrides ??= overridesOf(catalogue, accountId)),
    defer: c.var.ctx.defer,
    base64Left: MAX_REQUEST_BASE64_CHARS,
  });
});

/** The SDK transport's limit on the messages of one batch (its MAX_BATCH_SIZE, not exported). */
export const MAX_BATCH_MESSAGES = 100;

type JsonRpcError = { code: number; message: string; data?: unknown };
export type Charge = { ok: true; messages: number } | { ok: false; error: JsonRpcError };

/**
 * What a body costs in `mcp_request`s. Every call costs one (spec: "One MCP HTTP call consumes
 * one request"), malformed bodies and lone notifications included; a JSON-RPC batch costs one
 * per request in it, at least one, since its notifications and responses run no tool. A batch
 * the MCP transport will refuse whole is refused here first, costing nothing, with the error
 * the SDK would answer: it ran nothing, and 101 tools/list must not cost 101 before a 400. A
 * batch it will refuse on its headers alone costs one, as any call.
 */
export function chargeFor(text: string | null, headers: Headers): Charge {
  if (text === null || !text.trimStart().startsWith("[")) return { ok: true, messages: 1 };
  let batch: unknown;
  try {
    batch = JSON.parse(text);
  } catch {
    return { ok: true, messages: 1 };
  }
  if (!Array.isArray(batch)) return { ok: true, messages: 1 };
  // The SDK's entry first (an empty batch, an element that is no JSON-RPC message, a
  // 2026-07-28 request, which never comes in a batch), then its stateless transport's own rules.
  const classified = classifyInboundRequest({ httpMethod: "POST", body: batch });
  if (classified.kind === "reject") {
    return {
      ok: false,
      error: { code: classified.code, message: classified.message, ...(classified.data === undefined ? {} : { data: classified.data }) },
    };
  }
  if (batch.length > MAX_BATCH_MESSAGES)
    return { ok: false, error: { code: -32600, message: `Invalid Request: Batch must not exceed ${MAX_BATCH_MESSAGES} messages` } };
  if (batch.length > 1 && batch.some((message) => isInitializeRequest(message))) {
    return { ok: false, error: { code: -32600, message: "Invalid Request: Only one initialization request is allowed" } };
  }
  if (refusedOnHeaders(headers)) return { ok: true, messages: 1 };
  return { ok: true, messages: Math.max(1, batch.filter((message) => isJSONRPCRequest(message)).length) };
}

/**
 * Whether the transport refuses a batch (always the 2025-era path: a 2026-07-28 request never
 * comes in one) on its headers, before a message runs: a Content-Type that is not JSON (415),
 * an Accept without both JSON and an event stream (406), an MCP-Protocol-Version it does not
 * speak (400). Should it accept one of these after all, the batch ran for the price of one call.
 */
function refusedOnHeaders(headers: Headers): boolean {
  const accept = headers.get("accept") ?? "";
  const version = headers.get("mcp-protocol-version");
  return (
    !isJsonContentType(headers.get("content-type")) ||
    !accept.includes("application/json") ||
    !accept.includes("text/event-stream") ||
    (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
  );
}

/** A refused batch, as the transport answers it: 400 and a JSON-RPC error without an id. */
function batchRefused(error: JsonRpcError): Response {
  return Response.json({ jsonrpc: "2.0", error, id: null }, { status: 400, headers: { "Cache-Control": "no-store" } });
}

/** The transport's own answer to a body over the limit (spec "Body limit": 1 MB). */
function tooLarge(): Response {
  const error = { code: -32000, message: `Payload Too Large: Request body must not exceed ${MAX_MCP_BODY_BYTES} bytes` };
  return Response.json({ jsonrpc: "2.0", error, id: null }, { status: 413, headers: { "Cache-Control": "no-store" } });
}
