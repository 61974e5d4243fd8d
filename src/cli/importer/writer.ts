import { rmSync } from "node:fs";
import { join } from "node:path";
import type { ImportedLogo, StoredLogoKey } from "../../catalogue/importLogo";
import type { Result } from "../../lib/errors";
import { type PlatformOptions, projectRoot, stateRoot, writeStorageToolConfig } from "../platform";
import type { S3Settings } from "./s3";
import { encodeLogos, type WireLogo } from "./wire";

export type WriteResult = Result<ImportedLogo> | { ok: false; needsImage: true };

/** The importer's handle on its write side (./worker.ts) running in workerd. */
export interface ImportWriter {
  /** The source hash of the stored logo each key would replace, in order. */
  sourceHashes(keys: StoredLogoKey[]): Promise<Array<string | null>>;
  /** Writes a batch of rows in one D1 transaction; results in row order. */
  write(logos: WireLogo[]): Promise<WriteResult[]>;
  stop(): Promise<void>;
}

export interface WriterOptions extends PlatformOptions {
  /** Put objects through R2's S3 API instead of the binding. */
  s3?: S3Settings | undefined;
}

export async function startImportWriter(options: WriterOptions): Promise<ImportWriter> {
  const configPath = await writeStorageToolConfig(options, "importer");
  const { unstable_dev } = await import("wrangler");

  // The import worker never reads `request.cf`; don't ask Cloudflare for its data.
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const s3 = options.s3;
  const worker = await unstable_dev(join(projectRoot, "src/cli/importer/worker.ts"), {
    config: configPath,
    persistTo: stateRoot(options),
    ip: "127.0.0.1",
    port: 0,
    logLevel: "error",
    vars: s3
      ? { R2_BUCKET_NAME: s3.bucket, R2_S3_ENDPOINT: s3.endpoint, R2_ACCESS_KEY_ID: s3.accessKeyId, R2_SECRET_ACCESS_KEY: s3.secretAccessKey }
      : {},
    // With --remote the bindings carry `remote: true` and wrangler proxies them to the account.
    // The writer binds no other Worker, so it stays out of wrangler's registry of dev sessions.
    experimental: { disableExperimentalWarning: true, disableDevRegistry: true },
  });

  const post = async <T>(path: string, body: Uint8Array | string): Promise<T> => {
    const headers = { "content-type": typeof body === "string" ? "application/json" : "application/octet-stream" };
    const response = await worker.fetch(path, { method: "POST", headers, body });
    if (!response.ok) throw new Error(`import writer answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as T;
  };

  return {
    sourceHashes: async (keys) => (await post<{ hashes: Array<string | null> }>("/source-hashes", JSON.stringify({ keys }))).hashes,
    write: (logos) => post<WriteResult[]>("/logos", encodeLogos(logos)),
    stop: async () => {
      await worker.stop();
      rmSync(configPath, { force: true });
    },
  };
}
