import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SINGLE_THREADED_GC } from "../importer/convertPool";
import { projectRoot } from "../platform";
import { EXAMPLE_SEEDED } from "../seed/seed";

/**
 * The first start seeds the bundled catalogue beside the server instead of before it, so the
 * server answers within seconds and logos appear as their batches are written (best-known
 * companies first). The seeding is `npm run seed` in a process of its own, at a lower CPU
 * priority so that the server stays responsive, with its progress as plain lines on stderr.
 * When it finishes, `mark` is written and later starts skip it; a seeding interrupted (Ctrl-C,
 * a crash) leaves no mark, and the next start resumes it where it stopped.
 */
export function seedBesideTheServer(mark: string, log: (message: string) => void, onExampleSeeded: () => void) {
  const tsx = join(projectRoot, "node_modules", ".bin", "tsx");
  const seed = [tsx, SINGLE_THREADED_GC, join(projectRoot, "src", "cli", "seed.ts"), "--plain-progress"];
  // `nice` applies to every thread the seeding starts; Windows has no such command.
  const [command, ...args] = process.platform === "win32" ? seed : ["nice", "-n", "10", ...seed];
  // A group of its own, so that stopping it stops the workerd it starts too.
  const child = spawn(command!, args, { cwd: projectRoot, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
  // Its progress goes to our stderr as it comes; the line that says the example is in is also a cue.
  const watch = onLineStarting(EXAMPLE_SEEDED, onExampleSeeded);
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    process.stderr.write(text);
    watch(text);
  });
  child.on("exit", (code) => {
    if (code !== 0 && code !== 2) {
      log(`Seeding stopped${code === null ? "" : ` (exit code ${code})`}; the next npm start resumes it.`);
      return;
    }
    writeFileSync(mark, `${new Date().toISOString()}\n`);
    try {
      const report = JSON.parse(output.trim().split("\n").at(-1)!) as { companies: number; logos: number; failed: number; seconds: number };
      log(`Seeded ${report.companies} companies and ${report.logos - report.failed} logos in ${report.seconds}s${report.failed ? ` (${report.failed} rows skipped)` : ""}.`);
    } catch {
      log("Seeded the bundled catalogue.");
    }
  });
  return {
    stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGTERM");
    },
  };
}

/** Feeds output in chunks as it comes; calls `then` once, for the first whole line starting with `prefix`. */
export function onLineStarting(prefix: string, then: () => void): (chunk: string) => void {
  let pending = "";
  let seen = false;
  return (chunk) => {
    if (seen) return;
    const lines = (pending + chunk).split("\n");
    pending = lines.pop()!;
    if (lines.some((line) => line.startsWith(prefix))) {
      seen = true;
      then();
    }
  };
}
