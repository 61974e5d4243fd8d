import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { errorCodeList } from "../../src/lib/errors";
import { rest, secretKeyFor } from "../api/helpers";
import { fetchWith } from "../lookup/helpers";
import { errorBody } from "../helpers/errors";

/**
 * Every JSON surface (REST, portal, billing, /mcp at the HTTP level) answers errors in one
 * shape, `{error: <message>, code: <code>}`, never cached, whatever produced them.
 */
const BASE = "https://logos.test";

async function expectJsonError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  expect(response.headers.get("cache-control")).toBe("no-store");
  const body = (await errorBody(response)) as { error: unknown; code: unknown };
  expect(Object.keys(body).sort()).toEqual(["code", "error"]);
  expect(body.code).toBe(code);
  expect(typeof body.error).toBe("string");
  return body.error as string;
}

/** A D1 binding that fails every statement, as an outage would. */
const brokenDb = {
  prepare: () => {
    throw new Error("D1_ERROR: the database is unreachable (secret detail)");
  },
  batch: () => Promise.reject(new Error("D1_ERROR: the database is unreachable (secret detail)")),
} as unknown as D1Database;

describe("one JSON error edge", () => {
  it("REST 400 and 404 answers carry no-store", async () => {
    const { key } = await secretKeyFor();
    await expectJsonError(await rest("/v1/companies/lookup?domain=not a domain", key), 400, "invalid_argument");
    await expectJsonError(await rest("/v1/companies/424242", key), 404, "not_found");
  });

  it("a billing body over 1 MB is 413 with its own code", async () => {
    const response = await exports.default.fetch(`${BASE}/apiaas/billing/webhook`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Stripe-Signature": "t=1,v1=00" },
      body: "x".repeat(1024 * 1024 + 1),
    });
    await expectJsonError(response, 413, "payload_too_large");
  });

  it.each([
    ["REST", "/v1/companies/search?q=acme"],
    ["portal", "/apiaas/whoami"],
    ["billing", "/apiaas/billing/status"],
  ])("%s answers an unexpected failure with a JSON 500 that says nothing of the cause", async (_, path) => {
    const { key } = await secretKeyFor();
    const init = { headers: { Authorization: `Bearer ${key}`, Cookie: "__Host-session=abc" } };
    // The key is verified (and cached) on the working database first; then the database goes away.
    await rest("/v1/usage", key);
    const response = await fetchWith({ DB: brokenDb }, `${BASE}${path}`, init);
    const message = await expectJsonError(response, 500, "internal");
    expect(message).not.toMatch(/D1|secret detail/);
  });

  it("a JSON client that misses an endpoint gets a JSON 404", async () => {
    for (const path of ["/v1/nothing", "/apiaas/nothing", "/api/v1/nothing"]) {
      await expectJsonError(await exports.default.fetch(`${BASE}${path}`), 404, "not_found");
    }
  });

  it("the OpenAPI document names exactly the service's error codes", async () => {
    const document = (await (await exports.default.fetch(`${BASE}/openapi.json`)).json()) as {
      components: { schemas: { Error: { properties: { code: { enum: string[] } } } } };
    };
    expect(document.components.schemas.Error.properties.code.enum).toEqual(errorCodeList);
  });

  it("row 14: what the service logs about a failed request carries its path, never its query", async () => {
    const { key } = await secretKeyFor();
    await rest("/v1/usage", key);
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      await fetchWith({ DB: brokenDb }, `${BASE}/v1/companies/search?q=private-query&token=pk_${"x".repeat(32)}`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      const lines = logged.mock.calls.map((args) => args.map(String).join(" "));
      expect(lines.some((line) => line.includes("/v1/companies/search"))).toBe(true);
      expect(lines.join("\n")).not.toMatch(/private-query|pk_x/);
    } finally {
      logged.mockRestore();
    }
  });
});
