import {
  ConfigurationError,
  errorForStatus,
  InvalidRequestError,
  LogoLookupError,
  NetworkError,
  RateLimitError,
  ServerError,
} from "./errors.js";

/**
 * The server SDK (spec section 5): logos by domain with a secret key, for Node 18+ and
 * Workers alike (fetch, ReadableStream and nothing else). The key goes in the Authorization
 * header, never in a URL, and only over https (or http to this machine). 429s and 5xx answers
 * are retried with exponential backoff, waiting as long as the service's Retry-After asks up to
 * maxRetryDelayMs; listeners hear of rate limits and quota.
 */
export interface LogoLookupOptions {
  /** A secret key (`sk_…`); default: the LOGO_LOOKUP_SECRET_KEY environment variable. */
  secretKey?: string;
  /** The service's address; default: LOGO_LOOKUP_BASE_URL. */
  baseUrl?: string;
  /** Retries after a 429, a 5xx or a network failure, 0-10 (default 3). */
  maxRetries?: number;
  /**
   * A Retry-After longer than this is not waited for: the call fails at once with the answer's
   * error, RateLimitError or ServerError (default 60 s; at most 2^31-1 ms, about 24.8 days).
   */
  maxRetryDelayMs?: number;
  /** Lookups in flight at once in getMany, 1-64 (default 4). */
  concurrency?: number;
  /** Per attempt, reading the answer included (default 30 s; 1 to 2^31-1 ms); a getStream stream must be read within it too. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /**
   * How the SDK waits between retries; tests pass a fake clock. `signal` aborts when a getMany
   * caller stops early: the SDK stops waiting then, whether or not `sleep` does.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface LogoOptions {
  /** Output width in pixels, 1-1200 (default 128); aspect ratio kept. */
  size?: number;
  greyscale?: boolean;
  /** The background the logo goes on: ink that would vanish on it comes lighter or darker, its hue kept. */
  theme?: "light" | "dark";
  /**
   * A domain without a logo: "monogram" answers with a generated SVG monogram (`source:
   * "monogram"`, logoId and companyId 0) instead of NotFoundError; "none" insists on the
   * error whatever the key's default.
   */
  fallback?: "monogram" | "none";
  /** Image format (default png); `svg` is the sanitised vector where the logo has one, PNG otherwise (see `format` in the result). */
  format?: "png" | "webp" | "avif" | "jpg" | "svg";
  /** Pixel density: the image is `size × dpr` wide, but never wider than the stored master. */
  dpr?: 1 | 2 | 3;
}

export interface LogoMetadata {
  logoId: number;
  companyId: number;
  companyName: string;
  domain: string;
  variant: "full" | "icon";
  width: number;
  height: number;
  sourceWidth: number;
  sourceHeight: number;
  contentType: string;
  /** Where the image comes from: the catalogue, discovered on the domain's own site, or a generated monogram. */
  source: "catalogue" | "discovered" | "monogram";
  /** The format served: the one asked for, or png where an svg was asked of a raster-only logo. */
  format: string;
  /** The company's brand colour (`#rrggbb`), where the catalogue knows it. */
  brandColor: string | null;
}

export interface Logo extends LogoMetadata {
  bytes: Uint8Array;
}

export type LogoResult = { domain: string; ok: true; logo: Logo } | { domain: string; ok: false; error: LogoLookupError };

/** Event names and payloads, for `on(name, listener)`. */
export interface LogoLookupEvents {
  /** A 429 arrived; `willRetry` says whether the SDK waits `retryAfter` seconds and tries again. */
  ratelimit: { url: string; retryAfter: number | null; resetAt: number | null; attempt: number; willRetry: boolean };
  /** Requests left in the key's tightest window, from every answer that says so. */
  quota: { remaining: number; resetAt: number | null };
  /** A retry is about to happen after `delayMs` (429, 5xx or network failure). */
  retry: { url: string; status: number | null; attempt: number; delayMs: number };
}

type Listener<K extends keyof LogoLookupEvents> = (event: LogoLookupEvents[K]) => void;

const MAX_SIZE = 1200;
/** The REST search's most results (the service's bound). */
const MAX_SEARCH_LIMIT = 50;
/** The longest wait setTimeout keeps (about 24.8 days): a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** getMany holds at most this many results per slot: in flight, or done and waiting for an earlier domain's. */
const RESULTS_PER_SLOT = 4;
/** A host name as the service's GET /{domain} reads one (src/lib/domain.ts, copied as SECRET_KEY is). */
const NOT_HOST_CHARACTER = /[\s/\\?#@:%[\]]/u;
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const MAX_HOST_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
/** A secret key as the service issues it (src/keys/format.ts, copied: the SDK is built without the Worker's code). */
const SECRET_KEY = /^sk_[0-9A-Za-z]{32}$/;
/** Hosts a key may be sent to over plain http: this machine's, for development. */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
const environment = (name: string): string | undefined =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];

/**
 * Why the service would never look `domain` up as a domain, or null when it might. The spec's
 * `GET /{domain}` takes a "company domain, without protocol or path" (interface.md, section 1),
 * and the service reads a path as one only when it is a host name of two labels or more
 * (src/lib/domain.ts: the checks below, all but its Public Suffix List and IP address ones);
 * names and tickers have routes of their own (`/name/…`, `/ticker/…`), which get does not use.
 * Any other first segment is one of the service's own routes (`/mcp`, `/portal`, `/v1`,
 * `/authorize`…), whose answer (a 401, a page, a 404) would say nothing of the domain, and
 * which the secret key has no business reaching.
 */
function notADomain(domain: unknown): string | null {
  if (typeof domain !== "string") return `A domain is a string, not ${domain === null ? "null" : typeof domain}`;
  const quoted = JSON.stringify(domain);
  // encodeURIComponent throws on a lone surrogate: no URL can carry it.
  if (/\p{Cs}/u.test(domain)) return `${quoted} is not a domain: it is not well-formed Unicode (a lone surrogate)`;
  const host = domain.trim().toLowerCase();
  if (host === "") return "A domain is required, not an empty string";
  if (NOT_HOST_CHARACTER.test(host))
    return `${quoted} is not a domain: a bare host name is (stripe.com), without scheme, path, port or spaces`;
  // The URL parser maps as the service's does (IDNA, full-width dots, punycode).
  let ascii = parsedUrl(`http://${host}`)?.hostname ?? "";
  if (ascii.endsWith(".")) ascii = ascii.slice(0, -1);
  // As the service drops it: only where a domain is left (`www.com` is one).
  if (ascii.startsWith("www.") && ascii.slice(4).includes(".")) ascii = ascii.slice(4);
  const labels = ascii.split(".");
  if (ascii !== "" && labels.length < 2)
    return `${quoted} is not a domain: a domain has a dot (stripe.com); a company's name or ticker finds it with company({ name }) or company({ ticker })`;
  if (
    ascii === "" ||
    ascii.length > MAX_HOST_LENGTH ||
    labels.some((label) => label.length > MAX_LABEL_LENGTH || !HOST_LABEL.test(label))
  ) {
    return `${quoted} is not a domain: not a valid host name`;
  }
  return null;
}

/** A whole-number option within its bounds, or its default when not given. */
function wholeNumber(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max)
    throw new ConfigurationError(`${name} must be a whole number from ${min} to ${max}`);
  return value;
}

function parsedUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

function retryAfterMs(header: string | null, now: number): number | null {
  if (header === null) return null;
  if (/^\d+$/.test(header.trim())) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export class LogoLookup {
  private readonly secretKey: string;
  private readonly baseUrl: string;
  private readonly origin: string;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly concurrency: number;
  private readonly timeoutMs: number;
  private readonly fetcher: typeof fetch;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly listeners = new Map<keyof LogoLookupEvents, Set<Listener<never>>>();

  constructor(options: LogoLookupOptions = {}) {
    const secretKey = options.secretKey ?? environment("LOGO_LOOKUP_SECRET_KEY");
    const baseUrl = options.baseUrl ?? environment("LOGO_LOOKUP_BASE_URL");
    if (!secretKey) throw new ConfigurationError("A secret key (sk_…) is required: pass secretKey or set LOGO_LOOKUP_SECRET_KEY");
    // Checked here, not left to fetch: a key it cannot send (a stray line break) failed every call
    // as a NetworkError quoting the header. The message never quotes the key.
    if (!SECRET_KEY.test(secretKey)) {
      throw new ConfigurationError(
        "The secret key is not one: a secret key is sk_ and 32 letters or digits, with nothing around it (no space, no line break)",
      );
    }
    if (!baseUrl) throw new ConfigurationError("The service's address is required: pass baseUrl or set LOGO_LOOKUP_BASE_URL");
    const url = parsedUrl(baseUrl);
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:"))
      throw new ConfigurationError("The service's address (baseUrl) must be an https:// URL");
    if (url.protocol === "http:" && !LOCAL_HOSTS.has(url.hostname)) {
      throw new ConfigurationError(
        "The service's address (baseUrl) must be https://: over http:// the secret key would travel unencrypted (http:// is for localhost only)",
      );
    }
    if (url.username || url.password)
      throw new ConfigurationError("The service's address (baseUrl) must not carry a user name or password");
    this.secretKey = secretKey;
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.origin = url.origin;
    this.maxRetries = wholeNumber("maxRetries", options.maxRetries, 3, 0, 10);
    // Every wait is at most this (the backoff's own are shorter), so none overflows setTimeout.
    this.maxRetryDelayMs = wholeNumber("maxRetryDelayMs", options.maxRetryDelayMs, 60_000, 0, MAX_TIMER_MS);
    this.concurrency = wholeNumber("concurrency", options.concurrency, 4, 1, 64);
    this.timeoutMs = wholeNumber("timeoutMs", options.timeoutMs, 30_000, 1, MAX_TIMER_MS);
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
    this.sleep = options.sleep ?? pause;
  }

  on<K extends keyof LogoLookupEvents>(name: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => this.off(name, listener);
  }

  off<K extends keyof LogoLookupEvents>(name: K, listener: Listener<K>): void {
    this.listeners.get(name)?.delete(listener as Listener<never>);
  }

  private emit<K extends keyof LogoLookupEvents>(name: K, event: LogoLookupEvents[K]): void {
    for (const listener of this.listeners.get(name) ?? []) {
      try {
        (listener as Listener<K>)(event);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** A company's logo as image bytes (PNG unless `format` says otherwise) with its metadata. */
  get(domain: string, options: LogoOptions = {}): Promise<Logo> {
    return this.lookup(domain, options, logoOf);
  }

  /**
   * The PNG as a stream, for piping straight on. Should the answer break off while it is read,
   * the stream errors with a NetworkError (it is not retried: part of it was read already).
   */
  getStream(domain: string, options: LogoOptions = {}): Promise<ReadableStream<Uint8Array>> {
    return this.lookup(domain, options, async (response) => {
      if (!response.body) throw errorForStatus(502, "Empty response", null);
      return brokenOffAsNetworkError(response.body);
    });
  }

  /**
   * Logos for many domains, yielded in input order, at most `concurrency` requests in flight.
   * A slow domain holds back the results after it, not the requests: the other slots go on,
   * their results kept until its own is yielded (up to RESULTS_PER_SLOT × `concurrency` held
   * in all). Domains are taken from `domains` only as they are started, so it may be long or
   * endless. A failed domain is a value (`ok: false`), never a thrown error. A caller that
   * stops early stops the requests still in flight and their retries.
   */
  async *getMany(domains: Iterable<string>, options: LogoOptions = {}): AsyncGenerator<LogoResult> {
    const source = domains[Symbol.iterator]();
    const stop = new AbortController();
    // In input order, from the next to be yielded: each is in flight until its `result` is set.
    const held: { promise: Promise<LogoResult>; result?: LogoResult }[] = [];
    let exhausted = false;
    const startMore = () => {
      let inFlight = held.filter((entry) => !entry.result).length;
      while (!exhausted && inFlight < this.concurrency && held.length < this.concurrency * RESULTS_PER_SLOT) {
        const next = source.next();
        if (next.done) {
          exhausted = true;
          return;
        }
        const domain = next.value;
        const promise = this.lookup(domain, options, logoOf, stop.signal).then(
          (logo): LogoResult => ({ domain, ok: true, logo }),
          (error: LogoLookupError): LogoResult => ({ domain, ok: false, error }),
        );
        const entry: (typeof held)[number] = { promise };
        void promise.then((result) => (entry.result = result));
        held.push(entry);
        inFlight++;
      }
    };
    try {
      for (startMore(); held.length > 0; startMore()) {
        const result = held[0]!.result;
        if (!result) {
          await Promise.race(held.filter((entry) => !entry.result).map((entry) => entry.promise));
          continue;
        }
        held.shift();
        startMore();
        yield result;
      }
    } finally {
      // A caller that stops early closes the source, as for…of would, and no answer it will
      // never read goes on costing its quota.
      stop.abort();
      if (!exhausted) source.return?.();
    }
  }

  /** REST: companies by name, domain or ticker. */
  search(
    query: string,
    options: { limit?: number } = {},
  ): Promise<{ results: { companyId: number; companyName: string; domain: string; brandColor: string | null; matchedBy: string }[] }> {
    const { limit } = options;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT)) {
      return Promise.reject(errorForStatus(400, `limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT}`, "invalid_argument"));
    }
    const params = new URLSearchParams({ q: query, ...(limit !== undefined ? { limit: String(limit) } : {}) });
    return this.json(`/v1/companies/search?${params}`);
  }

  /** REST: a company's metadata and logos, by id or by one of domain, ticker or name. */
  company(which: number | { domain: string } | { ticker: string } | { name: string }): Promise<Record<string, unknown>> {
    if (typeof which === "number") return this.json(`/v1/companies/${which}`);
    return this.json(`/v1/companies/lookup?${new URLSearchParams(which as Record<string, string>)}`);
  }

  /** REST: the plan, and usage against its limits. */
  usage(): Promise<Record<string, unknown>> {
    return this.json("/v1/usage");
  }

  /**
   * A lookup, its answer read by `read` once it is known to be an image. Async throughout: a
   * domain refused here is a rejection, and in getMany that domain's `ok: false`.
   */
  private async lookup<T>(domain: string, options: LogoOptions, read: (response: Response) => Promise<T>, stop?: AbortSignal): Promise<T> {
    const refusal = notADomain(domain);
    if (refusal) throw new InvalidRequestError(refusal, 400, "invalid_argument");
    const size = options.size ?? 128;
    if (!Number.isInteger(size) || size < 1 || size > MAX_SIZE) {
      throw errorForStatus(400, `size must be a whole number from 1 to ${MAX_SIZE}`, "invalid_argument");
    }
    const params = new URLSearchParams({ size: String(size) });
    if (options.greyscale) params.set("greyscale", "true");
    if (options.theme) params.set("theme", options.theme);
    if (options.fallback) params.set("fallback", options.fallback);
    if (options.format && options.format !== "png") params.set("format", options.format);
    if (options.dpr && options.dpr !== 1) params.set("dpr", String(options.dpr));
    return this.request(
      `/${encodeURIComponent(domain.trim())}?${params}`,
      async (response) => {
        // Anything but an image (a page of the service's own, under a name that is not a domain) is
        // no logo: the request was wrong, a 400 as the size check's, whatever status came with it.
        const type = response.headers.get("content-type") ?? "";
        if (!type.startsWith("image/")) {
          await response.body?.cancel();
          throw new InvalidRequestError(
            `Not a logo: the service answered ${type || "no content type"} for ${JSON.stringify(domain)}, which is not a domain it looks up`,
            400,
            "invalid_argument",
          );
        }
        return read(response);
      },
      stop,
    );
  }

  private async json<T>(path: string): Promise<T> {
    const text = await this.request(path, (response) => response.text());
    try {
      return JSON.parse(text) as T;
    } catch {
      // Not an answer the service gives (a proxy's page, or baseUrl not the service): a 502 as getStream's empty answer.
      throw new ServerError("The answer is not the service's JSON: is baseUrl the service's address?", 502, "internal");
    }
  }

  /**
   * One request, retried after a 429, a 5xx or a network failure; an answer that breaks off
   * while `read` reads it (the connection dropped, the attempt's time ran out) counts as a
   * network failure. What `read` throws of its own (a LogoLookupError) is not retried. Redirects
   * are not followed: the key would go along to wherever they lead. `stop` aborting ends the
   * request where it is: the attempt in flight, or the wait before the next.
   */
  private async request<T>(path: string, read: (response: Response) => Promise<T>, stop?: AbortSignal): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    for (let attempt = 0; ; attempt++) {
      const failedToAnswer = async (reason: string, cause: unknown) => {
        if (stop?.aborted) throw stopped(stop);
        if (attempt >= this.maxRetries) throw new NetworkError(`Request failed: ${reason}`, cause);
        await this.backoff(url, null, attempt, null, stop);
      };
      const signal = attemptSignal(this.timeoutMs, stop);
      try {
        let response: Response;
        try {
          response = await this.fetcher(url, {
            headers: { Authorization: `Bearer ${this.secretKey}`, Accept: "image/*, application/json" },
            signal: signal.signal,
            redirect: "manual",
          });
        } catch (cause) {
          // Not fetch's message: it may quote the request, the Authorization header with it.
          await failedToAnswer(isTimeout(cause) ? `no answer within ${this.timeoutMs} ms` : `could not reach ${this.origin}`, cause);
          continue;
        }
        this.reportQuota(response);
        if (response.ok) {
          try {
            return await read(response);
          } catch (cause) {
            if (cause instanceof LogoLookupError) throw cause;
            // The body's own failure ("terminated", the timeout), which knows nothing of the request's headers.
            await failedToAnswer(messageOf(cause), cause);
            continue;
          }
        }
        // The service answers a secret key with bytes or JSON, never a redirect.
        if (response.status >= 300 && response.status < 400) {
          await response.body?.cancel();
          const to = response.headers.get("location");
          throw new ServerError(
            `The answer was a redirect${to ? ` to ${to}` : ""}, not followed: the secret key would go along. Is baseUrl the service's address?`,
            502,
            "internal",
          );
        }

        const waitMs = retryAfterMs(response.headers.get("retry-after"), Date.now());
        const reset = Number(response.headers.get("x-ratelimit-reset"));
        const resetAt = Number.isFinite(reset) && reset > 0 ? reset * 1000 : null;
        if (response.status === 429) {
          const willRetry = attempt < this.maxRetries && (waitMs ?? 0) <= this.maxRetryDelayMs;
          this.emit("ratelimit", { url, retryAfter: waitMs === null ? null : waitMs / 1000, resetAt, attempt, willRetry });
          if (!willRetry) {
            await response.body?.cancel();
            throw new RateLimitError("Rate limit exceeded", waitMs === null ? null : waitMs / 1000, resetAt);
          }
          await response.body?.cancel();
          await this.backoff(url, 429, attempt, waitMs, stop);
          continue;
        }
        if (response.status >= 500 && attempt < this.maxRetries && (waitMs ?? 0) <= this.maxRetryDelayMs) {
          await response.body?.cancel();
          await this.backoff(url, response.status, attempt, waitMs, stop);
          continue;
        }
        throw await errorFrom(response);
      } finally {
        signal.release();
      }
    }
  }

  private async backoff(url: string, status: number | null, attempt: number, retryAfter: number | null, stop?: AbortSignal): Promise<void> {
    if (stop?.aborted) throw stopped(stop);
    // Exponential from 250 ms with jitter, unless the service named its own wait.
    const delayMs = retryAfter ?? Math.min(10_000, 250 * 2 ** attempt) + Math.floor(Math.random() * 100);
    this.emit("retry", { url, status, attempt: attempt + 1, delayMs });
    await untilStopped(this.sleep(delayMs, stop), stop);
    if (stop?.aborted) throw stopped(stop);
  }

  private reportQuota(response: Response): void {
    const remaining = response.headers.get("x-ratelimit-remaining");
    if (remaining === null || !/^\d+$/.test(remaining)) return;
    const reset = Number(response.headers.get("x-ratelimit-reset"));
    this.emit("quota", { remaining: Number(remaining), resetAt: Number.isFinite(reset) && reset > 0 ? reset * 1000 : null });
  }
}

const messageOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause));
/** AbortSignal.timeout's reason, which fetch rejects with. */
const isTimeout = (cause: unknown) => typeof cause === "object" && cause !== null && (cause as { name?: unknown }).name === "TimeoutError";

const logoOf = async (response: Response): Promise<Logo> => ({
  ...metadataOf(response),
  bytes: new Uint8Array(await response.arrayBuffer()),
});

/** What a request getMany's caller no longer waits for ends with; no one reads it. */
const stopped = (stop: AbortSignal) => new NetworkError("Request stopped: the caller of getMany stopped before its answer", stop.reason);

/** The default wait between retries: its timer cleared when `stop` aborts, so that it holds no process open. */
function pause(ms: number, stop?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stop?.addEventListener("abort", done);
  });
}

/** `wait`, or less when `stop` aborts first (a `sleep` of the caller's may not listen to it). */
function untilStopped(wait: Promise<void>, stop: AbortSignal | undefined): Promise<void> {
  if (!stop) return wait;
  if (stop.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = () => {
      stop.removeEventListener("abort", done);
      resolve();
    };
    stop.addEventListener("abort", done);
    wait.then(done, (error: unknown) => {
      stop.removeEventListener("abort", done);
      reject(error);
    });
  });
}

/**
 * An attempt's signal: its time running out or `stop` aborting, whichever comes first.
 * (AbortSignal.any would do, but not on every Node 18.) `release` forgets `stop` once the
 * attempt is over, so that a long getMany does not gather one listener per request.
 */
function attemptSignal(timeoutMs: number, stop: AbortSignal | undefined): { signal: AbortSignal; release: () => void } {
  const timeout = AbortSignal.timeout(timeoutMs);
  if (!stop) return { signal: timeout, release: () => {} };
  const attempt = new AbortController();
  const abortWith = (signal: AbortSignal) => () => attempt.abort(signal.reason);
  const onStop = abortWith(stop);
  if (stop.aborted) onStop();
  timeout.addEventListener("abort", abortWith(timeout));
  stop.addEventListener("abort", onStop);
  return { signal: attempt.signal, release: () => stop.removeEventListener("abort", onStop) };
}

/** The body, its failure while read (the connection dropped, the time ran out) a NetworkError. */
function brokenOffAsNetworkError(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (cause) {
        controller.error(new NetworkError(`The answer broke off: ${messageOf(cause)}`, cause));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

const sourceOf = (value: string): LogoMetadata["source"] => (value === "discovered" || value === "monogram" ? value : "catalogue");

function metadataOf(response: Response): LogoMetadata {
  const header = (name: string) => response.headers.get(name) ?? "";
  const number = (name: string) => Number(header(name));
  return {
    logoId: number("x-logo-id"),
    companyId: number("x-company-id"),
    companyName: decodeURIComponent(header("x-company-name")),
    domain: header("x-logo-domain"),
    variant: header("x-logo-variant") === "full" ? "full" : "icon",
    width: number("x-logo-width"),
    height: number("x-logo-height"),
    sourceWidth: number("x-source-width"),
    sourceHeight: number("x-source-height"),
    contentType: header("content-type"),
    source: sourceOf(header("x-logo-source")),
    format: formatOf(header("content-type")),
    brandColor: /^#[0-9a-f]{6}$/.test(header("x-brand-color")) ? header("x-brand-color") : null,
  };
}

/** The service's plain-text messages are a short line; anything longer is not one of them. */
const MAX_PLAIN_MESSAGE = 500;

const FORMATS: Record<string, string> = {
  "image/png": "png",
  "image/webp": "webp",
  "image/avif": "avif",
  "image/jpeg": "jpg",
  "image/svg+xml": "svg",
};
const formatOf = (contentType: string) => FORMATS[contentType.split(";")[0]!.trim()] ?? contentType;

/**
 * The service answers lookups in plain text (one short line) and its JSON surfaces as
 * `{error: <message>, code: <code>}`; servers before that shape answered `{error: {code,
 * message}}`, read too. Without a code in the body, the error's code is the status's
 * (errorForStatus). Any other body (a proxy's HTML error page) is not a message: the status
 * line stands for it.
 */
async function errorFrom(response: Response): Promise<LogoLookupError> {
  const text = (await response.text().catch(() => "")).trim();
  let message = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  let code: string | null = null;
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("text/plain") && text && text.length <= MAX_PLAIN_MESSAGE && !text.includes("\n")) message = text;
  try {
    const body = JSON.parse(text) as { error?: string | { code?: string; message?: string }; code?: string };
    const error = typeof body.error === "string" ? { message: body.error, code: body.code } : body.error;
    if (typeof error?.message === "string" && error.message) {
      message = error.message;
      code = error.code ?? null;
    }
  } catch {
    // Not the JSON shape.
  }
  return errorForStatus(response.status, message, code);
}
