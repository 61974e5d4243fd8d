import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  AuthenticationError,
  ConfigurationError,
  InvalidRequestError,
  LogoLookup,
  type LogoLookupEvents,
  type LogoLookupOptions,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ServerError,
} from "../../src/sdk";
import { errorCodes } from "../../src/lib/errors";
import { addAccount, addCompany, addKey } from "../helpers/catalogue";
import { darkLogo40x20 } from "../fixtures/images";

/** The SDK against the Worker itself: its fetch is the Worker's own entry point. */
const BASE = "https://logos.test";
const workerFetch: typeof fetch = (input, init) => exports.default.fetch(new Request(input, init));

async function client(options: LogoLookupOptions & { perMinute?: number } = {}) {
  const account = await addAccount("launch");
  const secretKey = await addKey(account.id, { type: "secret", ...(options.perMinute ? { perMinute: options.perMinute } : {}) });
  const waits: number[] = [];
  const sdk = new LogoLookup({ secretKey, baseUrl: BASE, fetch: workerFetch, sleep: async (ms) => void waits.push(ms), ...options });
  return { sdk, secretKey, waits };
}

async function companies(...domains: string[]) {
  const ids: Record<string, number> = {};
  for (const [i, domain] of domains.entries()) {
    const { logoId } = await addCompany({ name: `Company ${domain}`, domains: [domain] }, { ...darkLogo40x20(), contentHash: `${i + 1}`.padStart(64, "b") });
    ids[domain] = logoId;
  }
  return ids;
}

const isPng = (bytes: Uint8Array) => bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47;
const widthOf = (png: Uint8Array) => new DataView(png.buffer, png.byteOffset).getUint32(16);

describe("LogoLookup.get / getStream", () => {
  it("returns the PNG at the asked size with its metadata", async () => {
    const ids = await companies("sdk-one.com");
    const { sdk } = await client();
    const logo = await sdk.get("sdk-one.com", { size: 64 });
    expect(isPng(logo.bytes)).toBe(true);
    expect(widthOf(logo.bytes)).toBe(64);
    expect(logo).toMatchObject({ logoId: ids["sdk-one.com"], companyName: "Company sdk-one.com", domain: "sdk-one.com", variant: "icon", width: 64, height: 32, sourceWidth: 40, sourceHeight: 20, contentType: "image/png" });
    // Secret keys go up to 1,200 px.
    expect(widthOf((await sdk.get("sdk-one.com", { size: 1200 })).bytes)).toBe(1200);
  });

  it("asks for other formats and densities, and reports the format served and the brand colour", async () => {
    await addCompany({ name: "Company sdk-webp.com", domains: ["sdk-webp.com"], brandColor: "#0a2540" }, { ...darkLogo40x20(), contentHash: "c".padStart(64, "c") });
    const { sdk } = await client();
    const logo = await sdk.get("sdk-webp.com", { size: 16, dpr: 2, format: "webp" });
    expect(String.fromCharCode(...logo.bytes.slice(8, 12))).toBe("WEBP");
    expect(logo).toMatchObject({ width: 32, height: 16, contentType: "image/webp", format: "webp", brandColor: "#0a2540" });
    // A raster-only logo asked for as SVG comes as PNG, and says so.
    const fallback = await sdk.get("sdk-webp.com", { format: "svg" });
    expect([isPng(fallback.bytes), fallback.format]).toEqual([true, "png"]);
  });

  it("streams the same bytes", async () => {
    await companies("sdk-stream.com");
    const { sdk } = await client();
    const stream = await sdk.getStream("sdk-stream.com", { size: 32 });
    const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    expect(widthOf(bytes)).toBe(32);
  });

  it("throws typed errors", async () => {
    const { sdk } = await client();
    await expect(sdk.get("nothing-here-at-all.com")).rejects.toBeInstanceOf(NotFoundError);
    await expect(sdk.get("not a domain")).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(sdk.get("sdk-one.com", { size: 1201 })).rejects.toBeInstanceOf(InvalidRequestError);
    const revoked = new LogoLookup({ secretKey: "sk_00000000000000000000000000000000", baseUrl: BASE, fetch: workerFetch });
    await expect(revoked.get("sdk-one.com")).rejects.toBeInstanceOf(AuthenticationError);
    expect(() => new LogoLookup({ baseUrl: BASE })).toThrow(ConfigurationError);
    expect(() => new LogoLookup({ secretKey: "pk_abc", baseUrl: BASE })).toThrow(ConfigurationError);
  });

  it("gives each error the service's code: from the status where the lookup answers in plain text", async () => {
    const { sdk } = await client();
    await expect(sdk.get("nothing-here-at-all.com")).rejects.toMatchObject({ constructor: NotFoundError, status: 404, code: "not_found", message: "Logo not found" });
    await expect(sdk.getStream("not a domain")).rejects.toMatchObject({ constructor: InvalidRequestError, status: 400, code: "invalid_argument" });
    const revoked = new LogoLookup({ secretKey: "sk_00000000000000000000000000000000", baseUrl: BASE, fetch: workerFetch });
    await expect(revoked.get("sdk-one.com")).rejects.toMatchObject({ constructor: AuthenticationError, status: 401, code: "unauthorized" });
    for await (const result of sdk.getMany(["unknown-many-codes.com"])) expect(result.ok === false && result.error.code).toBe("not_found");
  });

  it("knows every code of the service by its status (src/lib/errors.ts), for answers that carry none", async () => {
    for (const [code, status] of Object.entries(errorCodes)) {
      // A 429 is a RateLimitError, whose code is its own (tested with the retries).
      if (status === 429) continue;
      const { sdk } = await client({ maxRetries: 0, fetch: async () => new Response("Something", { status, headers: { "Content-Type": "text/plain; charset=utf-8" } }) });
      await expect(sdk.get("codes.com")).rejects.toMatchObject({ status, code });
    }
  });

  it("a name the service answers with a page of its own is no logo", async () => {
    const { sdk } = await client();
    await expect(sdk.get("docs")).rejects.toMatchObject({ constructor: InvalidRequestError, code: "invalid_argument", message: expect.stringContaining("text/html") });
    for await (const result of sdk.getMany(["docs"])) expect(result.ok === false && result.error).toBeInstanceOf(InvalidRequestError);
  });

  it("an image that breaks off while it is read is a network failure: retried, then a NetworkError", async () => {
    await companies("sdk-broken-off.com");
    /** An answer whose headers arrive and whose image stops after three bytes. */
    const brokenOff = () =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new Uint8Array([0x89, 0x50, 0x4e]));
            controller.error(new TypeError("terminated"));
          },
        }),
        { headers: { "Content-Type": "image/png" } },
      );
    const once = [brokenOff()];
    const { sdk, waits } = await client({ fetch: async (input, init) => once.shift() ?? workerFetch(input, init) });
    expect(isPng((await sdk.get("sdk-broken-off.com")).bytes)).toBe(true);
    expect(waits).toHaveLength(1);

    const { sdk: unlucky, waits: waited } = await client({ maxRetries: 2, fetch: async () => brokenOff() });
    await expect(unlucky.get("sdk-broken-off.com")).rejects.toMatchObject({ constructor: NetworkError, message: "Request failed: terminated" });
    expect(waited).toHaveLength(2);
    for await (const result of unlucky.getMany(["sdk-broken-off.com"])) expect(result.ok === false && result.error).toBeInstanceOf(NetworkError);

    const stream = await unlucky.getStream("sdk-broken-off.com");
    await expect(new Response(stream).arrayBuffer()).rejects.toBeInstanceOf(NetworkError);
  });

  it("never puts the key in a URL", async () => {
    await companies("sdk-private.com");
    const seen: Request[] = [];
    const { sdk, secretKey } = await client({ fetch: (input, init) => (seen.push(new Request(input, init)), workerFetch(input, init)) });
    await sdk.get("sdk-private.com");
    await sdk.usage();
    for (const request of seen) {
      expect(request.url).not.toContain(secretKey);
      expect(request.headers.get("authorization")).toBe(`Bearer ${secretKey}`);
    }
  });
});

describe("LogoLookup.getMany", () => {
  it("yields results in input order with per-domain errors as values, never more than `concurrency` in flight", async () => {
    await companies("many-a.com", "many-b.com", "many-c.com");
    let inFlight = 0;
    let most = 0;
    const { sdk } = await client({
      concurrency: 2,
      fetch: async (input, init) => {
        most = Math.max(most, ++inFlight);
        try {
          return await workerFetch(input, init);
        } finally {
          inFlight--;
        }
      },
    });
    const results = [];
    for await (const result of sdk.getMany(["many-c.com", "unknown-many.com", "many-a.com", "bad domain", "many-b.com"], { size: 16 })) results.push(result);
    expect(results.map((r) => [r.domain, r.ok])).toEqual([
      ["many-c.com", true],
      ["unknown-many.com", false],
      ["many-a.com", true],
      ["bad domain", false],
      ["many-b.com", true],
    ]);
    expect(results[1]!.ok === false && results[1]!.error).toBeInstanceOf(NotFoundError);
    expect(most).toBeLessThanOrEqual(2);
  });
});

describe("retries, rate limits and events", () => {
  it("retries 5xx with backoff and honours Retry-After, reporting each retry", async () => {
    await companies("retry-me.com");
    const answers = [new Response("busy", { status: 503, headers: { "Retry-After": "2" } }), new Response("oops", { status: 500 })];
    const { sdk, waits } = await client({ fetch: async (input, init) => answers.shift() ?? workerFetch(input, init) });
    const retries: LogoLookupEvents["retry"][] = [];
    sdk.on("retry", (event) => retries.push(event));
    const logo = await sdk.get("retry-me.com");
    expect(logo.domain).toBe("retry-me.com");
    expect(waits[0]).toBe(2000);
    expect(waits[1]).toBeGreaterThanOrEqual(500);
    expect(retries.map((r) => [r.status, r.attempt])).toEqual([
      [503, 1],
      [500, 2],
    ]);
  });

  it("gives up after maxRetries with a ServerError", async () => {
    const { sdk, waits } = await client({ maxRetries: 2, fetch: async () => new Response("down", { status: 502 }) });
    await expect(sdk.get("whatever.com")).rejects.toBeInstanceOf(ServerError);
    expect(waits).toHaveLength(2);
  });

  it("a real 429 from the Worker: rate-limit events with Retry-After, then RateLimitError when the wait is too long", async () => {
    await companies("limited.com");
    const { sdk } = await client({ perMinute: 2, maxRetryDelayMs: 0 });
    const limits: LogoLookupEvents["ratelimit"][] = [];
    const quota: number[] = [];
    sdk.on("ratelimit", (event) => limits.push(event));
    const stop = sdk.on("quota", (event) => quota.push(event.remaining));
    await sdk.get("limited.com");
    await sdk.get("limited.com");
    const error = await sdk.get("limited.com").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfter).toBeGreaterThan(0);
    expect(limits).toEqual([expect.objectContaining({ attempt: 0, willRetry: false, retryAfter: (error as RateLimitError).retryAfter })]);
    expect(quota.slice(0, 2)).toEqual([1, 0]);
    stop();
    await sdk.get("limited.com").catch(() => undefined);
    expect(quota.length).toBe(3);
  });

  it("waits out a short Retry-After and succeeds", async () => {
    await companies("short-wait.com");
    const answers = [new Response("Rate limit exceeded", { status: 429, headers: { "Retry-After": "1" } })];
    const { sdk, waits } = await client({ fetch: async (input, init) => answers.shift() ?? workerFetch(input, init) });
    const limits: LogoLookupEvents["ratelimit"][] = [];
    sdk.on("ratelimit", (event) => limits.push(event));
    await sdk.get("short-wait.com");
    expect(waits).toEqual([1000]);
    expect(limits).toEqual([expect.objectContaining({ retryAfter: 1, willRetry: true })]);
  });
});

describe("REST methods", () => {
  it("search, company and usage", async () => {
    const ids = await companies("rest-sdk.com");
    const { sdk } = await client();
    const { results } = await sdk.search("rest-sdk.com");
    expect(results[0]).toMatchObject({ domain: "rest-sdk.com", matchedBy: "domain" });
    const company = await sdk.company({ domain: "rest-sdk.com" });
    expect(company).toMatchObject({ companyId: results[0]!.companyId, logos: [expect.objectContaining({ logoId: ids["rest-sdk.com"] })] });
    expect(await sdk.company(results[0]!.companyId)).toEqual(company);
    await expect(sdk.company(999999)).rejects.toMatchObject({ constructor: NotFoundError, code: "not_found", message: "No company found with ID 999999" });
    expect(await sdk.usage()).toMatchObject({ plan: "launch" });
  });
});
