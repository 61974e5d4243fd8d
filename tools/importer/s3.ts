import { AwsClient } from "aws4fetch";
import type { ObjectStore } from "../../src/catalogue/importLogo";

/**
 * R2 through its S3-compatible API, for bulk loads into a deployment: many PUTs in parallel
 * straight to the bucket, rather than each object through the remote binding's proxy. Objects
 * come out as the binding writes them: Content-Type and Content-Disposition from `httpMetadata`, `customMetadata` as
 * `x-amz-meta-*` headers, which R2 stores as the object's custom metadata.
 *
 * Needs an R2 API token's S3 credentials (docs/importing.md, "--remote").
 */
export interface S3Settings {
  /** `https://<account id>.r2.cloudflarestorage.com`, or any S3 endpoint. */
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Retries of a request that failed with a 5xx or on the network, with exponential backoff (default 10). */
  retries?: number;
}

/** The settings from R2_S3_ENDPOINT (or CLOUDFLARE_ACCOUNT_ID), R2_ACCESS_KEY_ID and R2_SECRET_ACCESS_KEY, if all are set. */
export function s3SettingsFrom(environment: Record<string, string | undefined>, bucket: string): S3Settings | undefined {
  const endpoint =
    environment.R2_S3_ENDPOINT ||
    (environment.CLOUDFLARE_ACCOUNT_ID ? `https://${environment.CLOUDFLARE_ACCOUNT_ID}.r2.cloudflarestorage.com` : undefined);
  const { R2_ACCESS_KEY_ID: accessKeyId, R2_SECRET_ACCESS_KEY: secretAccessKey } = environment;
  if (!endpoint || !accessKeyId || !secretAccessKey) return undefined;
  return { endpoint: endpoint.replace(/\/+$/, ""), bucket, accessKeyId, secretAccessKey };
}

// RFC 3986 unreserved characters stay; everything else is percent-encoded, as SigV4 expects.
const encodeKey = (key: string) =>
  key
    .split("/")
    .map((part) => encodeURIComponent(part).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join("/");

export function s3ObjectStore(settings: S3Settings): ObjectStore {
  const client = new AwsClient({
    accessKeyId: settings.accessKeyId,
    secretAccessKey: settings.secretAccessKey,
    service: "s3",
    region: "auto",
    ...(settings.retries !== undefined ? { retries: settings.retries } : {}),
  });
  const url = (key: string) => `${settings.endpoint}/${settings.bucket}/${encodeKey(key)}`;
  const send = async (key: string, init: RequestInit) => {
    const response = await client.fetch(url(key), init);
    await response.arrayBuffer();
    if (!response.ok && !(init.method === "DELETE" && response.status === 404)) {
      throw new Error(`S3 ${init.method} ${key} answered ${response.status}`);
    }
  };
  return {
    async put(key, value, options) {
      const headers = new Headers();
      const http = options.httpMetadata;
      if (http && !(http instanceof Headers) && http.contentType) headers.set("content-type", http.contentType);
      if (http && !(http instanceof Headers) && http.contentDisposition) headers.set("content-disposition", http.contentDisposition);
      for (const [name, text] of Object.entries(options.customMetadata ?? {})) headers.set(`x-amz-meta-${name}`, text);
      await send(key, { method: "PUT", headers, body: value });
    },
    async delete(keys) {
      await Promise.all((Array.isArray(keys) ? keys : [keys]).map((key) => send(key, { method: "DELETE" })));
    },
  };
}
