import { LogoLookupError, NetworkError, RateLimitError, ServerError } from "./errors.js";
import { errorFrom } from "./answers.js";
import type { Listener, LogoLookupEvents } from "./types.js";

/** How the client reaches the service, once its options are checked (client.ts). */
export interface TransportSettings {
  secretKey: string;
  /** The service's address, without a trailing slash. */
  baseUrl: string;
  /** Its origin, named in errors instead of a URL that may carry more. */
  origin: string;
  maxRetries: number;
  maxRetryDelayMs: number;
  timeoutMs: number;
  fetcher: typeof fetch;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Requests to the service with the secret key: retries with backoff, Retry-After, the attempt's
 * timeout, redirects refused, and the events listeners hear of (rate limits, quota, retries).
 */
export class Transport {
  private readonly listeners = new Map<keyof LogoLookupEvents, Set<Listener<never>>>();

  constructor(private readonly settings: TransportSettings) {}

  on<K extends keyof LogoLookupEvents>(name: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => this.off(name, listener);
  }

  off<K extends keyof LogoLookupEvents>(name: K, listener: Listener<K>): void {
    this.listeners.get(name)?.delete(listener as Listener<never>);
  }

  emit<K extends keyof LogoLookupEvents>(name: K, event: LogoLookupEvents[K]): void {
    for (const listener of this.listeners.get(name) ?? []) {
      try {
        (listener as Listener<K>)(event);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  async json<T>(path: string): Promise<T> {
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
  async request<T>(path: string, read: (response: Response) => Promise<T>, stop?: AbortSignal): Promise<T> {
    const url = `${this.settings.baseUrl}${path}`;
    for (let attempt = 0; ; attempt++) {
      const failedToAnswer = async (reason: string, cause: unknown) => {
        if (stop?.aborted) throw stopped(stop);
        if (attempt >= this.settings.maxRetries) throw new NetworkError(`Request failed: ${reason}`, cause);
        await this.backoff(url, null, attempt, null, stop);
      };
      const signal = attemptSignal(this.settings.timeoutMs, stop);
      try {
        let response: Response;
        try {
          response = await this.settings.fetcher(url, {
            headers: { Authorization: `Bearer ${this.settings.secretKey}`, Accept: "image/*, application/json" },
            signal: signal.signal,
            redirect: "manual",
          });
        } catch (cause) {
          // Not fetch's message: it may quote the request, the Authorization header with it.
          await failedToAnswer(
            isTimeout(cause) ? `no answer within ${this.settings.timeoutMs} ms` : `could not reach ${this.settings.origin}`,
            cause,
          );
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
          const willRetry = attempt < this.settings.maxRetries && (waitMs ?? 0) <= this.settings.maxRetryDelayMs;
          this.emit("ratelimit", { url, retryAfter: waitMs === null ? null : waitMs / 1000, resetAt, attempt, willRetry });
          if (!willRetry) {
            await response.body?.cancel();
            throw new RateLimitError("Rate limit exceeded", waitMs === null ? null : waitMs / 1000, resetAt);
          }
          await response.body?.cancel();
          await this.backoff(url, 429, attempt, waitMs, stop);
          continue;
        }
        if (response.status >= 500 && attempt < this.settings.maxRetries && (waitMs ?? 0) <= this.settings.maxRetryDelayMs) {
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
    await untilStopped(this.settings.sleep(delayMs, stop), stop);
    if (stop?.aborted) throw stopped(stop);
  }

  private reportQuota(response: Response): void {
    const remaining = response.headers.get("x-ratelimit-remaining");
    if (remaining === null || !/^\d+$/.test(remaining)) return;
    const reset = Number(response.headers.get("x-ratelimit-reset"));
    this.emit("quota", { remaining: Number(remaining), resetAt: Number.isFinite(reset) && reset > 0 ? reset * 1000 : null });
  }
}

function retryAfterMs(header: string | null, now: number): number | null {
  if (header === null) return null;
  if (/^\d+$/.test(header.trim())) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

const messageOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause));
/** AbortSignal.timeout's reason, which fetch rejects with. */
const isTimeout = (cause: unknown) => typeof cause === "object" && cause !== null && (cause as { name?: unknown }).name === "TimeoutError";

/** What a request getMany's caller no longer waits for ends with; no one reads it. */
const stopped = (stop: AbortSignal) => new NetworkError("Request stopped: the caller of getMany stopped before its answer", stop.reason);

/** The default wait between retries: its timer cleared when `stop` aborts, so that it holds no process open. */
export function pause(ms: number, stop?: AbortSignal): Promise<void> {
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
 * An attempt's signal: its time running out or `stop` aborting, whichever comes first. Made by
 * hand rather than with AbortSignal.any so that `release` can forget `stop` once the attempt is
 * over: a long getMany does not gather one listener per request on the caller's signal.
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
