import { createReadStream } from "node:fs";
import { extname } from "node:path";
import { createInterface } from "node:readline";
import { parse as parseCsv } from "csv-parse/sync";
import { z } from "zod";
import { logoVariants } from "../../schema";
import { parseCryptoSymbol, parseIsin } from "../../src/catalogue/identifiers";
import { normaliseDomain } from "../../src/lib/domain";
import type { Result } from "../../src/lib/errors";

/**
 * The import manifest: one logo per row, as JSON Lines (`.jsonl`, one object per line) or
 * CSV (`.csv`, header row first). Both use the same column names:
 *
 *   name         required  company name
 *   domains      required  one or more hosts, primary first (CSV: separated by `;`)
 *   variant      required  `full` (wordmark) or `icon`
 *   image        required  file path (relative to the manifest) or http(s) URL; SVG, PNG, JPEG, WebP, GIF
 *   ticker                 stock ticker, e.g. AAPL; a share class after a space takes a dash (VPLAY B → VPLAY-B)
 *   exchange               exchange of the ticker, e.g. NASDAQ
 *   isins                  ISINs of the company's listed shares, check digit valid (CSV: separated by `;`)
 *   crypto                 symbols of its coins or tokens, e.g. BTC (CSV: separated by `;`)
 *   aliases                other names (CSV: separated by `;`)
 *   brand_color            `#rrggbb`
 *   source_set             where the image comes from (default `manifest`)
 *   licence                licence of the image, SPDX id where one exists (default `unknown`)
 *   prominence             integer, higher ranks first among equal search matches (default 0)
 *
 * An optional column left out (or empty) leaves what the catalogue holds as it is: the
 * defaults are a new company's or logo's. A column or field of any other name is refused (a
 * misspelt `license` would otherwise be dropped without a word).
 */
const list = z
  .union([z.array(z.string()), z.string().transform((value) => value.split(";"))])
  .transform((values) => values.map((part) => part.trim()).filter(Boolean));

const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === "" ? undefined : value))
  .optional()
  .nullable()
  .transform((value) => value ?? undefined);

const domainList = list.pipe(z.array(z.string()).min(1, "at least one domain is required")).transform((values, ctx) => {
  const domains: string[] = [];
  for (const value of values) {
    const result = normaliseDomain(value);
    if (!result.ok) {
      ctx.addIssue({ code: "custom", message: `"${value}" is not a valid domain (${result.reason})` });
      return z.NEVER;
    }
    if (!domains.includes(result.domain)) domains.push(result.domain);
  }
  return domains;
});

/** A list of identifiers, each in its canonical form, or the first that is none and why (the column is named by the caller). */
const identifierList = (parse: (text: string) => Result<string>) =>
  list.optional().transform((values, ctx) => {
    const canonical: string[] = [];
    for (const value of values ?? []) {
      const parsed = parse(value);
      if (!parsed.ok) {
        ctx.addIssue({ code: "custom", message: `"${value}": ${parsed.error.message}` });
        return z.NEVER;
      }
      if (!canonical.includes(parsed.value)) canonical.push(parsed.value);
    }
    return canonical;
  });

const PROMINENCE = "prominence must be a whole number from 0 to 1000000";

export const manifestRowSchema = z
  .object({
    name: z.string().trim().min(1, "name is required").max(200),
    domains: domainList,
    variant: z.enum(logoVariants, { message: "variant must be full or icon" }),
    image: z.string().trim().min(1, "image is required"),
    ticker: optionalText.pipe(
      z
        .string()
        .regex(/^[A-Za-z0-9.&\- ]{1,20}$/, "ticker must be 1-20 letters, digits, dots, dashes, ampersands or spaces")
        // Lookups (`/ticker/{t}`) and search take no spaces, so a ticker stored with one could
        // never be found. Exchanges that write a share class after a space (Nasdaq Nordic's
        // "VOLV B") are looked up with a dash ("VOLV-B"), as the catalogue's other classes are.
        .transform((value) => value.replace(/ +/g, "-").toUpperCase())
        .optional(),
    ),
    exchange: optionalText.pipe(
      z
        .string()
        .regex(/^[A-Za-z0-9]{2,12}$/, "exchange must be 2-12 letters or digits")
        .transform((value) => value.toUpperCase())
        .optional(),
    ),
    isins: identifierList(parseIsin),
    crypto: identifierList(parseCryptoSymbol),
    aliases: list.optional().transform((values) => values ?? []),
    brand_color: optionalText.pipe(
      z
        .string()
        .regex(/^#?[0-9a-fA-F]{6}$/, "brand_color must be #rrggbb")
        .transform((value) => `#${value.replace("#", "").toLowerCase()}`)
        .optional(),
    ),
    source_set: optionalText.pipe(
      z
        .string()
        .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, "source_set must be lower-case letters, digits and dashes")
        .default("manifest"),
    ),
    licence: optionalText.pipe(z.string().max(100).optional()),
    // A whole number as JSON writes one, or as CSV's digits: not whatever Number() makes of a
    // value ("1e3", "0x10", true, [5]).
    prominence: z.preprocess(
      (value) =>
        value === null || (typeof value === "string" && value.trim() === "")
          ? undefined
          : typeof value === "string" && /^\s*\d+\s*$/.test(value)
            ? Number(value)
            : value,
      z
        .number({ error: PROMINENCE })
        .int({ error: PROMINENCE })
        .min(0, { error: PROMINENCE })
        .max(1_000_000, { error: PROMINENCE })
        .optional(),
    ),
  })
  .refine((row) => row.exchange === undefined || row.ticker !== undefined, { path: ["exchange"], message: "an exchange needs a ticker" });

/** The columns of a manifest: any other is a mistake. */
const COLUMNS = Object.keys(manifestRowSchema.shape);

/** ` (did you mean "licence"?)` for a column name that is likely a misspelling of a known one. */
function nearMiss(name: string): string {
  const near = COLUMNS.find((column) => editDistance(column, name.toLowerCase()) <= 2);
  return near ? ` (did you mean "${near}"?)` : "";
}

/** Levenshtein distance: the edits (insert, delete, replace a character) that make `a` of `b`. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

export type ManifestRow = z.infer<typeof manifestRowSchema>;

export type ParsedLine = { line: number; ok: true; row: ManifestRow } | { line: number; ok: false; error: string };

function validate(line: number, raw: unknown): ParsedLine {
  const parsed = manifestRowSchema.safeParse(raw);
  if (parsed.success) return { line, ok: true, row: parsed.data };
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return { line, ok: false, error: `${field}${issue.message}` };
}

/** The manifest's format, by its extension; anything else is refused before an import starts. */
export function manifestFormat(path: string): "csv" | "jsonl" {
  const kind = extname(path).toLowerCase();
  if (kind === ".csv") return "csv";
  if (kind === ".jsonl" || kind === ".ndjson") return "jsonl";
  throw new Error(`Unknown manifest type "${kind}": use .jsonl (JSON Lines) or .csv`);
}

/** Rows of a manifest with their line numbers, streamed; a row that fails validation comes with its reason. */
export async function* readManifest(path: string): AsyncGenerator<ParsedLine> {
  if (manifestFormat(path) === "csv") {
    yield* readCsv(path);
    return;
  }
  for await (const { line, text } of manifestLines(path)) {
    if (text.trim() === "") continue;
    if (text.includes("\uFFFD")) {
      yield { line, ok: false, error: NOT_UTF8 };
      continue;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      yield { line, ok: false, error: "not valid JSON" };
      continue;
    }
    const unknown =
      raw && typeof raw === "object" && !Array.isArray(raw) ? Object.keys(raw).find((key) => !COLUMNS.includes(key)) : undefined;
    yield unknown === undefined ? validate(line, raw) : { line, ok: false, error: `unknown field "${unknown}"${nearMiss(unknown)}` };
  }
}

interface Line {
  line: number;
  text: string;
}

/**
 * A manifest's lines, numbered from 1, without the byte-order mark some editors write before
 * UTF-8. A manifest must be UTF-8: bytes that are not (a spreadsheet's Latin-1 or UTF-16
 * export) come out as U+FFFD, which would be stored in names. The first line such (a UTF-16
 * file's is) stops the import; any later one fails its row.
 */
async function* manifestLines(path: string): AsyncGenerator<Line> {
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    line++;
    if (text.includes("\uFFFD") && line === 1) throw new Error(`line 1 is not UTF-8: save the manifest as UTF-8`);
    yield { line, text: line === 1 ? text.replace(/^\uFEFF/, "") : text };
  }
}

const NOT_UTF8 = "not valid UTF-8: save the manifest as UTF-8";

/** CSV records parsed at once; fewer would cost more per row, more would hold more rows back. */
const CSV_CHUNK = 500;
/** A record may stop short of the header's columns (the rest are empty); one with more fields than it has is refused. */
const csvOptions = { trim: true, relax_column_count_less: true } as const;

/**
 * CSV rows, a malformed record reported at its line like any bad row. csv-parse cannot skip
 * one on its own: after a stray quote (`"Acme"x`) it reads on inside a quoted field, taking
 * every later row with it. Records are therefore cut first, by their quotes, and a chunk of
 * them that csv-parse refuses is parsed again one record at a time.
 */
async function* readCsv(path: string): AsyncGenerator<ParsedLine> {
  let columns: string[] | undefined;
  let chunk: CsvRecord[] = [];
  for await (const record of csvRecords(path)) {
    if (!columns) {
      columns = csvHeader(record);
      continue;
    }
    chunk.push(record);
    if (chunk.length < CSV_CHUNK) continue;
    yield* parseCsvRecords(chunk, columns);
    chunk = [];
  }
  if (columns) yield* parseCsvRecords(chunk, columns);
}

/** The rows a manifest holds, as the import reads them (a CSV record may span lines); for progress, before the import starts. */
export async function countManifestRows(path: string): Promise<number> {
  let rows = 0;
  if (manifestFormat(path) === "csv") {
    for await (const _ of csvRecords(path)) rows++;
    return Math.max(0, rows - 1);
  }
  for await (const line of manifestLines(path)) if (line.text.trim() !== "") rows++;
  return rows;
}

interface CsvRecord {
  /** The line the record starts on. */
  line: number;
  text: string;
}

/** Non-blank records: a line break inside a quoted field continues the record. */
async function* csvRecords(path: string): AsyncGenerator<CsvRecord> {
  const cutter = new CsvRecordCutter();
  for await (const line of manifestLines(path)) yield* cutter.push(line);
  yield* cutter.end();
}

/** More lines than a record of a manifest ever spans: a quoted field open this long was never closed. */
const MAX_RECORD_LINES = 100;

/**
 * Cuts a CSV file's lines into records. A quoted field that is never closed (`"Acme,acme.com,…`)
 * would otherwise take every later line into its record, to the end of the file: once its
 * record is longer than any manifest's, or the file ends, its first line is a record alone
 * (refused as malformed) and the lines after it are read again as records of their own.
 */
class CsvRecordCutter {
  private open: Line[] = [];
  private quoted = false;

  /** The records that `line` completes. */
  push(line: Line): CsvRecord[] {
    return this.cut([line]);
  }

  /** The records left when the file ends. */
  end(): CsvRecord[] {
    const records: CsvRecord[] = [];
    while (this.open.length > 0) records.push(...this.cut(this.unclosed(records)));
    return records;
  }

  private cut(lines: Line[]): CsvRecord[] {
    const records: CsvRecord[] = [];
    const todo = [...lines];
    for (let next = todo.shift(); next; next = todo.shift()) {
      if (this.open.length === 0 && next.text.trim() === "") continue;
      this.open.push(next);
      this.quoted = quotedFieldOpenAfter(next.text, this.quoted);
      if (!this.quoted) records.push(this.take(this.open.length));
      else if (this.open.length > MAX_RECORD_LINES) todo.unshift(...this.unclosed(records));
    }
    return records;
  }

  /** Gives the open record up: its first line goes to `records` alone, and the lines after it come back to be read again. */
  private unclosed(records: CsvRecord[]): Line[] {
    const rest = this.open.slice(1);
    records.push(this.take(1));
    return rest;
  }

  private take(lines: number): CsvRecord {
    const taken = this.open.slice(0, lines);
    this.open = [];
    this.quoted = false;
    return { line: taken[0]!.line, text: taken.map((line) => line.text).join("\n") };
  }
}

/**
 * Whether a quoted field is open at the end of a line of CSV, given whether one was open at its
 * start, read as csv-parse reads it with `trim`: a quote opens a quoted field only at the start
 * of a field (after whitespace, which is trimmed); inside one, `""` is a quote and a lone quote
 * closes it. A quote anywhere else (`O"Reilly`, `5" Display`, `"Acme"x`) leaves the record on
 * its line, for csv-parse to accept or refuse alone; counting every quote would read on into
 * the rows after it.
 */
function quotedFieldOpenAfter(text: string, open: boolean): boolean {
  let fieldStart = !open;
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    if (open) {
      if (char !== '"') continue;
      if (text[at + 1] === '"') at++;
      else open = false;
    } else if (char === ",") fieldStart = true;
    else if (!fieldStart) continue;
    else if (char === '"') {
      open = true;
      fieldStart = false;
    } else if (!/\s/.test(char)) fieldStart = false;
  }
  return open;
}

/** The columns every row needs (manifestRowSchema): a header without one would fail every row, so it stops the import. */
const REQUIRED_COLUMNS = ["name", "domains", "variant", "image"];

function csvHeader({ line, text }: CsvRecord): string[] {
  let columns: string[];
  try {
    columns = (parseCsv(text, csvOptions) as string[][])[0]!;
  } catch (error) {
    throw new Error(`line ${line}: the header row is ${csvProblem(error)}`);
  }
  // A spreadsheet's export may end its header with a comma: a column without a name, which
  // its rows leave empty (validateCsv holds them to that).
  columns = columns.map((column, index) => (column === "" ? unnamedColumn(index) : column));
  const missing = REQUIRED_COLUMNS.filter((column) => !columns.includes(column));
  if (missing.length > 0)
    throw new Error(
      `line ${line}: the header row has no ${missing.join(", ")} column (it names ${columns.join(", ")}; separate columns with commas)`,
    );
  // Nothing is imported past a column that would be dropped: every row would lose it without a word.
  const unknown = columns.find((column) => !COLUMNS.includes(column) && !column.startsWith(UNNAMED));
  if (unknown !== undefined)
    throw new Error(
      `line ${line}: the header row has an unknown column "${unknown}"${nearMiss(unknown)}; the columns are ${COLUMNS.join(", ")}`,
    );
  const twice = columns.find((column, index) => columns.indexOf(column) !== index);
  if (twice !== undefined) throw new Error(`line ${line}: the header row has the ${twice} column twice`);
  return columns;
}

const UNNAMED = "#unnamed ";
const unnamedColumn = (index: number) => `${UNNAMED}${index + 1}`;

/** A CSV row, whose columns without a name must be empty: a value there would be dropped without a word. */
function validateCsv(line: number, row: Record<string, string> | undefined): ParsedLine {
  const fields = { ...row };
  for (const [column, value] of Object.entries(fields)) {
    if (!column.startsWith(UNNAMED)) continue;
    if (value !== "")
      return { line, ok: false, error: `a value in column ${column.slice(UNNAMED.length)}, which the header row leaves without a name` };
    delete fields[column];
  }
  return validate(line, fields);
}

function parseCsvRecords(records: CsvRecord[], columns: string[]): ParsedLine[] {
  if (records.some((record) => record.text.includes("\uFFFD"))) {
    return records.flatMap((record) =>
      record.text.includes("\uFFFD") ? [{ line: record.line, ok: false as const, error: NOT_UTF8 }] : parseCsvRecords([record], columns),
    );
  }
  try {
    const rows = parseCsv(records.map((r) => r.text).join("\n"), { ...csvOptions, columns }) as Record<string, string>[];
    if (rows.length === records.length) return rows.map((row, index) => validateCsv(records[index]!.line, row));
  } catch {
    // One of them is malformed: find which.
  }
  return records.map(({ line, text }): ParsedLine => {
    try {
      return validateCsv(line, (parseCsv(text, { ...csvOptions, columns }) as Record<string, string>[])[0]);
    } catch (error) {
      return { line, ok: false, error: csvProblem(error) };
    }
  });
}

/** What is wrong with a record csv-parse refused; its own message counts lines from the record, not the file. */
function csvProblem(error: unknown): string {
  const code = (error as { code?: string }).code ?? "";
  if (code === "CSV_QUOTE_NOT_CLOSED") return "not valid CSV: a quoted field is never closed";
  if (code.includes("QUOTE")) return 'not valid CSV: a quoted field must be the whole field (a quote inside one is written "")';
  if (code === "CSV_RECORD_INCONSISTENT_COLUMNS")
    return "more fields than the header row has columns (a comma inside a field needs quotes)";
  return "not valid CSV";
}
