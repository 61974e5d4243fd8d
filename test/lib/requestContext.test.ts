import { createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { redact } from "../../src/lib/log";
import { warmLookup } from "../../src/lookup/warm";
import { rest, secretKeyFor } from "../api/helpers";
import { brokenDatabase } from "../faults/bindings";
import { errorBody } from "../helpers/errors";
import { BASE, fetchWith, freshCompany, freshKey } from "../lookup/helpers";

/**
 * One request context per request (src/lib/context.ts): an id on every answer (Cloudflare's
 * ray id where it has one), the same id in every JSON error body and on every log line the
 * request causes, one access-log line per request, and never a secret in any line.
 */
type Line = { level: string; event: string; requestId?: string; [field: string]: unknown };

let spies: MockInstance[] = [];
let written: { method: string; text: string }[] = [];

beforeEach(() => {
  written = [];
  spies = (["log", "warn", "error"] as const).map((method) =>
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      written.push({ method, text: args.map(String).join(" ") });
    }),
  );
});
afterEach(() => {
  for (const spy of spies) spy.mockRestore();
});

/** The structured lines written so far (every line the service writes is one JSON object). */
function lines(): Line[] {
  return written.map(({ text }) => JSON.parse(text) as Line);
}

const accessLines = (requestId: string | null) => lines().filter((line) => line.event === "request" && line.requestId === requestId);

describe("the request id", () => {
  it("is on every kind of answer: a lookup's redirect and its refusal, an asset, a page, JSON, OAuth metadata, /mcp", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const answers = await Promise.all(
      [
        `/${domain}?token=${token}`,
        `/${domain}?token=pk_${"0".repeat(32)}`,
        "/assets/nothing-here",
        "/portal/login",
        "/v1/usage",
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/health",
        "/no.such.path/at/all",
      ].map((path) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual" })),
    );
    answers.push(await exports.default.fetch(`${BASE}/mcp`, { method: "POST", body: "{}" }));
    const ids = answers.map((answer) => answer.headers.get("x-request-id"));
    expect(
      ids.every((id) => id !== null && /^[\w-]{1,64}$/.test(id)),
      JSON.stringify(ids),
    ).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("is Cloudflare's ray id where the request has one", async () => {
    const response = await exports.default.fetch(`${BASE}/health`, { headers: { "cf-ray": "8f1e2d3c4b5a6978-LHR" } });
    expect(response.headers.get("x-request-id")).toBe("8f1e2d3c4b5a6978-LHR");
    // A header that is no ray id (too long, or characters no ray id has) is not taken as one.
    const forged = await exports.default.fetch(`${BASE}/health`, { headers: { "cf-ray": "x y<script>" } });
    expect(forged.headers.get("x-request-id")).not.toContain("script");
  });

  it("is in the JSON error body, in the header and on the log line of the failure it answers", async () => {
    const { key } = await secretKeyFor();
    const response = await fetchWith({ DB: brokenDatabase("fails") }, `${BASE}/v1/companies/search?q=acme`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(503);
    const id = response.headers.get("x-request-id")!;
    expect(await errorBody(response)).toMatchObject({ code: "unavailable" });
    const failure = lines().find((line) => line.event === "dependency_unavailable");
    expect(failure, JSON.stringify(lines())).toMatchObject({
      level: "error",
      requestId: id,
      dependency: "database",
      path: "/v1/companies/search",
    });
    expect(written.find((w) => w.text.includes('"dependency_unavailable"'))?.method).toBe("error");
  });
});

describe("JSON error bodies", () => {
  it("of the OAuth endpoints, RFC 6749's {error, error_description}, name the request too", async () => {
    const response = await exports.default.fetch(`${BASE}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "grant_type=authorization_code&code=nothing&client_id=nobody",
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: expect.any(String) });
    expect(body.requestId).toBe(response.headers.get("x-request-id"));
  });
});

describe("the access log", () => {
  it("writes one line per request: method, route pattern, status, duration and the key's prefix, never the key", async () => {
    const { key } = await secretKeyFor();
    const response = await rest("/v1/companies/search?q=acme", key);
    expect(response.status).toBe(200);
    const [line, ...more] = accessLines(response.headers.get("x-request-id"));
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: "info", method: "GET", route: "/v1/companies/search", status: 200, key: key.slice(0, 9) });
    expect(typeof line!.durationMs).toBe("number");
    expect(written.map((w) => w.text).join("\n")).not.toContain(key);
  });

  it("leaves a warm lookup's line to Cloudflare's invocation log by default, and writes it with ACCESS_LOG=all", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const url = `${BASE}/${domain}?token=${token}`;
    // The warm path answers once the isolate knows the key and the domain and holds a lease;
    // a lookup through the router renews the lease whenever it is spent.
    const warm = async (vars: Partial<Env>) => {
      const changed = { ...env, ...vars };
      for (let attempt = 0; attempt < 5; attempt++) {
        const answer = warmLookup(new Request(url), changed, createExecutionContext());
        if (answer) return answer;
        await exports.default.fetch(url, { redirect: "manual" });
      }
      throw new Error("the warm path never answered");
    };
    const quiet = await warm({});
    expect(quiet.status).toBe(302);
    expect(quiet.headers.get("x-request-id")).toMatch(/^[\w-]+$/);
    expect(accessLines(quiet.headers.get("x-request-id"))).toEqual([]);
    const logged = await warm({ ACCESS_LOG: "all" });
    expect(logged.status).toBe(302);
    const [line, ...more] = accessLines(logged.headers.get("x-request-id"));
    expect(more).toEqual([]);
    expect(line).toMatchObject({ method: "GET", route: "/*", status: 302, key: token.slice(0, 9) });
    expect(written.map((w) => w.text).join("\n")).not.toContain(token);
  });

  it("names the route pattern, not the path: a company's id or a domain never becomes a route", async () => {
    const { key } = await secretKeyFor();
    const response = await rest("/v1/companies/424242", key);
    expect(response.status).toBe(404);
    expect(accessLines(response.headers.get("x-request-id"))[0]).toMatchObject({ route: "/v1/companies/:companyId", status: 404 });
  });
});

describe("redaction", () => {
  it("leaves no key, token, signature or provider secret in a line", () => {
    const key = `sk_${"Ab1".repeat(10)}xy`;
    const text = redact(
      [
        `GET /stripe.com?token=pk_${"a".repeat(32)}`,
        `Authorization: Bearer ${key}`,
        `oauth token acct_1:ABCDEFGHIJKLMNOP:${"s".repeat(32)}`,
        "stripe sk_test_51Hxyz whsec_abc123def and sk-ant-api03-secretsecret",
        "/assets/x?signature=deadbeef&expires=1",
        "Cookie: __Host-session=opaque123; __Host-device=dev456",
      ].join("\n"),
    );
    for (const secret of ["a".repeat(32), key, "s".repeat(32), "51Hxyz", "abc123def", "secretsecret", "deadbeef", "opaque123", "dev456"]) {
      expect(text).not.toContain(secret);
    }
    // What is left says what it was: the kind and the non-secret prefix.
    expect(text).toContain("token=…");
    expect(text).toContain("Bearer …");
    expect(text).toContain("acct_1:ABCDEFGHIJKLMNOP:…");
  });

  it("applies to errors logged whole, their messages, stacks and causes", async () => {
    const { key } = await secretKeyFor();
    const failing = brokenDatabase("fails");
    await fetchWith({ DB: failing }, `${BASE}/v1/usage`, { headers: { Authorization: `Bearer ${key}` } });
    expect(lines().some((line) => line.event === "dependency_unavailable")).toBe(true);
    expect(written.map((w) => w.text).join("\n")).not.toContain(key);
  });
});
