import type { Context, ErrorHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { RETRY_AFTER_SECONDS, unavailableIn } from "./dependencies";
import { codeOfStatus, type ErrorCode, MISCONFIGURED, Misconfigured, statusOf } from "./errors";
import { currentRequestId, log } from "./log";

/** The lookup and asset routes answer errors in plain text (spec, Errors: domain lookup). */
export function plainText(message: string, status: number, headers: Record<string, string> = {}): Response {
  return new Response(message, { status, headers: { "Content-Type": "text/plain; charset=utf-8", ...headers } });
}

/**
 * The one error body of every JSON surface (REST, portal, billing, /mcp at the HTTP level):
 * `{"error": "<message>", "code": "<code>", "requestId": "<id>"}`. The message sits in `error`
 * because the spec gives /mcp's errors that shape ("JSON object `error`: `Authorization
 * required`", docs/interface.md); `code` is one of the closed list in errors.ts and decides
 * the status; `requestId` is the id on the request's log lines and its `X-Request-Id` header,
 * what an operator asks for to find what happened. Never cached.
 */
export interface ErrorBody {
  error: string;
  code: ErrorCode;
  requestId?: string;
}

export function jsonError<C extends ErrorCode>(c: Context, code: C, message: string, headers: Record<string, string> = {}) {
  const requestId = currentRequestId();
  const body: ErrorBody = requestId ? { error: message, code, requestId } : { error: message, code };
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
    if (error instanceof HTTPException && error.status < 500) {
      // hono/csrf refuses with a bare 403: a form or plain-text post from another site.
      const message = error.message || (error.status === 403 ? "Cross-site request refused" : "Request refused");
      return jsonError(c, codeOfStatus(error.status), message);
    }
    const failure = logFailure(error, c.req.method, c.req.path);
    if (failure === "unavailable") return jsonError(c, "unavailable", unavailableMessage, retryLater);
    return jsonError(c, "internal", failure === "misconfigured" ? MISCONFIGURED : genericMessage);
  };
}

/**
 * Logs a failure that reached the edge of a route, by kind: a dependency that did not answer
 * (503), a configuration that does not validate, or anything else (500). The detail goes to
 * the logs only; the caller answers with the kind's generic message.
 */
export function logFailure(error: unknown, method: string, path: string): "unavailable" | "misconfigured" | "unexpected" {
  const unavailable = unavailableIn(error);
  if (unavailable) {
    log.error("dependency_unavailable", { dependency: unavailable.dependency, method, path, error: unavailable.cause });
    return "unavailable";
  }
  if (error instanceof Misconfigured) {
    log.error("misconfigured", { method, path, detail: error.message });
    return "misconfigured";
  }
  log.error("unhandled_error", { method, path, error });
  return "unexpected";
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
