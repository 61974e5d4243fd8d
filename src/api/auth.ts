import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../lib/context";
import { carriesSecretKey, keyTypeOf, SECRET_KEY_IN_URL, visiblePrefix } from "../keys/format";
import { noteKeyUse } from "../keys/lastUsed";
import { unknownKeysRefusal, verifyAskedKey } from "../keys/unknownKeys";
import type { VerifiedKey } from "../keys/verify";
import { bearerToken, jsonError, rateLimitHeaders, retryAfter } from "../lib/responses";
import { consumeLookup } from "../limits/lookupLimits";

export type ApiEnv = AppEnv<{ key: VerifiedKey }>;

/**
 * The REST API's door: a secret key as `Authorization: Bearer sk_…` (never in the URL), and
 * one request of the key's lookup limits per call, with the lookup's rate-limit headers.
 */
export const secretKey = createMiddleware<ApiEnv>(async (c, next) => {
  // As on the lookup: a secret key anywhere in the URL is refused outright, even beside a
  // valid Authorization header (it is already in logs and histories; the caller must move it).
  if (carriesSecretKey(c.req.url)) return jsonError(c, "unauthorized", SECRET_KEY_IN_URL);
  const bearer = bearerToken(c.req.header("authorization"));
  const { db, defer } = c.var.ctx;
  const now = c.var.ctx.now();
  if (bearer && keyTypeOf(bearer)) c.var.ctx.keyPrefix = visiblePrefix(bearer);
  const key = bearer ? await verifyAskedKey(db, c.env, c.req.raw, bearer, defer, now) : null;
  if (key === "refused") return jsonError(c, "rate_limited", "Rate limit exceeded", unknownKeysRefusal(now));
  if (key?.type !== "secret") return jsonError(c, "unauthorized", "Send a secret key as Authorization: Bearer sk_…");

  const decision = await consumeLookup(c.env, key, { now, defer });
  const limitHeaders = rateLimitHeaders(decision);
  if (!decision.allowed)
    return jsonError(c, "rate_limited", "Rate limit exceeded", { ...limitHeaders, "Retry-After": retryAfter(decision.resetAt, now) });
  noteKeyUse(db, key.id, defer, now);
  c.set("key", key);
  await next();
  for (const [name, value] of Object.entries(limitHeaders)) c.res.headers.set(name, value);
});

/**
 * A REST route behind a secret key: the key's security scheme in the document and the
 * `secretKey` door in front of the handler, declared once for every route.
 */
export function secretKeyRoute<const R extends Omit<RouteConfig, "security" | "middleware">>(route: R) {
  return createRoute({ ...route, security: [{ secretKey: [] }], middleware: [secretKey] as const });
}
