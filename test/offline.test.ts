import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { checkRefusedFetches, expectRefusedFetches, refusedFetches } from "./helpers/outboundGuard";
import { BASE, freshKey } from "./lookup/helpers";

/** The worker tests never reach the internet (test/helpers/outboundGuard.ts). */
describe("the outbound guard", () => {
  it("refuses a fetch to a public name at once, in its own words, and records it", async () => {
    expectRefusedFetches();
    const error = await fetch("https://unmapped-by-any-test.com/favicon.ico").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      "outbound guard: https://unmapped-by-any-test.com/favicon.ico refused (only loopback addresses are reachable in tests)",
    );
    expect(refusedFetches()).toEqual([
      {
        url: "https://unmapped-by-any-test.com/favicon.ico",
        test: "the outbound guard > refuses a fetch to a public name at once, in its own words, and records it",
      },
    ]);
  });

  it("stands in the Worker's own path: discovery of a host no fake site is mapped to is refused by it", async () => {
    expectRefusedFetches();
    const secret = await freshKey({ type: "secret" });
    const response = await exports.default.fetch(`${BASE}/unmapped-by-any-test.com`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(404);
    expect(refusedFetches().map((r) => r.url)).toContain("https://unmapped-by-any-test.com/");
  });

  it("fails the test that made such a fetch without expecting it, naming what was fetched", async () => {
    await fetch("https://unmapped-by-any-test.com/").catch(() => undefined);
    // What the setup file runs after every test: here it throws, so that test would fail.
    expect(() => checkRefusedFetches()).toThrow(/1 fetch\(es\) to addresses no fake serves[^]*https:\/\/unmapped-by-any-test\.com\//);
    // Drained by the check: this test itself ends clean.
    expect(refusedFetches()).toEqual([]);
  });

  it("lets loopback through: the fakes the tests run on 127.0.0.1", async () => {
    const response = await fetch(`${env.DISCOVERY_FAKE_SITES}/elsewhere/requests`);
    expect(response.status).toBe(200);
    expect(refusedFetches()).toEqual([]);
  });
});
