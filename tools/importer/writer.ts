import { rmSync } from "node:fs";
import { join } from "node:path";
import type { ImportedLogo, StoredLogoKey } from "../../src/catalogue/importLogo";
import { SQLITE_LOCKED } from "../../src/lib/dependencies";
import type { Result } from "../../src/lib/errors";
import {
  type PlatformOptions,
  projectRoot,
  startToolWorker,
  stateRoot,
  storageTool,
  type ToolWorker,
  writeStorageToolConfig,
} from "../platform";
import { newToolToken, toolAuthorization } from "../toolToken";
import type { S3Settings } from "./s3";
import { encodeLogos, type WireLogo } from "./wire";

export type WriteResult = Result<ImportedLogo> | { ok: false; needsImage: true };

/** The importer's handle on its write side (./worker.ts) running in workerd. */
export interface ImportWriter {
  /** The source hash of the stored logo each key would replace, in order. */
  sourceHashes(keys: StoredLogoKey[]): Promise<Array<string | null>>;
  /**
   * Writes a batch of rows in one D1 transaction; results in row order. A row sent without its
   * image that turns out to need it ends the answer, as `needsImage`: it and the rows after it
   * are not written.
   */
  write(logos: WireLogo[]): Promise<WriteResult[]>;
  stop(): Promise<void>;
  /** Where it listens on loopback: it answers only the importer that started it. */
  url: string;
}

export interface WriterOptions extends PlatformOptions {
  /** Put objects through R2's S3 API instead of the binding. */
  s3?: S3Settings | undefined;
}

const workerSource = join(projectRoot, "tools/importer/worker.ts");

export async function startImportWriter(options: WriterOptions): Promise<ImportWriter> {
  const endpoint = options.remote ? await startWithWrangler(options) : await startWithMiniflare(options);

  const post = async <T>(path: string, body: Uint8Array | string): Promise<T> => {
    const headers = { "content-type": typeof body === "string" ? "application/json" : "application/octet-stream" };
    const response = await endpoint.fetch(path, { method: "POST", headers, body });
    if (!response.ok) throw new Error(`import writer answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as T;
  };

  const { missing } = await post<{ missing: string[] }>("/schema", "{}").catch(async (error: unknown) => {
    await endpoint.stop();
    throw error;
  });
  if (missing.length > 0) {
    await endpoint.stop();
    const where = options.remote ? "--remote" : `--local${options.persistTo ? ` --persist-to ${options.persistTo}` : ""}`;
    throw new Error(
      `the ${options.remote ? "remote" : "local"} database has no ${missing.join(", ")} ${missing.length === 1 ? "table" : "tables"} yet: apply the migrations first (npx wrangler d1 migrations apply DB ${where}; npm start does this for the default local state)`,
    );
  }

  return {
    sourceHashes: async (keys) => (await post<{ hashes: Array<string | null> }>("/source-hashes", JSON.stringify({ keys }))).hashes,
    write: (logos) => post<WriteResult[]>("/logos", encodeLogos(logos)),
    stop: () => endpoint.stop(),
    url: endpoint.url,
  };
}

/**
 * Locally: the worker, bundled, on Miniflare with the storage bindings wrangler itself would
 * give it over the same state directory. No dev server in between: each batch is one request
 * straight into workerd.
 */
async function startWithMiniflare(options: WriterOptions): Promise<ToolWorker> {
  const token = newToolToken();
  const [{ build }, { Miniflare, convertV4MiniflareOptions }, storage] = await Promise.all([
    import("esbuild"),
    import("miniflare"),
    storageTool(options),
  ]);
  const bundled = await build({
    entryPoints: [workerSource],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2024",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    // Node's modules the Worker's code uses (the log scope's AsyncLocalStorage) are workerd's
    // own under nodejs_compat, which the tool worker runs with.
    external: ["node:*"],
    logLevel: "silent",
  });
  const runtime = {
    ...convertV4MiniflareOptions({
      workers: [
        {
          name: "importer",
          modules: true,
          script: bundled.outputFiles[0]!.text,
          compatibilityDate: storage.compatibilityDate,
          compatibilityFlags: storage.compatibilityFlags,
          d1Databases: { DB: { id: storage.databaseId } },
          r2Buckets: { LOGOS: { id: storage.bucketName } },
          bindings: { TOOL_TOKEN: token, ...(options.s3 ? { R2_S3: JSON.stringify(options.s3) } : {}) },
        },
      ],
    }),
    resourcePersistencePath: join(stateRoot(options), "v3"),
  };
  // workerd sets up the SQLite files as it starts; another process starting on the same files
  // at that moment (the dev server beside the first start's seeding) makes it fail with
  // SQLITE_BUSY. It is started again after a short wait.
  for (let attempt = 1; ; attempt++) {
    const mf = new Miniflare(runtime);
    try {
      const url = await mf.ready;
      return {
        url: url.origin,
        fetch: async (path, init) =>
          (await mf.dispatchFetch(`http://importer${path}`, {
            ...init,
            headers: { ...init.headers, ...toolAuthorization(token) },
          })) as unknown as Response,
        stop: () => mf.dispose(),
      };
    } catch (error) {
      await mf.dispose().catch(() => undefined);
      if (attempt >= 5 || !SQLITE_LOCKED.test(String((error as Error).message))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
}

/** With --remote: wrangler's dev server, whose bindings carry `remote: true` and reach the account. */
async function startWithWrangler(options: WriterOptions): Promise<ToolWorker> {
  const configPath = await writeStorageToolConfig(options, "importer");
  const worker = await startToolWorker(
    "tools/importer/worker.ts",
    configPath,
    options,
    options.s3 ? { R2_S3: JSON.stringify(options.s3) } : {},
  );
  return {
    url: worker.url,
    fetch: (path, init) => worker.fetch(path, init),
    stop: async () => {
      await worker.stop();
      rmSync(configPath, { force: true });
    },
  };
}
