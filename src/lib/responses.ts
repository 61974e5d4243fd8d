import type { Context, ErrorHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { RETRY_AFTER_SECONDS, unavailableIn } from "./dependencies";
import { codeOfStatus, type ErrorCode, MISCONFIGURED, Misconfigured, statusOf } from "./errors";

/** The lookup and asset routes answer errors in plain text (spec, Errors: domain lookup). */
export function plainText(message: string, status: number, headers: Record<string, string> = {}): Response {
  return new Response(message, { status, headers: { "Content-Type": "text/plain; charset=utf-8", ...headers } });
}

/**
 * The one error body of every JSON surface (REST, portal, billing, /mcp at the HTTP level):
 * `{"error": "<message>", "code": "<code>"}`. The message sits in `error` because the spec
 * gives /mcp's errors that shape ("JSON object `error`: `Authorization required`"); `code` is
 * one of the closed list in errors.ts and decides the status. Never cached.
 */
export interface ErrorBody {
  error: string;
  code: ErrorCode;
}

export function jsonError<C extends ErrorCode>(c: Context, code: C, message: string, headers: Record<string, string> = {}) {
  const body: ErrorBody = { error: message, code };
  return c.json(body, statusOf(code), { "Cache-Control": "no-store", ...headers });
}

/** What a client should do about a dependency that failed: wait a little and retry. */
export const retryLater = { "Retry-After": String(RETRY_AFTER_SECONDS) };

/**
 * The error handler of the JSON routers: a middleware refusal (CSRF, body limit) keeps its
 * status with the JSON body; a failed dependency is a 503 to retry; anything else is a 500.
 * The detail goes to the logs only.
 */
export function jsonErrorHandler(
  genericMessage: string,
  unavailableMessage = "Service temporarily unavailable. Try again later",
): ErrorHandler {
  return (error, c) => {
    const unavailable = unavailableIn(error);
    if (unavailable) {
      console.error(`${unavailable.message} on ${c.req.method} ${c.req.path}`, unavailable.cause);
      return jsonError(c, "unavailable", unavailableMessage, retryLater);
    }
    if (error instanceof Misconfigured) {
      console.error(`${c.req.method} ${c.req.path}: ${error.message}`);
      return jsonError(c, "internal", MISCONFIGURED);
    }
    if (error instanceof HTTPException && error.status < 500) {
      // hono/csrf refuses with a bare 403: a form or plain-text post from another site.
      const message = error.message || (error.status === 403 ? "Cross-site request refused" : "Request refused");
      return jsonError(c, codeOfStatus(error.status), message);
    }
    console.error(`unhandled error on ${c.req.method} ${c.req.path}`, error);
    return jsonError(c, "internal", genericMessage);
  };
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
