import { spawn } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
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
 * a crash) leaves no mark, and the next start resumes it where it stopped (recordSeeding).
 */
export function seedBesideTheServer(mark: string, log: (message: string) => void, onExampleSeeded: () => void) {
  const tsx = join(projectRoot, "node_modules", ".bin", "tsx");
  const seed = [tsx, SINGLE_THREADED_GC, join(projectRoot, "tools", "seed.ts"), "--plain-progress"];
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
  child.on("exit", (code) => log(recordSeeding(mark, code, output)));
  return {
    stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGTERM");
    },
  };
}

/**
 * What a seeding that exited with `code` leaves for the next start, and what to tell the
 * person: finished, `mark`; finished with rows skipped (exit 2), `mark.partial` the first time,
 * since those are mostly passing trouble (a lock held too long beside the server, a conversion
 * thread out of memory) and the next start tries them once more, and `mark` the second;
 * stopped, nothing, and the next start resumes it.
 */
export function recordSeeding(mark: string, code: number | null, output: string): string {
  if (code !== 0 && code !== 2) return `Seeding stopped${code === null ? "" : ` (exit code ${code})`}; the next npm start resumes it.`;
  let summary = "Seeded the bundled catalogue.";
  try {
    const report = JSON.parse(output.trim().split("\n").at(-1)!) as { companies: number; logos: number; failed: number; seconds: number };
    summary = `Seeded ${report.companies} companies and ${report.logos - report.failed} logos in ${report.seconds}s${report.failed ? ` (${report.failed} rows skipped)` : ""}.`;
  } catch {
    // No summary line: the counts are not known.
  }
  const partial = `${mark}.partial`;
  if (code === 2 && !existsSync(partial)) {
    writeFileSync(partial, `${new Date().toISOString()}\n`);
    return `${summary} The next npm start tries the skipped rows once more.`;
  }
  writeFileSync(mark, `${new Date().toISOString()}\n`);
  rmSync(partial, { force: true });
  return code === 2 ? `${summary} They were skipped twice and stay out (npm run seed tries them again).` : summary;
}

/** Whether a start seeds: until a seeding has finished (`mark`), and whenever the catalogue has no logo (its database deleted since). */
export function mustSeed(mark: string, hasLogos: boolean): boolean {
  return !existsSync(mark) || !hasLogos;
}

/**
 * A seeding under way has not finished, whatever an earlier one left: `mark` goes until it
 * has, so that one interrupted is resumed at the next start. Of an emptied catalogue, the
 * rows an earlier seeding skipped (`mark.partial`) are no longer known either.
 */
export function beginSeeding(mark: string, hasLogos: boolean): void {
  rmSync(mark, { force: true });
  if (!hasLogos) rmSync(`${mark}.partial`, { force: true });
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
