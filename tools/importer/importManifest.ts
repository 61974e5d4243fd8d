import type { Output } from "../args";
import { type PlatformOptions, storageTool } from "../platform";
import { checkpointFor } from "./checkpoint";
import { countManifestRows, manifestFormat } from "./manifest";
import { type ConvertPool, startConvertPool } from "./convertPool";
import { startProgress } from "./progress";
import type { ImportReport } from "./checkpoint";
import { type ImportOptions, runImport } from "./run";
import { s3SettingsFrom } from "./s3";
import { type ImportWriter, startImportWriter } from "./writer";

export interface ImportManifestOptions extends PlatformOptions {
  /** Rows per D1 batch: 250 locally, 100 remotely (a deployed batch counts each statement as a query). */
  batchSize?: number;
  /** Rows of the first batch (ImportOptions.firstBatchSize). */
  firstBatchSize?: number;
  /** Start over instead of resuming an interrupted import of the same manifest. */
  restart?: boolean;
  /** Progress as plain lines even on a terminal (`npm start`, beside the dev server's output). */
  plainProgress?: boolean;
  /** Label of the progress line. */
  label?: string;
  /** Where progress and skipped rows are reported (default stderr). */
  stream?: Output;
  /** An already running writer and pool to reuse (tests, benchmarks); otherwise started and stopped here. */
  writer?: ImportWriter;
  pool?: ConvertPool;
  /** How a row's image is prepared (ImportOptions.prepareFor). */
  prepareFor?: ImportOptions["prepareFor"];
  /** Called once the rows are written, before the writer stops (benchmarks read workerd's CPU here). */
  onFinished?: () => void;
  /** Called with the report so far after each batch is written. */
  onProgress?: (report: ImportReport) => void;
  /** Fetch image URLs of non-public hosts too (ImportOptions.allowPrivateUrls). */
  allowPrivateUrls?: boolean;
}

export type ImportSummary = ImportReport & { seconds: number; rowsPerSecond: number };

/**
 * Runs an import against local or remote storage: images converted on every core, rows written
 * in batches, progress on stderr, resumable after an interruption (./checkpoint.ts).
 */
/** Failures printed as they happen; a manifest whose every row fails would otherwise print them all. */
const FAILURES_SHOWN = 100;

export async function importManifest(manifest: string, options: ImportManifestOptions): Promise<ImportSummary> {
  const stream = options.stream ?? process.stderr;
  // Mistakes that need no storage are refused before anything starts.
  manifestFormat(manifest);
  const storage = options.remote ? await storageTool(options) : undefined;
  const checkpoint = checkpointFor(manifest, options, storage ? `${storage.databaseId}/${storage.bucketName}` : "");
  if (options.restart) checkpoint.clear();
  const s3 = storage ? s3SettingsFrom(process.env, storage.bucketName) : undefined;
  if (options.remote && !options.writer) {
    stream.write(
      s3
        ? `Objects go to ${s3.endpoint}/${s3.bucket} through R2's S3 API.\n`
        : "Objects go through the remote R2 binding; set R2_ACCESS_KEY_ID and R2_SECRET_ACCESS_KEY (and CLOUDFLARE_ACCOUNT_ID) for R2's faster S3 API.\n",
    );
  }
  const writer = options.writer ?? (await startImportWriter({ ...options, s3 }));
  const pool = options.pool ?? startConvertPool();
  const resumed = checkpoint.read();
  if (resumed) stream.write(`Resuming an interrupted import after line ${resumed.line}.\n`);
  const progress = startProgress({
    label: options.label ?? "importing",
    unit: "rows",
    total: countRows(manifest),
    from: resumed?.report.rows,
    stream,
    plain: options.plainProgress,
  });
  const started = Date.now();
  let failuresShown = 0;
  try {
    const report = await runImport(manifest, writer, {
      convert: pool.convert,
      prepareFor: options.prepareFor,
      threads: pool.threads,
      batchSize: options.batchSize ?? (options.remote ? 100 : 250),
      firstBatchSize: options.firstBatchSize,
      checkpoint,
      allowPrivateUrls: options.allowPrivateUrls,
      onProgress: (r) => {
        progress.update(r.rows, { failed: r.failed });
        options.onProgress?.(r);
      },
      onFailure: ({ line, error }) => {
        // The summary lists every failure; the terminal, enough to see what is wrong.
        if (failuresShown < FAILURES_SHOWN) progress.note(`line ${line}: ${error}`);
        else if (failuresShown === FAILURES_SHOWN) progress.note(`… more rows fail: the summary lists every one`);
        failuresShown++;
      },
    });
    const seconds = (Date.now() - started) / 1000;
    options.onFinished?.();
    const rowsThisRun = report.rows - (resumed?.report.rows ?? 0);
    return {
      ...report,
      seconds: Math.round(seconds * 10) / 10,
      rowsPerSecond: Math.round((rowsThisRun / Math.max(seconds, 0.001)) * 10) / 10,
    };
  } finally {
    progress.stop();
    if (!options.pool) await pool.close();
    if (!options.writer) await writer.stop();
  }
}

/** The manifest's rows, or 0 (no total shown) for a file the import itself will refuse. */
function countRows(path: string): Promise<number> {
  return countManifestRows(path).catch(() => 0);
}
