import { env, exports } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { revokeKey } from "../../src/keys/apiKeys";
import { accountMonthWindow } from "../../src/limits/lookupLimits";
import { limiterNames, rateLimiterFor } from "../../src/limits/rateLimiterClient";
import { emptySite } from "../discovery/helpers";
import { expectRefusedFetches } from "../helpers/outboundGuard";
import { addAccount, addKey, db } from "../helpers/catalogue";
import { freezeClock } from "../helpers/clock";
import { BASE, fetchWith, freshCompany, freshKey } from "./helpers";
import { errorBody } from "../helpers/errors";

const get = (path: string, init?: RequestInit) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual", ...init });

async function expectText(response: Response, status: number, message: string | RegExp) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  const body = await response.text();
  if (typeof message === "string") expect(body).toBe(message);
  else expect(body).toMatch(message);
}

describe("400 Invalid domain format", () => {
  it.each([
    "localhost",
    "127.0.0.1",
    "github.com:443",
    "github.com/about",
    "a..com",
    "-x.com",
    "co.uk",
    "example.invalidtld",
    `${"a".repeat(64)}.com`,
    "%20",
  ])("%s", async (domain) => {
    const token = await freshKey();
    await expectText(await get(`/${domain}?token=${token}`), 400, "Invalid domain format");
  });
});

describe("400 naming the parameter", () => {
  it.each([
    ["size=0", /^Invalid size/],
    ["size=801", /^Invalid size: must be a whole number from 1 to 800$/],
    ["size=abc", /^Invalid size/],
    ["size=12px", /^Invalid size/],
    ["size=1.5", /^Invalid size/],
    ["size=", /^Invalid size/],
    ["greyscale=maybe", /^Invalid greyscale: must be true, 1, yes, false, 0 or no$/],
    ["theme=blue", /^Invalid theme: must be light or dark$/],
    ["format=gif", /^Invalid format: must be png, webp, avif, jpg, svg$/],
    ["format=PNG", /^Invalid format/],
    ["dpr=4", /^Invalid dpr: must be 1, 2 or 3$/],
    ["dpr=1.5", /^Invalid dpr/],
    ["retina=sure", /^Invalid retina: must be true, 1, yes, false, 0 or no$/],
    ["dpr=2&retina=true", /^Invalid retina: give dpr or retina, not both$/],
  ])("%s", async (query, message) => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    await expectText(await get(`/${domain}?token=${token}&${query}`), 400, message);
  });

  it("allows secret keys up to 1,200 px, not beyond", async () => {
    const { domain } = await freshCompany();
    const secret = await freshKey({ type: "secret" });
    await expectText(
      await get(`/${domain}?size=1201`, { headers: { Authorization: `Bearer ${secret}` } }),
      400,
      /^Invalid size: .* 1 to 1200$/,
    );
  });

  it("does not count refused parameters against the key", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    await get(`/${domain}?token=${token}&size=0`);
    expect((await get(`/${domain}?token=${token}`)).headers.get("x-ratelimit-remaining")).toBe("599");
  });
});

describe("401 Missing or invalid token", () => {
  it("for a missing, malformed, unknown or revoked key", async () => {
    const { domain } = await freshCompany();
    const revoked = await freshKey();
    await revokeKey(db, revoked);
    for (const query of ["", "?token=", "?token=pk_short", `?token=pk_${"x".repeat(32)}`, `?token=${revoked}`]) {
      await expectText(await get(`/${domain}${query}`), 401, "Missing or invalid token");
    }
  });

  it("refuses a secret key in the URL, whatever else is wrong", async () => {
    const secret = await freshKey({ type: "secret" });
    await expectText(await get(`/not-a-domain?token=${secret}`), 401, /must not be sent in URLs/);
  });

  it("refuses a publishable key as a bearer token", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const response = await get(`/${domain}`, { headers: { Authorization: `Bearer ${token}` } });
    await expectText(response, 401, "Missing or invalid token");
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("judges the publishable key in the URL whatever other bearer the page's fetch adds, but never a secret one", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    for (const bearer of ["eyJhbGciOiJIUzI1NiJ9.e30.sig", token]) {
      expect((await get(`/${domain}?token=${token}`, { headers: { Authorization: `Bearer ${bearer}` } })).status, bearer).toBe(302);
    }
    const forged = await get(`/${domain}?token=${token}`, { headers: { Authorization: `Bearer sk_${"x".repeat(32)}` } });
    await expectText(forged, 401, "Missing or invalid token");
  });
});

describe("404 Logo not found", () => {
  it("for a well-formed domain with no logo, still counted against the key", async () => {
    const token = await freshKey();
    const response = await get(`/${await emptySite()}?token=${token}`);
    await expectText(response, 404, "Logo not found");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("599");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("429 Rate limit exceeded", () => {
  it("after the key's per-minute limit, with Retry-After and the reset time", async () => {
    const clock = freezeClock({ secondsIntoMinute: 15 });
    const { domain } = await freshCompany();
    const token = await freshKey({ type: "publishable", perMinute: 2 });
    expect((await get(`/${domain}?token=${token}`)).headers.get("x-ratelimit-remaining")).toBe("1");
    expect((await get(`/${domain}?token=${token}`)).headers.get("x-ratelimit-remaining")).toBe("0");
    const refused = await get(`/${domain}?token=${token}`);
    await expectText(refused, 429, "Rate limit exceeded");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    // 15 s into the minute: 45 s until it ends, when the key's next minute begins.
    expect(refused.headers.get("retry-after")).toBe("45");
    expect(Number(refused.headers.get("x-ratelimit-reset"))).toBe((clock.minute + 60_000) / 1000);
  });

  it("once the account's month is spent, for every key of the account, a new one too, until the month ends", async () => {
    const clock = freezeClock();
    const { domain } = await freshCompany();
    const account = await addAccount("free");
    const first = await addKey(account.id, { type: "publishable" });
    expect((await get(`/${domain}?token=${first}`)).status).toBe(302);
    // The account's other lookups this month leave it one.
    const month = [accountMonthWindow("free")];
    const spent = (await rateLimiterFor(env, limiterNames.lookups(account.id)).usage(month))[0]!.used;
    expect((await rateLimiterFor(env, limiterNames.lookups(account.id)).consume(month, 500_000 - spent - 1)).allowed).toBe(true);
    expect((await get(`/${domain}?token=${first}`)).status).toBe(302);
    // The first key is revoked and another made: the month is the account's still.
    expect((await revokeKey(db, first)).ok).toBe(true);
    const second = await addKey(account.id, { type: "publishable" });
    const refused = await get(`/${domain}?token=${second}`);
    await expectText(refused, 429, "Rate limit exceeded");
    const today = new Date(clock.now);
    const monthEnd = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1) / 1000;
    expect(Number(refused.headers.get("x-ratelimit-reset"))).toBe(monthEnd);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(60);
    // Another account's key is served.
    expect((await get(`/${domain}?token=${await freshKey()}`)).status).toBe(302);
  });

  it("lets exactly the limit through when requests arrive at once", async () => {
    freezeClock();
    const { domain } = await freshCompany();
    const token = await freshKey({ type: "publishable", perMinute: 10 });
    const statuses = await Promise.all(Array.from({ length: 30 }, () => get(`/${domain}?token=${token}`).then((r) => r.status)));
    expect(statuses.filter((s) => s === 302)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
  });
});

describe("500 Service misconfigured", () => {
  it.each([
    ["LOOKUP_RESPONSE", "foo"],
    ["CDN_URL", "cdn.example.com"],
    ["DISCOVERY_MISS_TTL_S", "-5"],
    ["DISCOVERY_BUDGET_MS", "abc"],
  ])("%s=%s: every lookup, warm or not, says so in plain text a page can read; what is wrong only in the logs", async (name, value) => {
    const warm = await freshCompany();
    const token = await freshKey();
    // The isolate now knows the key and the domain, and holds a lease: the warm path's lookup.
    expect((await get(`/${warm.domain}?token=${token}`)).status).toBe(302);
    const cold = `/${(await freshCompany()).domain}?token=${await freshKey()}`;

    const logged: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => logged.push(args.map(String).join(" "));
    try {
      for (const path of [`/${warm.domain}?token=${token}`, cold]) {
        const response = await fetchWith({ [name]: value }, `${BASE}${path}`, { redirect: "manual" });
        await expectText(response, 500, "Service misconfigured");
        expect(response.headers.get("access-control-allow-origin")).toBe("*");
      }
    } finally {
      console.error = original;
    }
    expect(logged.join("\n")).toContain(name);
    // Request ids (`<prefix>-<counter in base 36>`) are not the value: "-5" is in every id whose count starts with 5.
    expect(logged.join("\n").replace(/"requestId":"[^"]*"/g, "")).not.toContain(value);
  });
});

describe("misconfigured vars beyond the lookup", () => {
  it("every other route says so in its own shape, naming nothing: JSON for the API, a page for the portal, text elsewhere", async () => {
    const vars = { CDN_URL: "cdn.example.com" };
    const logged: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => logged.push(args.map(String).join(" "));
    try {
      const openapi = await fetchWith(vars, `${BASE}/openapi.json`);
      expect(openapi.status).toBe(500);
      expect(await errorBody(openapi)).toEqual({ error: "Service misconfigured", code: "internal" });

      const signIn = await fetchWith(vars, `${BASE}/portal/login`);
      expect(signIn.status).toBe(500);
      expect(signIn.headers.get("content-type")).toMatch(/^text\/html/);
      expect(await signIn.text()).toContain("<h1>Service misconfigured</h1>");

      const landing = await fetchWith(vars, `${BASE}/`, { headers: { Accept: "text/html" } });
      expect(landing.status).toBe(500);
      expect(await landing.text()).toBe("Service misconfigured");
    } finally {
      console.error = original;
    }
    expect(logged.join("\n")).toContain("CDN_URL");
    expect(logged.join("\n")).not.toContain("cdn.example.com");
  });
});

describe("never a 5xx", () => {
  it("for any path and query", async () => {
    // A random path can be a real domain, which discovery then asks for: the outbound guard
    // refuses it at once, which is one more way for a site to be unreachable.
    expectRefusedFetches();
    const token = await freshKey();
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }), fc.string({ maxLength: 40 }), async (path, size) => {
        const url = `${BASE}/${encodeURIComponent(path)}?token=${token}&size=${encodeURIComponent(size)}`;
        const response = await exports.default.fetch(url, { redirect: "manual" });
        expect(response.status).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
  });
});
