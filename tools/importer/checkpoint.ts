import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type PlatformOptions, projectRoot, stateRoot } from "../platform";

/** What an import did, row by row: the summary it prints, and what a checkpoint carries over. */
export interface ImportReport {
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  failures: Array<{ line: number; error: string }>;
  /** Set when this import picked up an interrupted one: the rows up to this line were done then. */
  resumedAfterLine?: number;
}

/**
 * Where an interrupted import resumes. After each batch commits, the last manifest line it
 * covered is recorded with the report so far; the next import of the same manifest (same path,
 * size and modification time) into the same storage starts after that line. An import that
 * finishes removes its checkpoint, so importing again re-checks every row (and changes nothing
 * that is unchanged). Rows past the checkpoint that were written just before an interruption
 * are found unchanged and skipped: their objects were put before them. Rows an interruption
 * kept from being written are written then, their content-addressed objects put again under
 * the same keys, so an interruption between objects and rows leaves nothing orphaned. (A
 * batch applied whose answer was lost keeps its objects too: importLogo's rowsWritten.)
 *
 * The checkpoint is rewritten after every batch, so the failures it carries over go to a file
 * of their own, each batch's appended: rewritten whole, a manifest whose rows all fail (a wrong
 * image folder) would cost time and disk with the square of its length. A `--remote`
 * checkpoint names the database and bucket it was for: pointed at another deployment, the
 * import starts over.
 */
export interface Checkpoint {
  line: number;
  report: ImportReport;
}

export interface CheckpointStore {
  readonly path: string;
  read(): Checkpoint | undefined;
  write(checkpoint: Checkpoint): void;
  clear(): void;
}

/** `target`: what the import writes to, for `--remote` (the database's id and the bucket's name). */
export function checkpointFor(manifest: string, options: PlatformOptions, target = ""): CheckpointStore {
  const absolute = resolve(manifest);
  const { size, mtimeMs } = statSync(absolute);
  const identity = { manifest: absolute, size, mtimeMs, target };
  // One checkpoint per manifest path: a stale one (the file changed since) is ignored, then replaced.
  const name = createHash("sha256").update(absolute).digest("hex").slice(0, 24);
  // Local imports keep theirs with the state they write to; remote ones with the project.
  const dir = options.remote ? join(projectRoot, ".wrangler", "imports-remote") : join(stateRoot(options), "imports");
  const path = join(dir, `${name}.json`);
  const failuresPath = join(dir, `${name}.failures.jsonl`);
  /** Failures in the file that the checkpoint covers; null until this import has read or written one. */
  let kept: number | null = null;
  return {
    path,
    read() {
      let stored: typeof identity & Checkpoint & { failuresKept: number };
      try {
        stored = JSON.parse(readFileSync(path, "utf8"));
      } catch {
        return undefined;
      }
      const same = stored.manifest === absolute && stored.size === size && stored.mtimeMs === mtimeMs && stored.target === target;
      if (!same || !Number.isInteger(stored.failuresKept)) return undefined;
      let failures: ImportReport["failures"];
      try {
        // Failures appended by a batch the checkpoint does not cover (the process died between) are left out.
        failures = readFileSync(failuresPath, "utf8")
          .split("\n")
          .filter(Boolean)
          .slice(0, stored.failuresKept)
          .map((line) => JSON.parse(line));
      } catch {
        failures = [];
      }
      if (failures.length !== stored.failuresKept) return undefined;
      writeFileSync(failuresPath, failures.map((failure) => `${JSON.stringify(failure)}\n`).join(""));
      kept = failures.length;
      return { line: stored.line, report: { ...stored.report, failures } };
    },
    write({ line, report }) {
      mkdirSync(dir, { recursive: true });
      // An import that did not resume starts the file afresh; then each batch adds its own.
      const added = report.failures
        .slice(kept ?? 0)
        .map((failure) => `${JSON.stringify(failure)}\n`)
        .join("");
      if (kept === null) writeFileSync(failuresPath, added);
      else if (added) appendFileSync(failuresPath, added);
      kept = report.failures.length;
      // Written whole or not at all: a checkpoint half-written when the process dies would be worse than none.
      writeFileSync(`${path}.tmp`, JSON.stringify({ ...identity, line, report: { ...report, failures: [] }, failuresKept: kept }));
      renameSync(`${path}.tmp`, path);
    },
    clear() {
      rmSync(path, { force: true });
      rmSync(failuresPath, { force: true });
      kept = null;
    },
  };
}
