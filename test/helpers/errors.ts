import { expect } from "vitest";

/**
 * A JSON error body (`{error, code, requestId}`), its request id checked against the answer's
 * `X-Request-Id` header, and returned without it: what a test compares is the rest.
 */
export async function errorBody(response: Response): Promise<Record<string, unknown>> {
  const { requestId, ...body } = (await response.json()) as Record<string, unknown>;
  expect(requestId, "the error body names its request").toMatch(/^[\w-]{1,64}$/);
  expect(requestId, "the body's request id is the answer's X-Request-Id").toBe(response.headers.get("x-request-id"));
  return body;
}
