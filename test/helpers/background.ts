import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../../tools/platform";

/**
 * A command a global setup runs beside the tests rather than before them (wrangler making the
 * tools' migrated state, bundling the Worker for the browser tests): when it ends, `done` appears
 * in `dir`, or `failed` with its output. Returns the teardown, which stops it if still running.
 */
export function runInBackground(dir: string, command: string, args: string[]): () => Promise<void> {
  const child = spawn(command, args, { cwd: projectRoot, env: { ...process.env, CI: "true" }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
  child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
  const ended = new Promise<void>((resolve) => {
    child.on("error", (error) => {
      writeFileSync(join(dir, "failed"), `${command} ${args.join(" ")}: ${error.message}`);
      resolve();
    });
    child.on("close", (status) => {
      if (status === 0) writeFileSync(join(dir, "done"), "");
      else if (!existsSync(join(dir, "failed")))
        writeFileSync(join(dir, "failed"), `${command} ${args.join(" ")} failed (exit ${status}):\n${output}`);
      resolve();
    });
  });
  return async () => {
    if (child.exitCode === null) child.kill();
    await ended;
  };
}

/** Waits for the command started by runInBackground on `dir` to have ended well. */
export async function doneInBackground(dir: string): Promise<void> {
  for (;;) {
    if (existsSync(join(dir, "done"))) return;
    if (existsSync(join(dir, "failed"))) throw new Error(readFileSync(join(dir, "failed"), "utf8"));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
