import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import type { PreparedImage } from "../../catalogue/importLogo";
import { sha256Hex } from "../../lib/encoding";
import { fail, ok, type Result } from "../../lib/errors";
import type { ImportWriter } from "./writer";
import { type ManifestRow, readManifest } from "./manifest";
import { prepareLogo } from "./prepare";

export interface ImportReport {
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  failures: Array<{ line: number; error: string }>;
}

export interface ImportOptions {
  /** Rows whose images are loaded and converted ahead of the one being written. */
  lookahead?: number;
  /** Rows written at once; rows sharing a domain still go one after another. */
  writers?: number;
  onRow?: (report: ImportReport) => void;
  onFailure?: (failure: { line: number; error: string }) => void;
}

const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 30_000;

type Staged = {
  line: number;
  row: ManifestRow;
  sourceHash: string;
  /** The stored logo is this very file (as far as staging could tell). */
  known: boolean;
  image: () => Promise<Result<PreparedImage>>;
};

/**
 * Imports a manifest: images are fetched and converted a few rows ahead, concurrently, while
 * rows are written strictly in manifest order, so that rows about the same company never race.
 */
export async function runImport(manifestPath: string, writer: ImportWriter, options: ImportOptions = {}): Promise<ImportReport> {
  const report: ImportReport = { rows: 0, created: 0, updated: 0, unchanged: 0, failed: 0, failures: [] };
  const lookahead = options.lookahead ?? 6;
  const writers = options.writers ?? 4;
  const baseDir = dirname(resolve(manifestPath));
  const pending: Array<Promise<Result<Staged> & { line: number }>> = [];

  const fault = (line: number, error: string) => {
    const failure = { line, error };
    report.failed++;
    report.failures.push(failure);
    options.onFailure?.(failure);
  };

  // Rows are written concurrently, except that a row waits for every earlier row that shares
  // one of its domains: rows about one company are applied in manifest order.
  const lastWriteOf = new Map<string, Promise<unknown>>();
  const writing = new Set<Promise<void>>();

  const write = async (staged: Result<Staged> & { line: number }) => {
    if (!staged.ok) return fault(staged.line, staged.error.message);
    const { row } = staged.value;
    const input = {
        name: row.name,
        domains: row.domains,
        ticker: row.ticker ? { symbol: row.ticker, exchange: row.exchange ?? "" } : undefined,
        aliases: row.aliases,
        brandColor: row.brand_color,
        prominence: row.prominence,
        variant: row.variant,
        sourceSet: row.source_set,
        licence: row.licence,
        sourceHash: staged.value.sourceHash,
    };
    // The image goes along unless staging found it stored already; should the stored logo
    // have changed since, the writer asks for it.
    let image: PreparedImage | null = null;
    if (!staged.value.known) {
      const prepared = await staged.value.image();
      if (!prepared.ok) return fault(staged.line, prepared.error.message);
      image = prepared.value;
    }
    let result = await writer.write(input, image);
    if (!result.ok && "needsImage" in result) {
      const prepared = await staged.value.image();
      if (!prepared.ok) return fault(staged.line, prepared.error.message);
      result = await writer.write(input, prepared.value);
    }
    if (!result.ok && "needsImage" in result) return fault(staged.line, "the stored logo changed during the import");
    if (result.ok) report[result.value.outcome]++;
    else fault(staged.line, result.error.message);
  };

  const writeNext = async () => {
    const staged = await pending.shift()!;
    const domains = staged.ok ? staged.value.row.domains : [];
    const before = domains.map((d) => lastWriteOf.get(d)).filter((p) => p !== undefined);
    const done: Promise<void> = Promise.all(before)
      .then(() => write(staged))
      .catch((error: Error) => fault(staged.line, `write failed: ${error.message}`))
      .finally(() => {
        report.rows++;
        options.onRow?.(report);
        writing.delete(done);
        for (const d of domains) if (lastWriteOf.get(d) === done) lastWriteOf.delete(d);
      });
    for (const d of domains) lastWriteOf.set(d, done);
    writing.add(done);
    if (writing.size >= writers) await Promise.race(writing);
  };

  for await (const parsed of readManifest(manifestPath)) {
    if (!parsed.ok) {
      pending.push(Promise.resolve({ line: parsed.line, ...fail("invalid_argument", parsed.error) }));
    } else {
      const { line } = parsed;
      pending.push(
        stage(line, parsed.row, baseDir, writer).catch((error: Error) => ({ line, ...fail("internal", error.message) })),
      );
    }
    if (pending.length >= lookahead) await writeNext();
  }
  while (pending.length > 0) await writeNext();
  await Promise.all(writing);
  // Rows finish out of order when written concurrently; report failures in manifest order.
  report.failures.sort((a, b) => a.line - b.line);
  return report;
}

async function stage(line: number, row: ManifestRow, baseDir: string, writer: ImportWriter): Promise<Result<Staged> & { line: number }> {
  const bytes = await loadImage(row.image, baseDir);
  if (!bytes.ok) return { line, ...bytes };
  const sourceHash = await sha256Hex(bytes.value);
  // Convert ahead only when the stored logo is not this very file; the write step asks again.
  const known = (await writer.sourceHash(row.domains, row.variant, row.source_set)) === sourceHash;
  const converting = known ? undefined : convert(bytes.value);
  const image = () => converting ?? convert(bytes.value);
  return { line, ...ok({ line, row, sourceHash, known, image }) };
}

async function convert(bytes: Uint8Array): Promise<Result<PreparedImage>> {
  const prepared = await prepareLogo(bytes);
  return prepared.ok ? ok(prepared.logo) : fail("invalid_argument", prepared.error);
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
