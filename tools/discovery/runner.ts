import { readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Result } from "../../src/lib/errors";
import { discoveryOutbound } from "../outbound/toolWorkerOutbound";
import { type PlatformOptions, startToolWorker, writeStorageToolConfig } from "../platform";

/**
 * Starts the discovery tool worker (./worker.ts) in workerd over the local state (or, with
 * --remote, the deployment's storage), asks it one thing, and stops it. The storage tool
 * config gains the Images binding and DISCOVERY_RESOLVE from the environment, so an
 * operator can point discovery at a local stand-in of a site. Its outbound fetches pass
 * Node's resolving guard (tools/outbound/toolWorkerOutbound.ts).
 */
export async function askDiscoveryWorker<T>(
  options: PlatformOptions,
  path: "/discover" | "/forget",
  body: { domain: string },
): Promise<Result<T>> {
  const configPath = await writeStorageToolConfig(options, "discovery");
  const config = JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>;
  writeFileSync(
    configPath,
    JSON.stringify({ ...config, images: { binding: "IMAGES" }, vars: { DISCOVERY_RESOLVE: process.env.DISCOVERY_RESOLVE ?? "" } }),
  );
  // What the worker fetches goes through Node, which resolves each name and refuses any that
  // is not public: workerd alone cannot (src/lib/strangerUrls.ts).
  const worker = await startToolWorker(
    "tools/discovery/worker.ts",
    configPath,
    options,
    {},
    discoveryOutbound(process.env.DISCOVERY_RESOLVE ?? ""),
  );
  try {
    const response = await worker.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`discovery worker answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as Result<T>;
  } finally {
    await worker.stop();
    rmSync(configPath, { force: true });
  }
}
