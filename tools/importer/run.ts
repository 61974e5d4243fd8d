import { constants } from "node:fs";
import { NotPublic, publicFetch } from "../outbound/publicFetch";
import { open } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
import type { CompanyLogoInput, ImportedLogo, PreparedImage } from "../../src/catalogue/importLogo";
import type { PrepareOptions } from "../../src/catalogue/preparedImage";
import { sha256Hex } from "../../src/lib/encoding";
import { fail, ok, type Result } from "../../src/lib/errors";
import type { CheckpointStore, ImportReport } from "./checkpoint";
import { type ManifestRow, type ParsedLine, readManifest } from "./manifest";
import type { ImportWriter } from "./writer";

export interface ImportOptions {
  /** Converts an image file as asked; the conversion pool's `convert` (./convertPool.ts). */
  convert: (bytes: Uint8Array, prepare?: PrepareOptions) => Promise<Result<PreparedImage>>;
  /** How a row's image is prepared (its themes decided now or on first lookup); by default now. */
  prepareFor?: (row: CompanyLogoInput) => PrepareOptions;
  /** Rows written in one D1 batch (default 250). */
  batchSize?: number;
  /** Rows of the first batch, when it should be written sooner than the rest (default batchSize). */
  firstBatchSize?: number;
  /** Batches read and converted ahead of the one being written (default 2). */
  ahead?: number;
  /** Images converted at once: the conversion pool's threads (default: one per core). */
  threads?: number;
  /** Bytes of images that rows read and not yet written may hold (default MAX_HELD_BYTES). */
  maxHeldBytes?: number;
  checkpoint?: CheckpointStore;
  onProgress?: (report: ImportReport) => void;
  onFailure?: (failure: { line: number; error: string }) => void;
  /**
   * Fetch image URLs whose host is not on the public internet (a server of the operator's own
   * on this machine or network): `--allow-private-urls`. Otherwise each name is resolved and
   * refused when any address is private, loopback or link-local (tools/outbound/publicFetch.ts).
   */
  allowPrivateUrls?: boolean;
}

const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/**
 * Converted images are far larger than their files (a 3,200 px square raster's renditions are
 * some 145 MB): a batch of such rows, its copy on the wire and the batches staged ahead would
 * take more memory than a machine has. Past this many bytes of converted images not yet
 * written, a batch is written early, in parts, and conversions wait for it; past it in files
 * read, no more batches are staged ahead. Logos of ordinary size never come near it.
 */
const MAX_HELD_BYTES = 256 * 1024 * 1024;
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
      /** Bytes of its converted image, once converted. */
      preparedBytes: number;
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
  const firstBatchSize = Math.min(options.firstBatchSize ?? batchSize, batchSize);
  const ahead = options.ahead ?? 2;
  const threads = options.threads ?? availableParallelism();
  const maxHeld = options.maxHeldBytes ?? MAX_HELD_BYTES;
  const baseDir = dirname(resolve(manifestPath));

  // Bytes held by rows read and not yet written: their files, and their converted images.
  let sourceBytes = 0;
  let preparedBytes = 0;
  // Conversions start in manifest order, as many at once as there are threads, and none while
  // the converted images not yet written pass the limit. The rows holding those come before
  // any waiting one, and a batch is written in parts once its images pass the limit (writeBatch),
  // so the row the writer waits for is never held back.
  const waiting: Array<() => void> = [];
  let converting = 0;
  const startConversions = () => {
    while (waiting.length > 0 && converting < threads && preparedBytes < maxHeld) waiting.shift()!();
  };
  const convert = (row: Extract<Staged, { ok: true }>) =>
    new Promise<Result<PreparedImage>>((resolve) => {
      waiting.push(() => {
        converting++;
        void options
          .convert(row.bytes, options.prepareFor?.(row.input))
          .catch((error: Error) => fail("internal", `image conversion failed: ${error.message}`))
          .then((prepared) => {
            converting--;
            if (prepared.ok) preparedBytes += row.preparedBytes = bytesOf(prepared.value);
            resolve(prepared);
            startConversions();
          });
      });
      startConversions();
    });

  // Files are read ahead too, and held until their batch is written: the batch the writer
  // waits for reads all of its own, the ones staged ahead of it only while the bytes held stay
  // under the limit, counting the reads under way at the size of the files read so far.
  let batchesWritten = 0;
  let loading = 0;
  let filesRead = 0;
  let bytesRead = 0;
  const loadWaiting: Array<{ batch: number; go: () => void }> = [];
  const roomToLoad = (batch: number) =>
    batch === batchesWritten || sourceBytes + preparedBytes + loading * (filesRead > 0 ? bytesRead / filesRead : maxHeld) < maxHeld;
  // Every waiting read that may start now, in turn (the batch the writer waits for is never
  // held back behind a later one), counted as under way as it is let go.
  const startLoads = () => {
    for (let i = 0; i < loadWaiting.length; ) {
      if (!roomToLoad(loadWaiting[i]!.batch)) i++;
      else {
        loading++;
        loadWaiting.splice(i, 1)[0]!.go();
      }
    }
  };
  const load = async (batch: number, image: string) => {
    if (roomToLoad(batch)) loading++;
    else await new Promise<void>((go) => loadWaiting.push({ batch, go }));
    try {
      const bytes = await loadImage(image, baseDir, options.allowPrivateUrls ?? false);
      if (bytes.ok)
        [sourceBytes, filesRead, bytesRead] = [sourceBytes + bytes.value.byteLength, filesRead + 1, bytesRead + bytes.value.byteLength];
      return bytes;
    } finally {
      loading--;
      startLoads();
    }
  };

  const fault = (line: number, error: string) => {
    const failure = { line, error };
    report.failed++;
    report.failures.push(failure);
    options.onFailure?.(failure);
  };

  /** Reads, checks and converts a batch; `turn` resolves once the batch before has handed its images over. */
  const stageBatch = async (batch: number, lines: ParsedLine[], turn: Promise<void>): Promise<Batch> => {
    const rows = await mapLimit(lines, LOADS_AT_ONCE, async (parsed): Promise<Staged> => {
      if (!parsed.ok) return parsed;
      const bytes = await load(batch, parsed.row.image);
      if (!bytes.ok) return { line: parsed.line, ok: false, error: bytes.error.message };
      return {
        line: parsed.line,
        ok: true,
        input: inputOf(parsed.row, await sha256Hex(bytes.value)),
        bytes: bytes.value,
        image: null,
        preparedBytes: 0,
      };
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
      if (stored[index] !== row.input.sourceHash) row.image = convert(row);
    });
    return { lastLine: lines.at(-1)!.line, rows };
  };

  const writeBatch = async ({ lastLine, rows }: Batch) => {
    const failedBefore = report.failures.length;
    report.rows += rows.length;
    let sent: Array<Extract<Staged, { ok: true }>> = [];
    let images: Array<PreparedImage | null> = [];
    let sentBytes = 0;
    /** Writes the rows gathered so far, in one D1 transaction, and lets their bytes go. */
    const flush = async () => {
      const results: Array<Result<ImportedLogo>> = [];
      while (results.length < sent.length) {
        const from = results.length;
        const written = await writer.write(sent.slice(from).map((row, index) => ({ input: row.input, image: images[from + index]! })));
        const needing = written.findIndex((result) => !result.ok && "needsImage" in result);
        // As many results as rows, or the writer stopped at its last answer's row.
        if (needing === -1 ? written.length !== sent.length - from : needing !== written.length - 1 || from + needing >= sent.length) {
          throw new Error(`the import writer answered ${written.length} results for ${sent.length - from} rows`);
        }
        // Checked just above: a row's own result, or the last one, saying it needs its image.
        const own = written as Array<Result<ImportedLogo>>;
        if (needing === -1) {
          results.push(...own);
          break;
        }
        // Staging found this row's very file stored, but a row before it replaced it since:
        // the writer stopped there. Converted after all, it is sent again with the rows after it.
        results.push(...own.slice(0, needing));
        const prepared = await options.convert(sent[from + needing]!.bytes, options.prepareFor?.(sent[from + needing]!.input));
        if (prepared.ok) images[from + needing] = prepared.value;
        else results.push(fail("invalid_argument", prepared.error.message));
      }
      images = [];
      // Storage that failed fails every row after too: the import stops, and as the batch is
      // not recorded as done, a run once storage answers again picks it up.
      for (const [index, result] of results.entries()) {
        if (!result.ok && result.error.code === "unavailable") {
          throw new Error(
            `stopped at line ${sent[index]!.line}: ${result.error.message}. Run the import again once storage answers: it resumes after the last batch written.`,
          );
        }
      }
      for (const [index, row] of sent.entries()) {
        const result = results[index]!;
        if (result.ok) report[result.value.outcome]++;
        else fault(row.line, result.error.message);
      }
      sourceBytes -= sent.reduce((sum, row) => sum + row.bytes.byteLength, 0);
      preparedBytes -= sentBytes;
      [sent, sentBytes] = [[], 0];
      startConversions();
      startLoads();
    };
    // Rows are taken off the batch as they are gathered: once written, nothing holds their images.
    for (let row = rows.shift(); row; row = rows.shift()) {
      if (!row.ok) {
        fault(row.line, row.error);
        continue;
      }
      const prepared = row.image && (await row.image);
      row.image = null;
      sentBytes += row.preparedBytes;
      if (prepared && !prepared.ok) {
        fault(row.line, prepared.error.message);
        sourceBytes -= row.bytes.byteLength;
        continue;
      }
      sent.push(row);
      images.push(prepared ? prepared.value : null);
      if (sentBytes >= maxHeld) await flush();
    }
    await flush();
    // In line order: the batches are, so only this batch's own need sorting.
    report.failures.push(...report.failures.splice(failedBefore).sort((a, b) => a.line - b.line));
    options.checkpoint?.write({ line: lastLine, report });
    options.onProgress?.(report);
    batchesWritten++;
    startLoads();
  };

  const staging: Array<Promise<Batch>> = [];
  let lines: ParsedLine[] = [];
  let handedOver: Promise<void> = Promise.resolve();
  let batchesStaged = 0;
  const next = async () => {
    const staged = stageBatch(batchesStaged++, lines, handedOver);
    handedOver = staged.then(
      () => undefined,
      () => undefined,
    );
    staging.push(staged);
    lines = [];
    // Staging ahead stops while the rows staged hold too many bytes: the oldest is written first.
    while (staging.length > ahead || (staging.length > 1 && sourceBytes + preparedBytes >= maxHeld))
      await writeBatch(await staging.shift()!);
  };
  for await (const parsed of readManifest(manifestPath)) {
    if (resumed && parsed.line <= resumed.line) continue;
    lines.push(parsed);
    if (lines.length >= (batchesStaged === 0 ? firstBatchSize : batchSize)) await next();
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
    identifiers: [
      ...row.isins.map((value) => ({ scheme: "isin" as const, value })),
      ...row.crypto.map((value) => ({ scheme: "crypto" as const, value })),
    ],
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

/** The bytes a converted image holds: what it costs in memory, and on the wire. */
function bytesOf(image: PreparedImage): number {
  const files = Object.values(image.files).reduce((sum, file) => sum + (file?.byteLength ?? 0), 0);
  return files + image.original.byteLength + (image.vector?.byteLength ?? 0);
}

const TOO_LARGE = "image is larger than 10 MB";

async function loadImage(source: string, baseDir: string, allowPrivateUrls: boolean): Promise<Result<Uint8Array>> {
  if (/^https?:\/\//i.test(source)) {
    try {
      const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
      const response = allowPrivateUrls
        ? await fetch(source, { signal, redirect: "follow" })
        : await publicFetch(source, { signal, redirect: "follow" });
      if (!response.ok) return fail("invalid_argument", `image URL answered ${response.status}`);
      const declared = Number(response.headers.get("content-length") ?? 0);
      if (declared > MAX_IMAGE_BYTES) {
        await response.body?.cancel();
        return fail("invalid_argument", TOO_LARGE);
      }
      // Read no further than the limit: a server may send more than it declared, or declare nothing.
      const body = response.body ? await readAtMost(response.body, MAX_IMAGE_BYTES) : new Uint8Array();
      return body ? ok(body) : fail("invalid_argument", TOO_LARGE);
    } catch (error) {
      if (error instanceof NotPublic)
        return fail("invalid_argument", `image URL refused: ${error.message} (--allow-private-urls fetches it all the same)`);
      return fail("invalid_argument", `image URL could not be fetched: ${(error as Error).message}`);
    }
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source)) {
    return fail("invalid_argument", "image must be a file path or an http(s) URL");
  }
  const path = isAbsolute(source) ? source : resolve(baseDir, source);
  let file;
  try {
    // Without blocking: opening a FIFO to read would wait for a writer forever.
    file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return fail("invalid_argument", code === "ENOENT" ? `image file not found: ${source}` : `image file unreadable: ${source}`);
  }
  try {
    // Its size is known before anything is read: a device (/dev/zero) or a pipe has none.
    const info = await file.stat();
    if (!info.isFile()) return fail("invalid_argument", `image is not a regular file: ${source}`);
    if (info.size > MAX_IMAGE_BYTES) return fail("invalid_argument", TOO_LARGE);
    return ok(new Uint8Array(await file.readFile()));
  } catch {
    return fail("invalid_argument", `image file unreadable: ${source}`);
  } finally {
    await file.close();
  }
}

/** A body's bytes, or null once it passes `limit` bytes (the rest is never read). */
async function readAtMost(body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array | null> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = body.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    length += chunk.value.byteLength;
    if (length > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(chunk.value);
  }
  return new Uint8Array(Buffer.concat(chunks));
}
