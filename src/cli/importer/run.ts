import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import type { CompanyLogoInput, PreparedImage } from "../../catalogue/importLogo";
import { sha256Hex } from "../../lib/encoding";
import { fail, ok, type Result } from "../../lib/errors";
import type { CheckpointStore, ImportReport } from "./checkpoint";
import { type ManifestRow, type ParsedLine, readManifest } from "./manifest";
import type { ImportWriter } from "./writer";

export interface ImportOptions {
  /** Converts an image file; the conversion pool's `convert` (./convertPool.ts). */
  convert: (bytes: Uint8Array) => Promise<Result<PreparedImage>>;
  /** Rows written in one D1 batch (default 250). */
  batchSize?: number;
  /** Batches read and converted ahead of the one being written (default 2). */
  ahead?: number;
  checkpoint?: CheckpointStore;
  onProgress?: (report: ImportReport) => void;
  onFailure?: (failure: { line: number; error: string }) => void;
}

const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 30_000;
/** Image files read (or fetched) at once. */
const LOADS_AT_ONCE = 32;

type Staged =
  | { line: number; ok: false; error: string }
  | {
      line: number;
      ok: true;
      input: CompanyLogoInput;
      bytes: Uint8Array;
      /** Converting, unless the stored logo is this very file (as far as staging could tell). */
      image: Promise<Result<PreparedImage>> | null;
    };

interface Batch {
  lastLine: number;
  rows: Staged[];
}

/**
 * Imports a manifest in batches. While one batch is written (objects, then all its rows in
 * one D1 transaction), the next ones are read, checked against the stored source hashes and
 * converted on every core; batches are written strictly in manifest order, and within a batch
 * the write path applies rows in order, so rows about the same company never race.
 */
export async function runImport(manifestPath: string, writer: ImportWriter, options: ImportOptions): Promise<ImportReport> {
  const resumed = options.checkpoint?.read();
  const report: ImportReport = resumed
    ? { ...resumed.report, failures: [...resumed.report.failures], resumedAfterLine: resumed.line }
    : { rows: 0, created: 0, updated: 0, unchanged: 0, failed: 0, failures: [] };
  const batchSize = options.batchSize ?? 250;
  const ahead = options.ahead ?? 2;
  const baseDir = dirname(resolve(manifestPath));

  const fault = (line: number, error: string) => {
    const failure = { line, error };
    report.failed++;
    report.failures.push(failure);
    options.onFailure?.(failure);
  };

  /** Reads, checks and converts a batch; `turn` resolves once the batch before has handed its images over. */
  const stageBatch = async (lines: ParsedLine[], turn: Promise<void>): Promise<Batch> => {
    const rows = await mapLimit(lines, LOADS_AT_ONCE, async (parsed): Promise<Staged> => {
      if (!parsed.ok) return parsed;
      const bytes = await loadImage(parsed.row.image, baseDir);
      if (!bytes.ok) return { line: parsed.line, ok: false, error: bytes.error.message };
      return { line: parsed.line, ok: true, input: inputOf(parsed.row, await sha256Hex(bytes.value)), bytes: bytes.value, image: null };
    });
    // Convert only what the catalogue does not hold already; the write asks again if it must.
    const valid = rows.filter((row) => row.ok);
    const keys = valid.map(({ input }) => ({ domains: input.domains, variant: input.variant, sourceSet: input.sourceSet }));
    const stored = keys.length > 0 ? await writer.sourceHashes(keys) : [];
    // Batches are read and checked at once, but converted in manifest order: the threads
    // convert first the batch that is written first, so writing starts after one batch's
    // conversion rather than after all the staged ones', interleaved.
    await turn;
    valid.forEach((row, index) => {
      if (stored[index] !== row.input.sourceHash) row.image = options.convert(row.bytes);
    });
    return { lastLine: lines.at(-1)!.line, rows };
  };

  const writeBatch = async ({ lastLine, rows }: Batch) => {
    const failedBefore = report.failures.length;
    const sent: Array<Extract<Staged, { ok: true }>> = [];
    const images: Array<PreparedImage | null> = [];
    for (const row of rows) {
      if (!row.ok) {
        fault(row.line, row.error);
        continue;
      }
      const prepared = row.image && (await row.image);
      if (prepared && !prepared.ok) {
        fault(row.line, prepared.error.message);
        continue;
      }
      sent.push(row);
      images.push(prepared ? prepared.value : null);
    }
    const results = sent.length > 0 ? await writer.write(sent.map((row, index) => ({ input: row.input, image: images[index]! }))) : [];
    for (const [index, row] of sent.entries()) {
      let result = results[index]!;
      if (!result.ok && "needsImage" in result) {
        // Staging found this very file stored, but an earlier row replaced it since.
        const prepared = await options.convert(row.bytes);
        if (!prepared.ok) {
          fault(row.line, prepared.error.message);
          continue;
        }
        result = (await writer.write([{ input: row.input, image: prepared.value }]))[0]!;
      }
      if (!result.ok && "needsImage" in result) fault(row.line, "the stored logo changed during the import");
      else if (result.ok) report[result.value.outcome]++;
      else fault(row.line, result.error.message);
    }
    report.rows += rows.length;
    // In line order: the batches are, so only this batch's own need sorting.
    report.failures.push(...report.failures.splice(failedBefore).sort((a, b) => a.line - b.line));
    options.checkpoint?.write({ line: lastLine, report });
    options.onProgress?.(report);
  };

  const staging: Array<Promise<Batch>> = [];
  let lines: ParsedLine[] = [];
  let handedOver: Promise<void> = Promise.resolve();
  const next = async () => {
    const staged = stageBatch(lines, handedOver);
    handedOver = staged.then(
      () => undefined,
      () => undefined,
    );
    staging.push(staged);
    lines = [];
    if (staging.length > ahead) await writeBatch(await staging.shift()!);
  };
  for await (const parsed of readManifest(manifestPath)) {
    if (resumed && parsed.line <= resumed.line) continue;
    lines.push(parsed);
    if (lines.length >= batchSize) await next();
  }
  if (lines.length > 0) await next();
  while (staging.length > 0) await writeBatch(await staging.shift()!);
  options.checkpoint?.clear();
  return report;
}

function inputOf(row: ManifestRow, sourceHash: string): CompanyLogoInput {
  return {
    name: row.name,
    domains: row.domains,
    ticker: row.ticker ? { symbol: row.ticker, exchange: row.exchange ?? "" } : undefined,
    aliases: row.aliases,
    brandColor: row.brand_color,
    prominence: row.prominence,
    variant: row.variant,
    sourceSet: row.source_set,
    licence: row.licence,
    sourceHash,
  };
}

async function mapLimit<T, R>(items: T[], limit: number, job: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await job(items[index]!);
      }
    }),
  );
  return results;
}

async function loadImage(source: string, baseDir: string): Promise<Result<Uint8Array>> {
  if (/^https?:\/\//i.test(source)) {
    try {
      const response = await fetch(source, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: "follow" });
      if (!response.ok) return fail("invalid_argument", `image URL answered ${response.status}`);
      const declared = Number(response.headers.get("content-length") ?? 0);
      if (declared > MAX_IMAGE_BYTES) return fail("invalid_argument", "image is larger than 10 MB");
      const body = new Uint8Array(await response.arrayBuffer());
      if (body.byteLength > MAX_IMAGE_BYTES) return fail("invalid_argument", "image is larger than 10 MB");
      return ok(body);
    } catch (error) {
      return fail("invalid_argument", `image URL could not be fetched: ${(error as Error).message}`);
    }
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source)) {
    return fail("invalid_argument", "image must be a file path or an http(s) URL");
  }
  const path = isAbsolute(source) ? source : resolve(baseDir, source);
  try {
    const body = await readFile(path);
    if (body.byteLength > MAX_IMAGE_BYTES) return fail("invalid_argument", "image is larger than 10 MB");
    return ok(new Uint8Array(body));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return fail("invalid_argument", code === "ENOENT" ? `image file not found: ${source}` : `image file unreadable: ${source}`);
  }
}
