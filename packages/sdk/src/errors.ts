/**
 * What the SDK throws: one class per kind of failure, all `LogoLookupError`s, each with the
 * HTTP status (when there was an answer) and the service's error code and message.
 */
export class LogoLookupError extends Error {
  override readonly name: string = "LogoLookupError";
  constructor(
    message: string,
    readonly status: number | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

/** No secret key or base URL was given, or an option is not valid (thrown by the constructor). */
export class ConfigurationError extends LogoLookupError {
  override readonly name = "ConfigurationError";
}
/**
 * 400: the request itself is wrong (an invalid domain, size, or parameter), as the service
 * answered or the SDK found before asking (a size or limit out of bounds, a domain that is no
 * host name, such as a name without a dot, a URL or a string no URL can carry), or an answer
 * that is not a logo.
 */
export class InvalidRequestError extends LogoLookupError {
  override readonly name = "InvalidRequestError";
}
/** 401: the secret key is missing, unknown or revoked. */
export class AuthenticationError extends LogoLookupError {
  override readonly name = "AuthenticationError";
}
/** 403: the key may not do this. */
export class PermissionError extends LogoLookupError {
  override readonly name = "PermissionError";
}
/** 404: no logo or company for what was asked. */
export class NotFoundError extends LogoLookupError {
  override readonly name = "NotFoundError";
}
/** 451: the domain's logos were taken down at its owner's request; the message gives the reason. */
export class TakenDownError extends LogoLookupError {
  override readonly name = "TakenDownError";
}
/** 429 after the retries were spent (or when waiting would take too long). */
export class RateLimitError extends LogoLookupError {
  override readonly name = "RateLimitError";
  constructor(
    message: string,
    /** Seconds the service asked to wait. */
    readonly retryAfter: number | null,
    /** When the window resets (Unix milliseconds), if the service said. */
    readonly resetAt: number | null,
  ) {
    super(message, 429, "rate_limited");
  }
}
/**
 * 5xx after the retries were spent (at once when its Retry-After exceeds maxRetryDelayMs), or
 * an answer the service never gives (a redirect, a body that is not its JSON): status 502.
 */
export class ServerError extends LogoLookupError {
  override readonly name = "ServerError";
}
/** The request never got an answer (DNS, connection, timeout). */
export class NetworkError extends LogoLookupError {
  override readonly name = "NetworkError";
  constructor(
    message: string,
    override readonly cause: unknown,
  ) {
    super(message);
  }
}

/**
 * The service's error code for each status (src/lib/errors.ts, copied: the SDK is built on its
 * own, without the Worker's code). The lookup answers errors in plain text, with no code of
 * their own; its status says the same.
 */
const CODES: Record<number, string> = {
  400: "invalid_argument",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "payload_too_large",
  429: "rate_limited",
  451: "taken_down",
  500: "internal",
  503: "unavailable",
};

function codeOfStatus(status: number): string {
  return CODES[status] ?? (status >= 500 ? "internal" : "invalid_argument");
}

/** The error for an answer's status; `code` is the service's own where its answer named one, else the status's. */
export function errorForStatus(status: number, message: string, code: string | null): LogoLookupError {
  code ??= codeOfStatus(status);
  if (status === 400) return new InvalidRequestError(message, status, code);
  if (status === 401) return new AuthenticationError(message, status, code);
  if (status === 403) return new PermissionError(message, status, code);
  if (status === 404) return new NotFoundError(message, status, code);
  if (status === 451) return new TakenDownError(message, status, code);
  if (status >= 500) return new ServerError(message, status, code);
  return new LogoLookupError(message, status, code);
}
