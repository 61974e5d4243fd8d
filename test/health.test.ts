import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

describe("GET /health", () => {
  it("answers 200 when the database is reachable", async () => {
    const response = await exports.default.fetch("https://logos.test/health");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({ status: "ok", database: "ok" });
  });

  it("answers methods no route takes with 404, not an error", async () => {
    const response = await exports.default.fetch("https://logos.test/health", { method: "DELETE" });
    expect(response.status).toBe(404);
  });
});
