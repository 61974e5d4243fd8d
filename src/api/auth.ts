import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import { verifyKey, type VerifiedKey } from "../keys/verify";
import { createDb } from "../lib/db";
import { type ErrorCode, statusOf } from "../lib/errors";
import { consumeLookup } from "../limits/lookupLimits";

export type ApiEnv = { Bindings: Env; Variables: { key: VerifiedKey } };

export const apiError = (c: Context<ApiEnv>, code: ErrorCode, message: string, headers: Record<string, string> = {}) =>
  c.json({ error: { code, message } }, statusOf(code), { "Cache-Control": "no-store", ...headers });

/**
 * The REST API's door: a secret key as `Authorization: Bearer sk_…` (never in the URL), and
 * one request of the key's lookup limits per call, with the lookup's rate-limit headers.
 */
export const secretKey = createMiddleware<ApiEnv>(async (c, next) => {
  const bearer = /^Bearer[\t ]+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
  const key = bearer ? await verifyKey(createDb(c.env.DB), bearer) : null;
  if (!key || key.type !== "secret") return apiError(c, "unauthorized", "Send a secret key as Authorization: Bearer sk_…");

  const now = Date.now();
  const decision = await consumeLookup(c.env, key, { now, defer: (work) => c.executionCtx.waitUntil(work) });
  const limitHeaders = { "X-RateLimit-Remaining": String(decision.remaining), "X-RateLimit-Reset": String(Math.ceil(decision.resetAt / 1000)) };
  if (!decision.allowed) {
    const retryAfter = String(Math.max(1, Math.ceil((decision.resetAt - now) / 1000)));
    return apiError(c, "rate_limited", "Rate limit exceeded", { ...limitHeaders, "Retry-After": retryAfter });
  }
  c.set("key", key);
  await next();
  for (const [name, value] of Object.entries(limitHeaders)) c.res.headers.set(name, value);
});
