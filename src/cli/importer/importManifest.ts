import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { SingleBar } from "cli-progress";
import type { PlatformOptions } from "../platform";
import { type ImportReport, runImport } from "./run";
import { startImportWriter } from "./writer";

/** Runs an import against local or remote storage, with a progress bar (count, rate, ETA) on a terminal. */
export async function importManifest(manifest: string, options: PlatformOptions): Promise<ImportReport & { seconds: number }> {
  const writer = await startImportWriter(options);
  const bar = process.stderr.isTTY
    ? new SingleBar({
        stream: process.stderr,
        format: "importing {bar} {value}/{total} rows | {rate} rows/s | ETA {eta_formatted} | {failed} skipped",
        hideCursor: true,
      })
    : undefined;
  const started = Date.now();
  try {
    bar?.start(await countRows(manifest), 0, { rate: "0.0", failed: 0 });
    const report = await runImport(manifest, writer, {
      onRow: (r) => bar?.update(r.rows, { rate: (r.rows / ((Date.now() - started) / 1000)).toFixed(1), failed: r.failed }),
      // On a terminal, clear the bar's line first; it redraws on the next row.
      onFailure: ({ line, error }) => process.stderr.write(`${bar ? "\r\x1b[K" : ""}line ${line}: ${error}\n`),
    });
    return { ...report, seconds: Math.round((Date.now() - started) / 100) / 10 };
  } finally {
    bar?.stop();
    await writer.stop();
  }
}

async function countRows(path: string): Promise<number> {
  let rows = 0;
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) if (line.trim()) rows++;
  return path.toLowerCase().endsWith(".csv") ? Math.max(0, rows - 1) : rows;
}
