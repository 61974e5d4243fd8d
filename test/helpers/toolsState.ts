import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { projectRoot } from "../../tools/platform";

declare module "vitest" {
  interface ProvidedContext {
    /** Where the local state with migrations applied by wrangler is made, for test/tools files to copy (templateState). */
    toolsStateTemplate: string;
  }
}

/**
 * Global setup of the tools project: wrangler applies the migrations once, as `npm start` does,
 * and every test file starts from a copy of that state (test/tools/helpers.ts, freshState).
 *
 * wrangler starts a runtime for each migration: some twenty seconds, in which the suite would
 * otherwise do nothing else. So it runs beside the tests: the state appears under `state`
 * once made, and `ready` (or `failed`, with wrangler's output) says it is done.
 */
export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "logo-lookup-template-"));
  const child = spawn(
    join(projectRoot, "node_modules", ".bin", "wrangler"),
    ["d1", "migrations", "apply", "DB", "--local", "--persist-to", join(dir, "state")],
    { cwd: projectRoot, env: { ...process.env, CI: "true" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
  child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
  const done = new Promise<void>((resolve) => {
    child.on("close", (status) => {
      if (status === 0) writeFileSync(join(dir, "ready"), "");
      else writeFileSync(join(dir, "failed"), `migrations failed (exit ${status}): ${output}`);
      resolve();
    });
    child.on("error", (error) => {
      writeFileSync(join(dir, "failed"), `migrations failed: ${error.message}`);
      resolve();
    });
  });
  project.provide("toolsStateTemplate", dir);
  return async () => {
    if (child.exitCode === null) child.kill();
    await done;
    rmSync(dir, { recursive: true, force: true });
  };
}

/** The state the global setup made, once wrangler is done with it. */
export async function templateState(dir: string): Promise<string> {
  for (;;) {
    if (existsSync(join(dir, "ready"))) return join(dir, "state");
    if (existsSync(join(dir, "failed"))) throw new Error(readFileSync(join(dir, "failed"), "utf8"));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
