import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { api } from "./api/api";
import { assets } from "./assets/assets";
import { billing } from "./billing/billing";
import { health } from "./health/health";
import { licences } from "./licences/licences";
import { lookupRoutes } from "./lookup/lookup";
import { mcp } from "./mcp/endpoint";
import { authorize } from "./oauth/authorize";
import { discovery } from "./oauth/discovery";
import { portal } from "./portal/portal";
import { webAssets } from "./web/assets";
import { landing } from "./web/landing";
import { portalPages } from "./web/web";
import type { AppEnv } from "./env";
import { MISCONFIGURED, Misconfigured } from "./lib/errors";
import { unavailableIn } from "./lib/dependencies";
import { jsonError, plainText, retryLater } from "./lib/responses";

/** The HTTP face of the service: every route is mounted here; errors end here. */
export const app = new Hono<AppEnv>();

app.route("/", health);
app.route("/", licences);
app.route("/", assets);
app.route("/", portal);
app.route("/", billing);
app.route("/", api);
app.route("/", discovery);
app.route("/", authorize);
app.route("/", mcp);
app.route("/", webAssets);
app.route("/", portalPages);
// GET / with an HTML Accept only; anything else falls through to the lookup route below.
app.route("/", landing);
// A JSON client that misses a path gets a JSON answer, not a domain lookup's plain text.
for (const prefix of ["/v1/*", "/apiaas/*", "/api/*"])
  app.all(prefix, (c) => jsonError(c, "not_found", `No such endpoint: ${c.req.method} ${c.req.path}`));
// Last: GET /{domain} takes every path the routes above do not.
app.route("/", lookupRoutes);

app.notFound((c) => c.text("Not found", 404));

app.onError((error, c) => {
  // Middleware refusals (CSRF, body limits) carry their own response.
  if (error instanceof HTTPException) return error.getResponse();
  const unavailable = unavailableIn(error);
  if (unavailable) {
    console.error(`${unavailable.message} on ${c.req.method} ${c.req.path}`, unavailable.cause);
    return plainText("Service temporarily unavailable", 503, retryLater);
  }
  if (error instanceof Misconfigured) {
    console.error(`${c.req.method} ${c.req.path}: ${error.message}`);
    return plainText(MISCONFIGURED, 500);
  }
  // Detail goes to the logs only; the wire gets the spec's generic message.
  console.error(`unhandled error on ${c.req.method} ${c.req.path}`, error);
  return plainText("Internal server error", 500);
});
