import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { projectRoot } from "../../tools/platform";

declare module "vitest" {
  interface ProvidedContext {
    /** A local state with migrations applied by wrangler, for test/tools files to copy. */
    toolsStateTemplate: string;
  }
}

/**
 * Global setup of the tools project: wrangler applies the migrations once, as `npm start` does,
 * and every test file starts from a copy of that state (test/tools/helpers.ts, freshState).
 */
export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "logo-lookup-template-"));
  const result = spawnSync(
    join(projectRoot, "node_modules", ".bin", "wrangler"),
    ["d1", "migrations", "apply", "DB", "--local", "--persist-to", dir],
    {
      cwd: projectRoot,
      encoding: "utf8",
      env: { ...process.env, CI: "true" },
    },
  );
  if (result.status !== 0) throw new Error(`migrations failed: ${result.stderr}${result.stdout}`);
  project.provide("toolsStateTemplate", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
