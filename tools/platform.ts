import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import type { OutboundHook } from "./outbound/toolWorkerOutbound";
import { join, resolve } from "node:path";
import { createDb, type Db } from "../src/lib/db";
import { UsageError } from "./args";
import { newToolToken, toolAuthorization } from "./toolToken";

// wrangler is loaded when storage is first needed: it takes seconds to load, and a command
// that fails on its arguments should fail at once.
const wrangler = () => import("wrangler");
type WranglerConfig = ReturnType<Awaited<ReturnType<typeof wrangler>>["unstable_readConfig"]>;

/**
 * D1 and R2 for the Node-side tools, through wrangler's platform proxy: the same Miniflare
 * storage `wrangler dev` uses (`.wrangler/state/v3`), so a change made while the dev server
 * runs is visible to it at once; or, with `remote`, the deployed database and bucket named
 * in wrangler.toml (needs `wrangler login` or CLOUDFLARE_API_TOKEN).
 */
export interface PlatformOptions {
  remote?: boolean;
  /** Local state directory, as wrangler's `--persist-to` (default `.wrangler/state`). */
  persistTo?: string;
}

export interface Platform {
  db: Db;
  d1: D1Database;
  bucket: R2Bucket;
  dispose(): Promise<void>;
}

export const projectRoot = resolve(import.meta.dirname, "..");

/**
 * A wrangler config with only the two storage bindings of wrangler.toml, so the tools start
 * no Worker code of the service (nor its Durable Objects).
 */
function storageToolConfig(config: WranglerConfig, options: PlatformOptions) {
  const database = (config.d1_databases as StorageBinding[]).find((d) => d.binding === "DB");
  const bucket = (config.r2_buckets as StorageBinding[]).find((b) => b.binding === "LOGOS");
  if (!database || !bucket) throw new Error("wrangler.toml must bind a D1 database as DB and an R2 bucket as LOGOS");
  const remote = options.remote ?? false;
  return {
    name: "logo-lookup-tools",
    compatibility_date: config.compatibility_date,
    compatibility_flags: ["nodejs_compat"],
    d1_databases: [{ ...pick(database), remote }],
    r2_buckets: [{ binding: bucket.binding, bucket_name: bucket.bucket_name, remote }],
  };
}

const readConfig = async () => (await wrangler()).unstable_readConfig({ config: join(projectRoot, "wrangler.toml") });

/** That config, for tools that start workerd themselves. */
export async function storageTool(options: PlatformOptions) {
  const config = storageToolConfig(await readConfig(), options);
  return {
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    /** As wrangler names them locally: the database by its id, the bucket by its name. */
    databaseId: config.d1_databases[0]!.database_id!,
    /** The database's migrations folder (wrangler.toml's migrations_dir, wrangler's default otherwise). */
    migrationsDir: resolve(projectRoot, config.d1_databases[0]!.migrations_dir ?? "migrations"),
    bucketName: config.r2_buckets[0]!.bucket_name!,
  };
}

/** Writes that config for one tool of this process; the caller removes it when done. */
export async function writeStorageToolConfig(options: PlatformOptions, tool: string): Promise<string> {
  const config = await readConfig();
  const dir = join(projectRoot, ".wrangler", "tmp");
  mkdirSync(dir, { recursive: true });
  const configPath = join(dir, `${tool}-${process.pid}.json`);
  writeFileSync(configPath, JSON.stringify(storageToolConfig(config, options)));
  return configPath;
}

/**
 * A tool worker of this project (its entry under tools/) run in workerd on a loopback port
 * over the storage of `configPath`, for Node tools whose work belongs beside the storage or
 * needs the Worker runtime. With --remote the bindings carry `remote: true` and wrangler
 * proxies them to the account. No inspector: it would hand any process on the machine the
 * worker's token (and the R2 credentials an import passes it), which unstable_dev always opens.
 */
export async function startToolWorker(
  entry: string,
  configPath: string,
  options: PlatformOptions,
  vars: Record<string, string> = {},
  /** Every fetch the worker makes, handed to Node (wrangler's outboundService): the guard of tools/outbound/. */
  outbound?: OutboundHook,
): Promise<ToolWorker> {
  // Tool workers never read `request.cf`; don't ask Cloudflare for its data.
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const token = newToolToken();
  const worker = await (await wrangler()).unstable_startWorker({
    config: configPath,
    entrypoint: join(projectRoot, entry),
    bindings: Object.fromEntries(
      Object.entries({ ...vars, TOOL_TOKEN: token }).map(([name, value]) => [name, { type: "plain_text", value }]),
    ),
    // Tool workers bind no other Worker, so they stay out of wrangler's registry of dev sessions.
    dev: {
      inspector: false,
      server: { hostname: "127.0.0.1", port: 0 },
      persist: stateRoot(options),
      logLevel: "error",
      watch: false,
      registry: undefined,
      ...(outbound ? { outboundService: outbound } : {}),
    },
  } as Parameters<Awaited<ReturnType<typeof wrangler>>["unstable_startWorker"]>[0]);
  await worker.ready;
  const url = await worker.url;
  return {
    url: url.origin,
    fetch: async (path, init) =>
      (await worker.fetch(new URL(path, url).href, {
        ...init,
        headers: { ...init.headers, ...toolAuthorization(token) },
      })) as unknown as Response,
    stop: () => worker.dispose(),
  };
}

/** A tool worker as its process uses it: each request carries the run's token (./toolToken.ts). */
export interface ToolWorker {
  /** Where it listens on loopback. */
  url: string;
  fetch(path: string, init: { method: "POST"; headers: Record<string, string>; body: Uint8Array | string }): Promise<Response>;
  stop(): Promise<void>;
}

/** The local state directory, as wrangler's `--persist-to` names it. */
export function stateRoot(options: PlatformOptions): string {
  // An unset shell variable (`--persist-to "$STATE"`) would otherwise be the working directory.
  if (options.persistTo !== undefined && options.persistTo.trim() === "") throw new UsageError("--persist-to needs a directory");
  return resolve(options.persistTo ?? join(projectRoot, ".wrangler", "state"));
}

export async function openPlatform(options: PlatformOptions = {}): Promise<Platform> {
  const configPath = await writeStorageToolConfig(options, "tools");
  const proxy = await (await wrangler()).getPlatformProxy<{ DB: D1Database; LOGOS: R2Bucket }>({
    configPath,
    envFiles: [],
    persist: { path: join(stateRoot(options), "v3") },
    remoteBindings: options.remote ?? false,
  });
  return {
    db: createDb(proxy.env.DB),
    d1: proxy.env.DB,
    bucket: proxy.env.LOGOS,
    dispose: async () => {
      await proxy.dispose();
      rmSync(configPath, { force: true });
    },
  };
}

interface StorageBinding {
  binding: string;
  database_name?: string;
  database_id?: string;
  migrations_dir?: string;
  bucket_name?: string;
}

function pick(database: StorageBinding) {
  return {
    binding: database.binding,
    database_name: database.database_name,
    database_id: database.database_id,
    migrations_dir: database.migrations_dir,
  };
}
