import { describe, expect, it } from "vitest";
import { addAccount, addKey } from "../helpers/catalogue";
import { freezeClock } from "../helpers/clock";
import { rest, secretKeyFor, stripe } from "./helpers";
import { errorBody } from "../helpers/errors";

const PATHS = ["/v1/companies/search?q=stripe", "/v1/companies/1", "/v1/companies/lookup?domain=stripe.com", "/v1/usage"];

describe("REST API access", () => {
  it.each(PATHS)("%s: 401 without a key, with a publishable key or a revoked-looking key", async (path) => {
    const account = await addAccount();
    const publishable = await addKey(account.id, { type: "publishable" });
    for (const response of [
      await rest(path),
      await rest(path, publishable),
      await rest(path, "sk_0000000000000000000000000000000000000"),
    ]) {
      expect(response.status).toBe(401);
      expect(await errorBody(response)).toEqual({ error: "Send a secret key as Authorization: Bearer sk_…", code: "unauthorized" });
    }
  });

  it.each(PATHS)("%s: 401 for a secret key anywhere in the URL, even beside a valid Authorization header", async (path) => {
    const { key } = await secretKeyFor();
    const encoded = `${key.slice(0, 2)}%5F${key.slice(3)}`;
    const join = path.includes("?") ? "&" : "?";
    // In the query, encoded or not; in the path, encoded, beside a malformed escape.
    const inPath = `/v1/companies/${encoded}?q=100%`;
    for (const url of [
      `${path}${join}token=${key}`,
      `${path}${join}key=${encoded}`,
      `${path}${join}${key}`,
      `${path}${join}q=100%&k=${encoded}`,
      inPath,
    ]) {
      for (const response of [await rest(url), await rest(url, key)]) {
        expect(response.status).toBe(401);
        expect(await errorBody(response)).toEqual({
          error: "Secret keys (sk_…) must not be sent in URLs; send them in the Authorization header",
          code: "unauthorized",
        });
      }
    }
    // The key itself is good: from the header alone, the same call is answered.
    const { companyId } = await stripe();
    expect((await rest(path.replace("/v1/companies/1", `/v1/companies/${companyId}`), key)).status).toBe(200);
  });

  it("each call counts against the key's per-minute limit: 429 with Retry-After past it", async () => {
    freezeClock({ secondsIntoMinute: 20 });
    await stripe();
    const { key } = await secretKeyFor("launch", { perMinute: 3 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await rest("/v1/companies/search?q=stripe", key)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await rest("/v1/usage", key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("40");
    expect(await errorBody(refused)).toEqual({ error: "Rate limit exceeded", code: "rate_limited" });
  });
});
