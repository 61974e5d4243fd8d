import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fetchWith } from "./lookup/helpers";

describe("GET /health", () => {
  it("answers 200 when the database and the bucket are reachable", async () => {
    const response = await exports.default.fetch("https://logos.test/health");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({ status: "ok", database: "ok", storage: "ok", configuration: "ok" });
  });

  it("row 11: a deployment missing production secrets says which, and what fails without them, never a value", async () => {
    const deployed = {
      PUBLIC_BASE_URL: "https://logos.example.com",
      STRIPE_SECRET_KEY: undefined,
      STRIPE_WEBHOOK_SECRET: undefined,
      ANTHROPIC_API_KEY: undefined,
    };
    const response = await fetchWith(deployed, "https://logos.example.com/health");
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; configuration: string; problems: string[] };
    expect(body.status).toBe("degraded");
    expect(body.configuration).toBe("incomplete");
    expect(body.problems).toEqual([
      "STRIPE_SECRET_KEY is not set: checkout and the token exchange fail",
      "STRIPE_WEBHOOK_SECRET is not set: Stripe's webhooks are refused, so plans never change",
    ]);
    expect(JSON.stringify(body)).not.toContain(env.SIGNED_URL_SECRET!);
  });

  it("a deployment without the optional file API key says what is unavailable, and stays ok", async () => {
    const response = await fetchWith(
      { PUBLIC_BASE_URL: "https://logos.example.com", ANTHROPIC_API_KEY: undefined },
      "https://logos.example.com/health",
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: "ok",
      database: "ok",
      storage: "ok",
      configuration: "ok",
      optional: ["ANTHROPIC_API_KEY is not set: get_logo files fall back to base64 and insert_logo fails"],
    });
  });

  it("a local server (no public base URL) needs no secrets", async () => {
    const response = await fetchWith({ STRIPE_SECRET_KEY: undefined }, "http://localhost:8787/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "ok" });
  });

  it("vars that do not validate fail every lookup, so they are a 503 naming each var, never its value", async () => {
    const invalid = { LOOKUP_RESPONSE: "foo", CDN_URL: "cdn.example.com", DISCOVERY_MISS_TTL_S: "-5", DISCOVERY_BUDGET_MS: "abc" };
    const response = await fetchWith(invalid, "https://logos.test/health");
    expect(response.status).toBe(503);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = (await response.json()) as { problems: string[] };
    expect(body).toMatchObject({ status: "degraded", database: "ok", configuration: "invalid" });
    expect(body.problems.map((problem) => problem.split(":")[0]).sort()).toEqual(Object.keys(invalid).sort());
    for (const value of Object.values(invalid)) expect(JSON.stringify(body)).not.toContain(value);
  });

  it("a provider's API over plain http, where every call carries a secret key, is refused but for localhost", async () => {
    const plain = { STRIPE_API_BASE: "http://api.stripe.example", ANTHROPIC_BASE_URL: "http://files.example.com/" };
    const response = await fetchWith(plain, "https://logos.test/health");
    expect(response.status).toBe(503);
    const body = (await response.json()) as { problems: string[] };
    expect(body.problems.map((problem) => problem.split(":")[0]).sort()).toEqual(Object.keys(plain).sort());
    expect(body.problems[0]).toContain("must be https (plain http only to localhost)");
    const local = await fetchWith(
      { STRIPE_API_BASE: "http://127.0.0.1:9", ANTHROPIC_BASE_URL: "http://localhost:8788" },
      "https://logos.test/health",
    );
    expect(local.status).toBe(200);
  });

  it("answers methods no route takes with 405 and what is allowed, not an error", async () => {
    const response = await exports.default.fetch("https://logos.test/health", { method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });
});
