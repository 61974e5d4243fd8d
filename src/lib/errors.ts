/**
 * One closed set of failure codes for the whole service. Expected failures travel as values
 * (`Result`); only the edge of a route, tool or command turns them into its wire format
 * (src/lib/responses.ts for HTTP).
 */
export const errorCodes = {
  invalid_argument: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  /** The domain's logos were taken down at its owner's request (RFC 7725). */
  taken_down: 451,
  internal: 500,
  /** A dependency (database, storage, a limiter) did not answer; retrying may help. */
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorCodes;
export type ErrorStatus = (typeof errorCodes)[ErrorCode];

/** The codes as a list, for schemas (the REST API's OpenAPI document names exactly these). */
export const errorCodeList = Object.keys(errorCodes) as [ErrorCode, ...ErrorCode[]];

export interface AppError {
  code: ErrorCode;
  message: string;
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: AppError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = (code: ErrorCode, message: string): { ok: false; error: AppError } => ({
  ok: false,
  error: { code, message },
});

export function statusOf<C extends ErrorCode>(code: C): (typeof errorCodes)[C] {
  return errorCodes[code];
}

/** The code an HTTP status stands for, where a status is all there is (middleware refusals). */
export function codeOfStatus(status: number): ErrorCode {
  const found = (Object.entries(errorCodes) as [ErrorCode, number][]).find(([, s]) => s === status);
  return found ? found[0] : status >= 500 ? "internal" : "invalid_argument";
}

/** Vars that do not validate (src/env.ts): every route's error handler answers `500 Service misconfigured`, naming nothing. */
export { MISCONFIGURED, Misconfigured } from "../env";
