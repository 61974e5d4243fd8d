import type { Context } from "hono";
import { type ErrorCode, statusOf } from "./errors";

/** The lookup and asset routes answer errors in plain text (spec, Errors: domain lookup). */
export function plainText(message: string, status: number, headers: Record<string, string> = {}): Response {
  return new Response(message, { status, headers: { "Content-Type": "text/plain; charset=utf-8", ...headers } });
}

/** The portal, billing and REST routes answer errors as `{error: {code, message}}`, never cached. */
export function jsonError(c: Context, code: ErrorCode, message: string, headers: Record<string, string> = {}): Response {
  return c.json({ error: { code, message } }, statusOf(code), { "Cache-Control": "no-store", ...headers });
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization ? /^Bearer[\t ]+(\S+)$/i.exec(authorization)?.[1] : undefined;
}

/** A limiter's decision as the headers every limited route sends. */
export function rateLimitHeaders(decision: { remaining: number; resetAt: number }): Record<string, string> {
  return {
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(Math.ceil(decision.resetAt / 1000)),
  };
}

/** Seconds until a refused window reopens, at least one: the Retry-After of a 429. */
export function retryAfter(resetAt: number, now: number): string {
  return String(Math.max(1, Math.ceil((resetAt - now) / 1000)));
}
