import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { emptySite } from "../discovery/helpers";
import { freezeClock } from "../helpers/clock";
import { BASE, fetchWith, freshCompany, freshKey } from "./helpers";

const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
  exports.default.fetch(`${BASE}${path}`, { redirect: "manual", headers, method });

describe("keys with allowed origins", () => {
  it("serve a matching Origin or Referer and reflect it in CORS", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey({ type: "publishable", allowedOrigins: ["https://shop.example.com"] });
    const asked: Record<string, string>[] = [
      { Origin: "https://shop.example.com" },
      { Referer: "https://shop.example.com/products/1?x=y" },
    ];
    for (const headers of asked) {
      const response = await get(`/${domain}?token=${token}`, headers);
      expect(response.status).toBe(302);
      expect(response.headers.get("access-control-allow-origin")).toBe("https://shop.example.com");
      expect(response.headers.get("vary")).toBe("Origin, Referer");
    }
  });

  it.each([
    [{ Origin: "https://evil.example.com" }],
    [{ Referer: "https://shop.example.com.evil.test/" }],
    [{ Origin: "http://shop.example.com" }],
    [{ Origin: "null" }],
    [{}],
  ])("refuse %j with 403", async (headers) => {
    const { domain } = await freshCompany();
    const token = await freshKey({ type: "publishable", allowedOrigins: ["https://shop.example.com"] });
    const response = await get(`/${domain}?token=${token}`, headers);
    expect(response.status).toBe(403);
    expect(await response.text()).toBe("Origin not allowed for this key");
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answer preflight for allowed origins only", async () => {
    const token = await freshKey({ type: "publishable", allowedOrigins: ["https://shop.example.com"] });
    const allowed = await get(
      `/github.com?token=${token}`,
      { Origin: "https://shop.example.com", "Access-Control-Request-Method": "GET" },
      "OPTIONS",
    );
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://shop.example.com");
    expect(allowed.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS");
    const refused = await get(`/github.com?token=${token}`, { Origin: "https://evil.example.com" }, "OPTIONS");
    expect(refused.status).toBe(403);
  });
});

describe("keys without allowed origins", () => {
  it("answer any origin with Access-Control-Allow-Origin: *, preflight included", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const response = await get(`/${domain}?token=${token}`, { Origin: "https://anyone.example" });
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    const preflight = await get(`/${domain}?token=${token}`, { Origin: "https://anyone.example" }, "OPTIONS");
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("a page's script", () => {
  const page = { Origin: "https://anyone.example" };

  it("may read the image a redirect leads to, and the asset route's refusals", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const redirect = await get(`/${domain}?token=${token}`, page);
    expect(redirect.status).toBe(302);
    // Browsers check CORS again on the answer a redirect leads to.
    const image = await exports.default.fetch(new URL(redirect.headers.get("location")!, BASE), { headers: page });
    expect(image.status).toBe(200);
    expect(image.headers.get("access-control-allow-origin")).toBe("*");
    const missing = await get("/assets/bm90LWEta2V5", page);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("may read the limits of a lookup answered with bytes, a miss or a refusal", async () => {
    // Three requests of a key allowed two a minute, in one minute.
    freezeClock({ secondsIntoMinute: 10 });
    const { domain } = await freshCompany();
    const token = await freshKey({ type: "publishable", perMinute: 2 });
    const exposed = (response: Response) => (response.headers.get("access-control-expose-headers") ?? "").split(/,\s*/);
    const limits = ["X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"];
    const bytes = await fetchWith({ LOOKUP_RESPONSE: "bytes" }, `${BASE}/${domain}?token=${token}`, { headers: page });
    expect(bytes.status).toBe(200);
    expect(exposed(bytes)).toEqual(expect.arrayContaining(limits));
    const miss = await get(`/${await emptySite()}?token=${token}`, page);
    expect(miss.status).toBe(404);
    expect(exposed(miss)).toEqual(expect.arrayContaining(limits));
    // The refusal is what a page's script most needs to read: when it may ask again.
    const refused = await get(`/${domain}?token=${token}`, page);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    expect(exposed(refused)).toEqual(expect.arrayContaining(limits));
    expect([refused.headers.get("x-ratelimit-remaining"), refused.headers.get("retry-after")]).toEqual(["0", "50"]);
    expect(refused.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
  });

  it("gets 405, not 404, for another method on a lookup or asset URL", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    for (const [path, method] of [
      [`/${domain}?token=${token}`, "POST"],
      [`/${domain}?token=${token}`, "DELETE"],
      ["/assets/bm90LWEta2V5", "PUT"],
    ] as const) {
      const response = await get(path, page, method);
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(await response.text()).toBe("Method not allowed");
      expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    }
  });
});

describe("keys that require attribution", () => {
  it("serve requests from a page", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey({ type: "publishable", requireAttribution: true });
    expect((await get(`/${domain}?token=${token}`, { Referer: "https://blog.example.org/post" })).status).toBe(302);
  });

  it("refuse requests that name no page", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey({ type: "publishable", requireAttribution: true });
    const response = await get(`/${domain}?token=${token}`);
    expect(response.status).toBe(403);
    expect(await response.text()).toMatch(/^Attribution required/);
  });
});

describe("secret keys", () => {
  it("are never logged", async () => {
    const secret = await freshKey({ type: "secret" });
    const unknown = await emptySite();
    const logged: string[] = [];
    const original = { log: console.log, error: console.error, warn: console.warn };
    for (const level of ["log", "error", "warn"] as const) console[level] = (...args: unknown[]) => logged.push(args.map(String).join(" "));
    try {
      await get(`/${unknown}?token=${secret}`);
      await get(`/${unknown}`, { Authorization: `Bearer ${secret}` });
    } finally {
      Object.assign(console, original);
    }
    expect(logged.join("\n")).not.toContain(secret);
  });

  it("get public answers that a shared cache keys on the credentials: the image, a monogram and a miss alike", async () => {
    const { domain } = await freshCompany();
    const secret = await freshKey({ type: "secret" });
    const auth = { Authorization: `Bearer ${secret}` };
    const unknown = await emptySite();
    for (const [path, status] of [
      [`/${domain}?size=1200`, 200],
      [`/${unknown}?fallback=monogram`, 200],
      [`/${unknown}`, 404],
    ] as const) {
      const response = await get(path, auth);
      expect([response.status, response.headers.get("vary")]).toEqual([status, "Authorization"]);
      await response.body?.cancel();
    }
    // The same URL without them is refused: a cache that ignored Authorization would serve it the image.
    expect((await get(`/${domain}?size=1200`)).status).toBe(401);
  });
});

describe("hardening", () => {
  it("row 4: a forged Host never reaches a Location, which is relative without a public base URL", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const response = await exports.default.fetch(`http://evil.example/${domain}?token=${token}`, {
      redirect: "manual",
      headers: { Host: "evil.example" },
    });
    expect(response.status).toBe(302);
    const location = response.headers.get("location")!;
    expect(location).toMatch(/^\/assets\//);
    expect(location).not.toContain("evil.example");
  });

  it("row 5: every answer of a restricted key varies on Origin and Referer, served or refused", async () => {
    const { domain } = await freshCompany();
    const restricted = await freshKey({ type: "publishable", allowedOrigins: ["https://shop.example.com"] });
    const byReferer = await get(`/${domain}?token=${restricted}`, { Referer: "https://shop.example.com/page" });
    expect(byReferer.status).toBe(302);
    expect(byReferer.headers.get("vary")).toBe("Origin, Referer");
    expect((await get(`/${domain}?token=${restricted}`, { Referer: "https://other.example/page" })).headers.get("vary")).toBe(
      "Origin, Referer",
    );

    const attribution = await freshKey({ type: "publishable", requireAttribution: true });
    const served = await get(`/${domain}?token=${attribution}`, { Referer: "https://blog.example/post" });
    expect(served.status).toBe(302);
    expect(served.headers.get("vary")).toBe("Origin, Referer");
    const refused = await get(`/${domain}?token=${attribution}`);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("vary")).toBe("Origin, Referer");
  });

  it.each([
    ["a second token", (pk: string, sk: string) => `token=${pk}&token=${sk}`],
    ["another parameter", (pk: string, sk: string) => `token=${pk}&key=${sk}`],
    ["percent-encoded", (pk: string, sk: string) => `token=${pk}&k=${encodeURIComponent(sk).replace("s", "%73")}`],
    ["inside another value", (pk: string, sk: string) => `token=${pk}&note=mine:${sk}`],
  ])("row 13: a secret key anywhere in the query is refused (%s)", async (_, query) => {
    const { domain } = await freshCompany();
    const pk = await freshKey();
    const sk = await freshKey({ type: "secret" });
    // Warm the isolate for this key and domain first: the warm path must refuse it too.
    expect((await get(`/${domain}?token=${pk}`)).status).toBe(302);
    const response = await get(`/${domain}?${query(pk, sk)}`);
    expect(response.status).toBe(401);
    expect(await response.text()).toContain("Secret keys (sk_…) must not be sent in URLs");
  });

  it.each([
    ["as a name", (sk: string) => `/name/${sk}`],
    ["as a ticker", (sk: string) => `/ticker/${sk}`],
    ["percent-encoded in a domain", (sk: string) => `/${encodeURIComponent(sk).replace("s", "%73")}.com`],
  ])("row 13: a secret key in the path is refused, and its preflight too (%s)", async (_, path) => {
    const pk = await freshKey();
    const sk = await freshKey({ type: "secret" });
    const response = await get(`${path(sk)}?token=${pk}`);
    expect(response.status).toBe(401);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(await response.text()).toContain("Secret keys (sk_…) must not be sent in URLs");
    const preflight = await exports.default.fetch(`${BASE}${path(sk)}?token=${pk}`, {
      method: "OPTIONS",
      headers: { Origin: "https://shop.example.com", "Access-Control-Request-Method": "GET" },
    });
    expect(preflight.status).toBe(401);
    // As a query: the preflight of a request that will be refused is refused.
    const queried = await exports.default.fetch(`${BASE}/github.com?token=${sk}`, {
      method: "OPTIONS",
      headers: { Origin: "https://shop.example.com", "Access-Control-Request-Method": "GET" },
    });
    expect(queried.status).toBe(401);
  });

  it("a bearer that is no key, alone, is refused in words a page's script can read", async () => {
    const response = await get("/github.com", { Authorization: "Bearer some-session-token" });
    expect(response.status).toBe(401);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
  });
});
