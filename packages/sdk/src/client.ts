import { ConfigurationError, errorForStatus, InvalidRequestError, type LogoLookupError, ServerError } from "./errors.js";
import { brokenOffAsNetworkError, logoOf } from "./answers.js";
import { notADomain, parsedUrl } from "./domains.js";
import { pause, Transport } from "./transport.js";
import type { CompanyKey, Listener, Logo, LogoLookupEvents, LogoLookupOptions, LogoOptions, LogoResult } from "./types.js";

/**
 * The server SDK (docs/interface.md, section 5): logos by domain with a secret key, for Node 20+,
 * Workers, Deno and Bun alike (fetch, ReadableStream and nothing else). The key goes in the Authorization
 * header, never in a URL, and only over https (or http to this machine). 429s and 5xx answers
 * are retried with exponential backoff, waiting as long as the service's Retry-After asks up to
 * maxRetryDelayMs; listeners hear of rate limits and quota.
 */
const MAX_SIZE = 1200;
/** The REST search's most results (the service's bound). */
const MAX_SEARCH_LIMIT = 50;
/** The longest wait setTimeout keeps (about 24.8 days): a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** getMany holds at most this many results per slot: in flight, or done and waiting for an earlier domain's. */
const RESULTS_PER_SLOT = 4;
/** A secret key as the service issues it (src/keys/format.ts, copied: the SDK is built without the Worker's code). */
const SECRET_KEY = /^sk_[0-9A-Za-z]{32}$/;
/** Hosts a key may be sent to over plain http: this machine's, for development. */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
const environment = (name: string): string | undefined =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];

/** A whole-number option within its bounds, or its default when not given. */
function wholeNumber(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max)
    throw new ConfigurationError(`${name} must be a whole number from ${min} to ${max}`);
  return value;
}

export class LogoLookup {
  private readonly concurrency: number;
  private readonly transport: Transport;

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
    this.concurrency = wholeNumber("concurrency", options.concurrency, 4, 1, 64);
    this.transport = new Transport({
      secretKey,
      baseUrl: baseUrl.replace(/\/+$/, ""),
      origin: url.origin,
      maxRetries: wholeNumber("maxRetries", options.maxRetries, 3, 0, 10),
      // Every wait is at most this (the backoff's own are shorter), so none overflows setTimeout.
      maxRetryDelayMs: wholeNumber("maxRetryDelayMs", options.maxRetryDelayMs, 60_000, 0, MAX_TIMER_MS),
      timeoutMs: wholeNumber("timeoutMs", options.timeoutMs, 30_000, 1, MAX_TIMER_MS),
      fetcher: options.fetch ?? ((input, init) => fetch(input, init)),
      sleep: options.sleep ?? pause,
    });
  }

  on<K extends keyof LogoLookupEvents>(name: K, listener: Listener<K>): () => void {
    return this.transport.on(name, listener);
  }

  off<K extends keyof LogoLookupEvents>(name: K, listener: Listener<K>): void {
    this.transport.off(name, listener);
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

  /** REST: companies by name, domain or ticker; an email address, an ISIN or `crypto:SYMBOL` finds its one company. */
  search(
    query: string,
    options: { limit?: number } = {},
  ): Promise<{ results: { companyId: number; companyName: string; domain: string; brandColor: string | null; matchedBy: string }[] }> {
    const { limit } = options;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT)) {
      return Promise.reject(errorForStatus(400, `limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT}`, "invalid_argument"));
    }
    const params = new URLSearchParams({ q: query, ...(limit !== undefined ? { limit: String(limit) } : {}) });
    return this.transport.json(`/v1/companies/search?${params}`);
  }

  /**
   * REST: a company's metadata and logos, by id or by one key: its domain, ticker, ISIN, crypto
   * symbol, an email address at its domain, or its name. A person's address at a free or
   * disposable mail provider rejects with a NotFoundError that says so.
   */
  company(which: number | CompanyKey): Promise<Record<string, unknown>> {
    if (typeof which === "number") return this.transport.json(`/v1/companies/${which}`);
    return this.transport.json(`/v1/companies/lookup?${new URLSearchParams(which as Record<string, string>)}`);
  }

  /** REST: the plan, and usage against its limits. */
  usage(): Promise<Record<string, unknown>> {
    return this.transport.json("/v1/usage");
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
    return this.transport.request(
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
    const text = await this.transport.request(path, (response) => response.text());
    try {
      return JSON.parse(text) as T;
    } catch {
      // Not an answer the service gives (a proxy's page, or baseUrl not the service): a 502 as getStream's empty answer.
      throw new ServerError("The answer is not the service's JSON: is baseUrl the service's address?", 502, "internal");
    }
  }
}
