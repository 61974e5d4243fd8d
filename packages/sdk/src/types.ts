import type { LogoLookupError } from "./errors.js";

/** The SDK's public types: its options, what a lookup returns, and the events it reports. */

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
  /**
   * Where the image comes from: the catalogue, discovered on the domain's own site, set by the
   * domain's verified owner, your account's own override, or a generated monogram.
   */
  source: "catalogue" | "discovered" | "owner" | "override" | "monogram";
  /** When the image was last written or confirmed as it is (`X-Logo-Updated`); null when the service did not say. */
  updatedAt: Date | null;
  /** The format served: the one asked for, or png where an svg was asked of a raster-only logo. */
  format: string;
  /** The company's brand colour (`#rrggbb`), where the catalogue knows it. */
  brandColor: string | null;
}

export interface Logo extends LogoMetadata {
  bytes: Uint8Array;
}

/** One key `company()` finds a company by; each is one query parameter of /v1/companies/lookup. */
export type CompanyKey =
  | { domain: string }
  | { ticker: string }
  | { isin: string }
  | { crypto: string }
  | { email: string }
  | { name: string };

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

/** A listener of one event. */
export type Listener<K extends keyof LogoLookupEvents> = (event: LogoLookupEvents[K]) => void;
