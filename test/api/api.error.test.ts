import { describe, expect, it } from "vitest";
import { emptySite } from "../discovery/helpers";
import { rest, secretKeyFor, stripe } from "./helpers";
import { errorBody } from "../helpers/errors";

describe("REST API input errors", () => {
  it.each([
    ["/v1/companies/search", "q is required"],
    ["/v1/companies/search?q=%20", "q must not be empty"],
    [`/v1/companies/search?q=${"x".repeat(501)}`, "q must be at most 500 characters"],
    ["/v1/companies/search?q=a&limit=0", "limit must be a whole number from 1 to 50"],
    ["/v1/companies/search?q=a&limit=abc", "limit must be a whole number from 1 to 50"],
    ["/v1/companies/search?q=a&limit=0x2", "limit must be a whole number from 1 to 50"],
    ["/v1/companies/search?q=a&limit=1e0", "limit must be a whole number from 1 to 50"],
    ["/v1/companies/search?q=a&limit=2.0", "limit must be a whole number from 1 to 50"],
    ["/v1/companies/search?q=a&limit=51", "limit must be a whole number from 1 to 50"],
    ["/v1/companies/abc", "companyId must be a positive whole number"],
    ["/v1/companies/0", "companyId must be a positive whole number"],
    ["/v1/companies/1e0", "companyId must be a positive whole number"],
    ["/v1/companies/0x1", "companyId must be a positive whole number"],
    ["/v1/companies/%201", "companyId must be a positive whole number"],
    ["/v1/companies/1234567890123456", "companyId must be a positive whole number"],
    ["/v1/companies/search?q=a&q=b", "q must be given once"],
    ["/v1/companies/lookup?ticker=", "ticker must not be empty"],
    ["/v1/companies/lookup?name=%20", "name must not be empty"],
    ["/v1/companies/lookup?domain=", "domain must not be empty"],
    ["/v1/companies/lookup?domain=a.com&domain=b.com", "domain must be given once"],
    ["/v1/companies/lookup", "give exactly one of domain, ticker or name"],
    ["/v1/companies/lookup?domain=a.com&name=a", "give exactly one of domain, ticker or name"],
    ["/v1/companies/lookup?domain=not%20a%20domain", "Invalid domain format"],
    [`/v1/companies/lookup?domain=${"a".repeat(250)}.com`, "domain must be at most 253 characters"],
    [`/v1/companies/lookup?ticker=${"A".repeat(33)}`, "ticker must be at most 32 characters"],
    [`/v1/companies/lookup?name=${"n".repeat(501)}`, "name must be at most 500 characters"],
  ])("%s → 400 %s", async (path, message) => {
    const { key } = await secretKeyFor();
    const response = await rest(path, key);
    expect(response.status).toBe(400);
    expect(await errorBody(response)).toEqual({ error: message, code: "invalid_argument" });
  });

  it("unknown companies → 404", async () => {
    const { key } = await secretKeyFor();
    expect(await errorBody(await rest("/v1/companies/999999", key))).toEqual({
      error: "No company found with ID 999999",
      code: "not_found",
    });
    expect((await rest(`/v1/companies/lookup?domain=${await emptySite()}`, key)).status).toBe(404);
    expect((await rest("/v1/companies/lookup?ticker=ZZZZ", key)).status).toBe(404);
    // EXCHANGE:SYMBOL at most: more after it is not the symbol's company.
    await stripe();
    expect((await rest("/v1/companies/lookup?ticker=NYSE:STRP", key)).status).toBe(200);
    expect((await rest("/v1/companies/lookup?ticker=NYSE:STRP:JUNK", key)).status).toBe(404);
  });
});
