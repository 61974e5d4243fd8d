/**
 * One closed set of failure codes for the whole service. Expected failures travel as values
 * (`Result`); only the edge of a route, tool or command turns them into its wire format.
 */
export const errorCodes = {
  invalid_argument: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof errorCodes;

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

export function statusOf(code: ErrorCode): (typeof errorCodes)[ErrorCode] {
  return errorCodes[code];
}
