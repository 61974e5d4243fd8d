import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
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
} from "../../packages/sdk/src";
import { normaliseDomain } from "../../src/lib/domain";
import { errorCodes } from "../../src/lib/errors";
import { emptySite } from "../discovery/helpers";
import { freezeClock } from "../helpers/clock";
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
    const { logoId } = await addCompany(
      { name: `Company ${domain}`, domains: [domain] },
      { ...darkLogo40x20(), contentHash: `${i + 1}`.padStart(64, "b") },
    );
    ids[domain] = logoId;
  }
  return ids;
}

/** A PNG answer as the service gives a secret key, for fetches that stand in for it. */
const pngAnswer = () => new Response(new Uint8Array([0x89, 0x50, 0x4e, 0x47]), { headers: { "Content-Type": "image/png" } });
const KEY = `sk_${"a".repeat(32)}`;
const thrown = (construct: () => unknown) => {
  try {
    construct();
  } catch (error) {
    return error;
  }
  return undefined;
};

const isPng = (bytes: Uint8Array) => bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47;
const widthOf = (png: Uint8Array) => new DataView(png.buffer, png.byteOffset).getUint32(16);

describe("LogoLookup.get / getStream", () => {
  it("returns the PNG at the asked size with its metadata", async () => {
    const ids = await companies("sdk-one.com");
    const { sdk } = await client();
    const logo = await sdk.get("sdk-one.com", { size: 64 });
    expect(isPng(logo.bytes)).toBe(true);
    expect(widthOf(logo.bytes)).toBe(64);
    expect(logo).toMatchObject({
      logoId: ids["sdk-one.com"],
      companyName: "Company sdk-one.com",
      domain: "sdk-one.com",
      variant: "icon",
      width: 64,
      height: 32,
      sourceWidth: 40,
      sourceHeight: 20,
      contentType: "image/png",
    });
    // Secret keys go up to 1,200 px.
    expect(widthOf((await sdk.get("sdk-one.com", { size: 1200 })).bytes)).toBe(1200);
  });

  it("asks for other formats and densities, and reports the format served and the brand colour", async () => {
    await addCompany(
      { name: "Company sdk-webp.com", domains: ["sdk-webp.com"], brandColor: "#0a2540" },
      { ...darkLogo40x20(), contentHash: "c".padStart(64, "c") },
    );
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
    await expect(sdk.get(await emptySite())).rejects.toBeInstanceOf(NotFoundError);
    await expect(sdk.get("not a domain")).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(sdk.get("sdk-one.com", { size: 1201 })).rejects.toBeInstanceOf(InvalidRequestError);
    const revoked = new LogoLookup({ secretKey: "sk_00000000000000000000000000000000", baseUrl: BASE, fetch: workerFetch });
    await expect(revoked.get("sdk-one.com")).rejects.toBeInstanceOf(AuthenticationError);
    expect(() => new LogoLookup({ baseUrl: BASE })).toThrow(ConfigurationError);
    expect(() => new LogoLookup({ secretKey: "pk_abc", baseUrl: BASE })).toThrow(ConfigurationError);
  });

  it("gives each error the service's code: from the status where the lookup answers in plain text", async () => {
    const { sdk } = await client();
    await expect(sdk.get(await emptySite())).rejects.toMatchObject({
      constructor: NotFoundError,
      status: 404,
      code: "not_found",
      message: "Logo not found",
    });
    await expect(sdk.getStream("not a domain")).rejects.toMatchObject({
      constructor: InvalidRequestError,
      status: 400,
      code: "invalid_argument",
    });
    const revoked = new LogoLookup({ secretKey: "sk_00000000000000000000000000000000", baseUrl: BASE, fetch: workerFetch });
    await expect(revoked.get("sdk-one.com")).rejects.toMatchObject({ constructor: AuthenticationError, status: 401, code: "unauthorized" });
    for await (const result of sdk.getMany([await emptySite()])) expect(result.ok === false && result.error.code).toBe("not_found");
  });

  it("knows every code of the service by its status (src/lib/errors.ts), for answers that carry none", async () => {
    for (const [code, status] of Object.entries(errorCodes)) {
      // A 429 is a RateLimitError, whose code is its own (tested with the retries).
      if (status === 429) continue;
      const { sdk } = await client({
        maxRetries: 0,
        fetch: async () => new Response("Something", { status, headers: { "Content-Type": "text/plain; charset=utf-8" } }),
      });
      await expect(sdk.get("codes.com")).rejects.toMatchObject({ status, code });
    }
  });

  it("a name the service answers with a page of its own is no logo", async () => {
    const { sdk } = await client();
    // Shaped like a host name, so sent: the service answers its OpenAPI document.
    await expect(sdk.get("openapi.json")).rejects.toMatchObject({
      constructor: InvalidRequestError,
      status: 400,
      code: "invalid_argument",
      message: expect.stringContaining("application/json"),
    });
    for await (const result of sdk.getMany(["openapi.json"]))
      expect(result.ok === false && result.error).toBeInstanceOf(InvalidRequestError);
  });

  it("refuses a name that is no domain before sending anything: the service's own routes never see the key", async () => {
    const asked: string[] = [];
    const { sdk } = await client({ fetch: (input, init) => (asked.push(String(input)), workerFetch(input, init)) });
    // The service's routes (a secret key got a 401 at /mcp, a 502 at /portal, a 404 at /v1), names, tickers, URLs.
    const notDomains = [
      "mcp",
      "portal",
      "v1",
      "api",
      "assets",
      "authorize",
      "docs",
      "health",
      "ticker",
      "name",
      "apple",
      "AAPL",
      "",
      "  ",
      ".well-known",
      "localhost",
      "www.",
      "github.com/about",
      "https://github.com",
      "github.com:443",
      "me@github.com",
      "-acme.com",
      "acme..com",
      `${"a".repeat(64)}.com`,
    ];
    for (const domain of notDomains) {
      const error = await sdk.get(domain).catch((e: unknown) => e);
      expect(error, JSON.stringify(domain)).toMatchObject({ constructor: InvalidRequestError, status: 400, code: "invalid_argument" });
      // Refused by the service too: nothing it would look up is refused here.
      expect(normaliseDomain(domain).ok, JSON.stringify(domain)).toBe(false);
    }
    await expect(sdk.get("mcp")).rejects.toThrow('"mcp" is not a domain: a domain has a dot (stripe.com)');
    await expect(sdk.getStream("portal")).rejects.toBeInstanceOf(InvalidRequestError);
    const results = [];
    for await (const result of sdk.getMany(["authorize", "assets"])) results.push(result.ok === false && result.error);
    expect(results).toEqual([expect.any(InvalidRequestError), expect.any(InvalidRequestError)]);
    expect(asked).toEqual([]);
  });

  it("sends every domain the service accepts, however it is written", async () => {
    await addCompany(
      { name: "Bücher", domains: ["sdk-written.com", "xn--bcher-sdk-q9a.de"] },
      { ...darkLogo40x20(), contentHash: "d".padStart(64, "d") },
    );
    const { sdk } = await client();
    for (const domain of [
      "sdk-written.com",
      " SDK-Written.com ",
      "www.sdk-written.com",
      "sdk-written.com.",
      "sdk-written。com",
      "shop.sdk-written.com",
      "Bücher-SDK.de",
      "xn--bcher-sdk-q9a.de",
    ]) {
      expect((await sdk.get(domain, { size: 16 })).companyName, domain).toBe("Bücher");
    }
    // What the SDK refuses, the service refuses too, over a spread of the characters host names are made of.
    const pieces = ["a", "b1", "com", ".", "..", "-", "。", " ", "_", "é", "www.", ":", "/", "xn--"];
    const { sdk: recorded } = await client({ fetch: async () => pngAnswer() });
    for (const one of pieces) {
      for (const two of pieces) {
        for (const three of pieces) {
          for (const domain of [one + two + three, `${one}${two}${three}.com`]) {
            const refused = await recorded.get(domain).then(
              () => false,
              (error: unknown) => error instanceof InvalidRequestError,
            );
            if (refused) expect(normaliseDomain(domain).ok, JSON.stringify(domain)).toBe(false);
          }
        }
      }
    }
  });

  it("a domain no URL can carry, or no string at all, rejects with an InvalidRequestError, never throws", async () => {
    const asked: string[] = [];
    const { sdk } = await client({ fetch: (input, init) => (asked.push(String(input)), workerFetch(input, init)) });
    // A lone surrogate (encodeURIComponent threw URIError), and what a parsed CSV may hold.
    // Named by JSON.stringify: a lone surrogate in a failure's message breaks the test runner's report.
    for (const domain of ["bad\uD800.com", "\uDC00", null, undefined, 42] as unknown as string[]) {
      let asking: Promise<unknown> | undefined;
      let streaming: Promise<unknown> | undefined;
      expect(() => (asking = sdk.get(domain)), JSON.stringify(domain)).not.toThrow();
      expect(() => (streaming = sdk.getStream(domain)), JSON.stringify(domain)).not.toThrow();
      await expect(asking).rejects.toMatchObject({ constructor: InvalidRequestError, status: 400, code: "invalid_argument" });
      await expect(streaming).rejects.toBeInstanceOf(InvalidRequestError);
    }
    await expect(sdk.get("bad\uD800.com")).rejects.toThrow(
      '"bad\\ud800.com" is not a domain: it is not well-formed Unicode (a lone surrogate)',
    );
    await expect(sdk.get(null as unknown as string)).rejects.toThrow("A domain is a string, not null");
    expect(asked).toEqual([]);
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
    await expect(unlucky.get("sdk-broken-off.com")).rejects.toMatchObject({
      constructor: NetworkError,
      message: "Request failed: terminated",
    });
    expect(waited).toHaveLength(2);
    for await (const result of unlucky.getMany(["sdk-broken-off.com"]))
      expect(result.ok === false && result.error).toBeInstanceOf(NetworkError);

    const stream = await unlucky.getStream("sdk-broken-off.com");
    await expect(new Response(stream).arrayBuffer()).rejects.toBeInstanceOf(NetworkError);
  });

  it("refuses a key that is not a secret key's shape, never quoting it", () => {
    for (const secretKey of [`${KEY}\n`, ` ${KEY}`, KEY.slice(0, -1), `${KEY}a`, `pk_${"a".repeat(32)}`, `sk_${"a".repeat(31)}-`]) {
      const error = thrown(() => new LogoLookup({ secretKey, baseUrl: BASE }));
      expect(error, JSON.stringify(secretKey)).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).not.toContain("aaaa");
    }
  });

  it("a request that gets no answer is a NetworkError that never quotes fetch's failure (it may quote the Authorization header)", async () => {
    const { sdk, secretKey } = await client({
      maxRetries: 0,
      fetch: async (input, init) => {
        throw new TypeError(`Cannot fetch ${String(input)} with ${JSON.stringify(init?.headers)}`);
      },
    });
    const error = await sdk.get("unreachable.com").catch((e: unknown) => e);
    expect(error).toMatchObject({ constructor: NetworkError, message: `Request failed: could not reach ${BASE}` });
    expect((error as Error).message).not.toContain(secretKey);
    // A timeout says so.
    const { sdk: patient } = await client({
      maxRetries: 0,
      timeoutMs: 20,
      fetch: (_input, init) => new Promise((_, reject) => init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason))),
    });
    await expect(patient.get("slow.com")).rejects.toMatchObject({
      constructor: NetworkError,
      message: "Request failed: no answer within 20 ms",
    });
  });

  it("refuses numeric options that are not whole numbers within their bounds", () => {
    const bad = {
      maxRetries: [NaN, -1, 11, 1.5, Infinity],
      concurrency: [NaN, Infinity, 0, 65],
      timeoutMs: [Infinity, NaN, 0, 2 ** 31],
      maxRetryDelayMs: [-1, NaN, Infinity, 2 ** 31],
    };
    for (const [name, values] of Object.entries(bad)) {
      for (const value of values) {
        const error = thrown(() => new LogoLookup({ secretKey: KEY, baseUrl: BASE, [name]: value }));
        expect(error, `${name}: ${value}`).toMatchObject({
          constructor: ConfigurationError,
          message: expect.stringMatching(new RegExp(`^${name} must be a whole number from`)),
        });
      }
    }
    for (const good of [
      { maxRetries: 0 },
      { maxRetries: 10 },
      { concurrency: 1 },
      { concurrency: 64 },
      { timeoutMs: 2 ** 31 - 1 },
      { maxRetryDelayMs: 0 },
      { maxRetryDelayMs: 2 ** 31 - 1 },
    ]) {
      expect(() => new LogoLookup({ secretKey: KEY, baseUrl: BASE, ...good })).not.toThrow();
    }
  });

  it("sends the key over https only, or over http to this machine", () => {
    for (const baseUrl of [
      "http://logos.example.com",
      "http://10.0.0.1:8787",
      "ftp://logos.example.com",
      "logos.example.com",
      "https://user:secret@logos.example.com",
    ]) {
      expect(
        thrown(() => new LogoLookup({ secretKey: KEY, baseUrl })),
        baseUrl,
      ).toBeInstanceOf(ConfigurationError);
    }
    for (const baseUrl of ["https://logos.example.com/", "http://localhost:8787", "http://127.0.0.1:9", "http://[::1]:8787"]) {
      expect(() => new LogoLookup({ secretKey: KEY, baseUrl })).not.toThrow();
    }
  });

  it("never follows a redirect (the key would go along): a ServerError saying where it led", async () => {
    const { sdk } = await client({
      fetch: async () => new Response(null, { status: 302, headers: { Location: "https://elsewhere.example/x" } }),
    });
    await expect(sdk.get("redirected.com")).rejects.toMatchObject({
      constructor: ServerError,
      status: 502,
      message: expect.stringContaining("redirect to https://elsewhere.example/x"),
    });
    await expect(sdk.usage()).rejects.toBeInstanceOf(ServerError);
  });

  it("an error page that is not the service's (a proxy's HTML) is told by its status line, not its body", async () => {
    const page = `<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>${"<p>nginx</p>".repeat(200)}</body></html>`;
    const { sdk } = await client({
      maxRetries: 0,
      fetch: async () => new Response(page, { status: 502, statusText: "Bad Gateway", headers: { "Content-Type": "text/html" } }),
    });
    await expect(sdk.get("proxied.com")).rejects.toMatchObject({
      constructor: ServerError,
      status: 502,
      code: "internal",
      message: "HTTP 502 Bad Gateway",
    });
    await expect(sdk.usage()).rejects.toMatchObject({ constructor: ServerError, status: 502, message: "HTTP 502 Bad Gateway" });
  });

  it("a 200 that is not the service's JSON is a ServerError (502), not a success or a 200", async () => {
    const { sdk } = await client({
      fetch: async () => new Response("<html>Welcome to the captive portal</html>", { headers: { "Content-Type": "text/html" } }),
    });
    await expect(sdk.usage()).rejects.toMatchObject({
      constructor: ServerError,
      status: 502,
      message: expect.stringContaining("not the service's JSON"),
    });
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
    const unknown = await emptySite();
    for await (const result of sdk.getMany(["many-c.com", unknown, "many-a.com", "bad domain", "many-b.com"], { size: 16 }))
      results.push(result);
    expect(results.map((r) => [r.domain, r.ok])).toEqual([
      ["many-c.com", true],
      [unknown, false],
      ["many-a.com", true],
      ["bad domain", false],
      ["many-b.com", true],
    ]);
    expect(results[1]!.ok === false && results[1]!.error).toBeInstanceOf(NotFoundError);
    expect(most).toBeLessThanOrEqual(2);
  });
});

describe("LogoLookup.getMany, domains it cannot ask for", () => {
  it("yields each as that domain's failure and goes on with the rest, earlier results included", async () => {
    await companies("many-before.com", "many-after.com");
    const { sdk } = await client({ concurrency: 2 });
    const results = [];
    for await (const result of sdk.getMany(["many-before.com", "bad\uD800.com", null as unknown as string, "mcp", "many-after.com"]))
      results.push(result);
    expect(results.map((r) => [JSON.stringify(r.domain), r.ok ? "logo" : r.error.name])).toEqual([
      ['"many-before.com"', "logo"],
      ['"bad\\ud800.com"', "InvalidRequestError"],
      ["null", "InvalidRequestError"],
      ['"mcp"', "InvalidRequestError"],
      ['"many-after.com"', "logo"],
    ]);
  });
});

describe("LogoLookup.getMany, a caller that stops early", () => {
  it("stops the requests in flight and their retries: none reaches the service after the caller stopped", async () => {
    await companies("stop-first.com");
    const asked: string[] = [];
    const aborted: string[] = [];
    let busyWaits!: () => void;
    const busyWaiting = new Promise<void>((resolve) => (busyWaits = resolve));
    const clock: (() => void)[] = [];
    const { sdk } = await client({
      concurrency: 3,
      // A fake clock that knows nothing of the caller stopping: the SDK must stop waiting itself.
      sleep: () => {
        busyWaits();
        return new Promise((resolve) => clock.push(resolve));
      },
      fetch: async (input, init) => {
        const domain = new URL(String(input)).pathname.slice(1);
        asked.push(domain);
        if (domain === "stop-busy.com") return new Response("busy", { status: 503 });
        if (domain === "stop-hanging.com") {
          return new Promise((_, reject) =>
            init!.signal!.addEventListener("abort", () => (aborted.push(domain), reject(init!.signal!.reason))),
          );
        }
        // The first answer comes once the busy domain waits to retry and the other hangs.
        await busyWaiting;
        return workerFetch(input, init);
      },
    });
    const retries: LogoLookupEvents["retry"][] = [];
    sdk.on("retry", (event) => retries.push(event));
    for await (const result of sdk.getMany(["stop-first.com", "stop-busy.com", "stop-hanging.com"])) {
      expect(result).toMatchObject({ domain: "stop-first.com", ok: true });
      break;
    }
    expect(asked).toEqual(["stop-first.com", "stop-busy.com", "stop-hanging.com"]);
    // The clock moves on past the busy domain's wait; its retry would be asked at once (no macrotask between).
    for (const tick of clock.splice(0)) tick();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(asked).toEqual(["stop-first.com", "stop-busy.com", "stop-hanging.com"]);
    expect(retries).toHaveLength(1);
    // The request in flight was cancelled, not left to run out its time.
    expect(aborted).toEqual(["stop-hanging.com"]);
  });
});

describe("LogoLookup.getMany, one slow domain", () => {
  it("keeps the other slots busy, holding their results (a bounded number) to yield them in input order", async () => {
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const asked: string[] = [];
    let inFlight = 0;
    let most = 0;
    const { sdk } = await client({
      concurrency: 2,
      fetch: async (input) => {
        const domain = new URL(String(input)).pathname.slice(1);
        asked.push(domain);
        most = Math.max(most, ++inFlight);
        if (domain === "slow.com") await slow;
        inFlight--;
        return pngAnswer();
      },
    });
    const domains = ["slow.com", ...Array.from({ length: 11 }, (_, i) => `quick-${i}.com`)];
    const many = sdk.getMany(domains);
    const first = many.next();
    // While slow.com is in flight the other slot goes on, until 4 × concurrency results are held.
    await vi.waitFor(() => expect(asked).toHaveLength(8));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(asked).toHaveLength(8);
    release();
    const results = [(await first).value];
    for await (const result of many) results.push(result);
    expect(results.map((r) => r.domain)).toEqual(domains);
    expect(most).toBe(2);
  });

  it("takes domains from the iterable only as it starts them, and closes it when the caller stops", async () => {
    let taken = 0;
    let closed = false;
    function* domains() {
      try {
        for (let i = 0; i < 1000; i++, taken++) yield `lazy-${i}.com`;
      } finally {
        closed = true;
      }
    }
    const { sdk } = await client({ concurrency: 2, fetch: async () => pngAnswer() });
    const seen: string[] = [];
    for await (const result of sdk.getMany(domains())) {
      seen.push(result.domain);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual(["lazy-0.com", "lazy-1.com", "lazy-2.com"]);
    expect(taken).toBeLessThanOrEqual(8);
    expect(closed).toBe(true);
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

  it("fails at once on a 5xx whose Retry-After is longer than maxRetryDelayMs, as on a 429", async () => {
    let calls = 0;
    const dayLong = () =>
      new Response("Service temporarily unavailable", {
        status: 503,
        headers: { "Retry-After": "86400", "Content-Type": "text/plain; charset=utf-8" },
      });
    const { sdk, waits } = await client({ fetch: async () => (calls++, dayLong()) });
    await expect(sdk.get("down-for-a-day.com")).rejects.toMatchObject({
      constructor: ServerError,
      status: 503,
      code: "unavailable",
      message: "Service temporarily unavailable",
    });
    expect([calls, waits]).toEqual([1, []]);
  });

  it("a real 429 from the Worker: rate-limit events with Retry-After, then RateLimitError when the wait is too long", async () => {
    freezeClock({ secondsIntoMinute: 30 });
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
    expect((error as RateLimitError).retryAfter).toBe(30);
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
    await expect(sdk.company(999999)).rejects.toMatchObject({
      constructor: NotFoundError,
      code: "not_found",
      message: "No company found with ID 999999",
    });
    expect(await sdk.usage()).toMatchObject({ plan: "launch" });
  });

  it("search refuses a limit outside 1-50 before asking, as get does a size", async () => {
    await companies("limit-a.com", "limit-b.com");
    const asked: string[] = [];
    const { sdk } = await client({ fetch: (input, init) => (asked.push(String(input)), workerFetch(input, init)) });
    for (const limit of [0, 51, 2.5, NaN]) {
      await expect(sdk.search("limit", { limit }), String(limit)).rejects.toMatchObject({
        constructor: InvalidRequestError,
        status: 400,
        code: "invalid_argument",
        message: "limit must be a whole number from 1 to 50",
      });
    }
    expect(asked).toEqual([]);
    expect((await sdk.search("limit", { limit: 1 })).results).toHaveLength(1);
  });
});
