import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openPlatform, type Platform } from "../../src/cli/platform";

export const root = resolve(import.meta.dirname, "../..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);

export interface CommandResult {
  status: number | null;
  stdout: string;
  stderr: string;
  json: () => any;
}

/** Runs one of the project's tools the way an operator would, against a private state directory. */
export function tool(script: "admin" | "import" | "seed" | "rerender", args: string[], state: string): CommandResult {
  const result = spawnSync(bin("tsx"), [join(root, "src/cli", `${script}.ts`), ...args, "--persist-to", state], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, CI: "true", NO_COLOR: "1" },
    timeout: 120_000,
  });
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    json: () => JSON.parse(result.stdout.trim().split("\n").at(-1)!),
  };
}

/** A fresh local state with migrations applied by wrangler itself, as `npm start` does. */
export function freshState(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "logo-lookup-state-"));
  const result = spawnSync(bin("wrangler"), ["d1", "migrations", "apply", "DB", "--local", "--persist-to", dir], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, CI: "true" },
  });
  if (result.status !== 0) throw new Error(`migrations failed: ${result.stderr}${result.stdout}`);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function withPlatform<T>(state: string, job: (platform: Platform) => Promise<T>): Promise<T> {
  const platform = await openPlatform({ persistTo: state });
  try {
    return await job(platform);
  } finally {
    await platform.dispose();
  }
}
