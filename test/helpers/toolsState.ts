import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { projectRoot } from "../../tools/platform";
import { doneInBackground, runInBackground } from "./background";

declare module "vitest" {
  interface ProvidedContext {
    /** Where the local state with migrations applied by wrangler is made, for test/tools files to copy (templateState). */
    toolsStateTemplate: string;
  }
}

/**
 * Global setup of the tools project: wrangler applies the migrations once, as an operator would
 * (`npm start` applies the same itself, checked against this state by start.migrations.test.ts),
 * and every test file starts from a copy of that state (test/tools/helpers.ts, freshState).
 *
 * wrangler starts a runtime for each migration: some twenty seconds, in which the suite would
 * otherwise do nothing else. So it runs beside the tests (./background.ts), and the state is
 * under `state` once it is done.
 */
export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "logo-lookup-template-"));
  const stop = runInBackground(dir, join(projectRoot, "node_modules", ".bin", "wrangler"), [
    "d1",
    "migrations",
    "apply",
    "DB",
    "--local",
    "--persist-to",
    join(dir, "state"),
  ]);
  project.provide("toolsStateTemplate", dir);
  return async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  };
}

/** The state the global setup made, once wrangler is done with it. */
export async function templateState(dir: string): Promise<string> {
  await doneInBackground(dir);
  return join(dir, "state");
}
