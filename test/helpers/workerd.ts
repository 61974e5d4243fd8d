import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { importManifest } from "../../tools/importer/importManifest";
import { projectRoot } from "../../tools/platform";
import { writeSeedManifest } from "../../tools/seed/seed";

/**
 * Running the Worker on workerd from Node, as the benchmarks and the conformance run do:
 * bundled as for deployment, then started by Miniflare with the real bindings of
 * wrangler.toml on a direct socket (no wrangler dev proxy in between).
 */
export const wrangler = join(projectRoot, "node_modules", ".bin", "wrangler");

export function run(command: string, args: string[]) {
  const result = spawnSync(command, args, { cwd: projectRoot, encoding: "utf8", env: { ...process.env, CI: "true" } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed:\n${result.stderr}`);
}

/** Bundles the Worker into `dist` (inside the project: workerd resolves modules below its root). */
export function bundleWorker(dist: string) {
  run(wrangler, ["deploy", "--dry-run", "--outdir", dist]);
}

/** Miniflare options for the bundled Worker under `name`, its bindings overridden by `vars`. */
export function workerOptions(dist: string, name: string, vars: Record<string, string> = {}) {
  const { workerOptions: options } = unstable_getMiniflareWorkerOptions(join(projectRoot, "wrangler.toml"));
  // Options the v4-to-v5 conversion cannot carry are the ones wrangler leaves unset or empty.
  const base = Object.fromEntries(
    Object.entries(options).filter(
      ([key, value]) =>
        key !== "modulesRules" &&
        value !== undefined &&
        !(Array.isArray(value) && value.length === 0) &&
        !(value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0),
    ),
  );
  return {
    ...base,
    name,
    modules: true,
    scriptPath: join(dist, "index.js"),
    bindings: { ...(base.bindings as object), ...vars },
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
  };
}

/** The /proc entries (stat fields after the name, and the pid) of the workerd processes this process started. */
export function workerdProcesses(): { pid: string; stat: string[] }[] {
  const found: { pid: string; stat: string[] }[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (name === "workerd" && Number(fields[1]) === process.pid) found.push({ pid, stat: fields });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** CPU seconds used so far by the workerd processes this process started. */
export function workerdCpuSeconds(): number {
  const ticks = workerdProcesses().reduce((sum, { stat }) => sum + Number(stat[11]) + Number(stat[12]), 0);
  return ticks / 100; // USER_HZ
}

/**
 * A fresh local state under `work` with the migrations applied and the seed catalogue's logos
 * of the primary domains `domains` matches imported: what the bench and load runs start from.
 */
export async function seededState(work: string, domains: RegExp): Promise<string> {
  const state = join(work, "state");
  run(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state]);
  const seed = writeSeedManifest(join(work, "seed"));
  const primary = (line: string) => /"domains":\["([^"]+)"/.exec(line)?.[1] ?? "";
  const rows = readFileSync(seed.manifest, "utf8")
    .split("\n")
    .filter((line) => domains.test(primary(line)));
  const manifest = join(work, "seed", "slice.jsonl");
  writeFileSync(manifest, `${rows.join("\n")}\n`);
  await importManifest(manifest, { persistTo: state });
  return state;
}
