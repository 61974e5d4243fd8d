import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
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

export function checkpointFor(manifest: string, options: PlatformOptions): CheckpointStore {
  const absolute = resolve(manifest);
  const { size, mtimeMs } = statSync(absolute);
  const identity = { manifest: absolute, size, mtimeMs };
  // One checkpoint per manifest path: a stale one (the file changed since) is ignored, then replaced.
  const name = createHash("sha256").update(absolute).digest("hex").slice(0, 24);
  // Local imports keep theirs with the state they write to; remote ones with the project.
  const dir = options.remote ? join(projectRoot, ".wrangler", "imports-remote") : join(stateRoot(options), "imports");
  const path = join(dir, `${name}.json`);
  return {
    path,
    read() {
      try {
        const stored = JSON.parse(readFileSync(path, "utf8")) as typeof identity & Checkpoint;
        return stored.manifest === absolute && stored.size === size && stored.mtimeMs === mtimeMs ? { line: stored.line, report: stored.report } : undefined;
      } catch {
        return undefined;
      }
    },
    write(checkpoint) {
      mkdirSync(dir, { recursive: true });
      // Written whole or not at all: a checkpoint half-written when the process dies would be worse than none.
      writeFileSync(`${path}.tmp`, JSON.stringify({ ...identity, ...checkpoint }));
      renameSync(`${path}.tmp`, path);
    },
    clear() {
      rmSync(path, { force: true });
    },
  };
}
