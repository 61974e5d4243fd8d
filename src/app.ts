import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { apiReference, restApi } from "./api/api";
import { assets } from "./assets/assets";
import { billing, billingWebhook } from "./billing/billing";
import { health } from "./health/health";
import { licences } from "./licences/licences";
import { type AppEnv, requestContext } from "./lib/context";
import { MISCONFIGURED } from "./lib/errors";
import { jsonError, logFailure, plainText, retryLater } from "./lib/responses";
import { lookupRoutes } from "./lookup/routes";
import { mcp } from "./mcp/endpoint";
import { authorize } from "./oauth/authorize";
import { oauthEndpoints, wellKnown } from "./oauth/metadata";
import { loginOnly, portal } from "./portal/portal";
import { changesPage } from "./web/changes";
import { landing } from "./web/landing";
import { portalPages } from "./web/web";

/**
 * The HTTP face of the service, and its URL map: every sub-app is mounted at its prefix here.
 * The request context (request id, logger, database, clock) is built first for all of them;
 * errors end here. A warm lookup is answered before this app (src/index.ts).
 */
export const app = new Hono<AppEnv>();

app.use(requestContext);

app.route("/health", health);
app.route("/licences", licences);
// Public logo images (docs/interface.md, section 3).
app.route("/assets", assets);
// The portal's JSON sign-in and billing, under the paths docs/interface.md gives (section 4).
app.route("/apiaas", portal);
app.route("/api/v1/auth", portal);
app.route("/api/v1", loginOnly);
app.route("/apiaas/billing", billing);
app.route("/api/billing", billingWebhook);
// The REST API for secret keys, and its description (/openapi.json, /docs).
app.route("/v1", restApi);
app.route("/", apiReference);
// OAuth 2.1 for MCP clients: metadata, token and registration endpoints, sign-in and consent.
app.route("/.well-known", wellKnown);
app.route("/oauth", oauthEndpoints);
app.route("/authorize", authorize);
app.route("/mcp", mcp);
// The web app: the portal's pages and the landing page (GET / with an HTML Accept only;
// anything else at / falls through to the lookup).
app.route("/portal", portalPages);
// The public change log of owners' and operators' changes (docs/corrections.md).
app.route("/changes", changesPage);
app.route("/", landing);
// A JSON client that misses a path gets a JSON answer, not a domain lookup's plain text.
for (const prefix of ["/v1/*", "/apiaas/*", "/api/*"])
  app.all(prefix, (c) => jsonError(c, "not_found", `No such endpoint: ${c.req.method} ${c.req.path}`));
// Last: GET /{domain}, /ticker/{t} and /name/{n} take every path the routes above do not.
app.route("/", lookupRoutes);

app.notFound((c) => c.text("Not found", 404));

app.onError((error, c) => {
  // Middleware refusals (CSRF, body limits) carry their own response.
  if (error instanceof HTTPException) return error.getResponse();
  // Detail goes to the logs only; the wire gets the spec's generic message.
  const failure = logFailure(error, c.req.method, c.req.path);
  if (failure === "unavailable") return plainText("Service temporarily unavailable", 503, retryLater);
  return plainText(failure === "misconfigured" ? MISCONFIGURED : "Internal server error", 500);
});
