/**
 * The few calls of Cloudflare's API (v4) a first deployment needs: listing and creating the
 * D1 database, R2 bucket, KV namespace and queue wrangler.toml names, and the names of the
 * Worker's secrets. Every answer comes in the API's envelope, `{success, errors, result}`.
 * `CLOUDFLARE_API_BASE_URL` points it elsewhere, as wrangler reads it too (the tests' fake).
 */
export interface CloudflareApi {
  /** The result of a GET, or null when the API answers 404 (a bucket or script that does not exist). */
  get<T>(path: string): Promise<T | null>;
  post<T>(path: string, body: unknown): Promise<T>;
}

export const DEFAULT_API_BASE = "https://api.cloudflare.com/client/v4";

interface Envelope<T> {
  success: boolean;
  errors?: { code: number; message: string }[];
  result: T;
}

export class CloudflareApiError extends Error {}

export function cloudflareApi(options: { token: string; base?: string; fetch?: typeof fetch }): CloudflareApi {
  const base = (options.base ?? DEFAULT_API_BASE).replace(/\/+$/, "");
  const send = options.fetch ?? fetch;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T | null> => {
    const response = await send(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${options.token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (method === "GET" && response.status === 404) return null;
    const envelope = (await response.json().catch(() => null)) as Envelope<T> | null;
    if (!response.ok || !envelope?.success) {
      const reasons = envelope?.errors?.map((e) => `${e.message} (${e.code})`).join("; ") || `HTTP ${response.status}`;
      // The path names the account and the resource, never the token.
      throw new CloudflareApiError(`${method} ${path}: ${reasons}`);
    }
    return envelope.result;
  };
  return {
    get: (path) => call("GET", path),
    post: async (path, body) => (await call("POST", path, body))!,
  };
}
