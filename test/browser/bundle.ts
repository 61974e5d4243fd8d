import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { projectRoot } from "../../tools/platform";
import { runInBackground } from "../helpers/background";

declare module "vitest" {
  interface ProvidedContext {
    /** Where the Worker is bundled for the browser tests, once for all of them (./worker.ts). */
    browserWorkerBundle: string;
  }
}

/**
 * Global setup of the browser project: the Worker bundled as for deployment, once, beside the
 * first tests (../helpers/background.ts), into a folder the browser files only read. Inside the
 * project, where workerd resolves its modules.
 */
export default function setup(project: TestProject) {
  mkdirSync(join(projectRoot, ".wrangler", "browser"), { recursive: true });
  const dir = mkdtempSync(join(projectRoot, ".wrangler", "browser", "bundle-"));
  const wrangler = join(projectRoot, "node_modules", ".bin", "wrangler");
  const stop = runInBackground(dir, wrangler, ["deploy", "--dry-run", "--outdir", join(dir, "dist")]);
  project.provide("browserWorkerBundle", dir);
  return async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
