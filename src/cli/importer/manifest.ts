import { createReadStream } from "node:fs";
import { extname } from "node:path";
import { createInterface } from "node:readline";
import { parse as parseCsv } from "csv-parse";
import { z } from "zod";
import { logoVariants } from "../../../schema";
import { normaliseDomain } from "../../lib/domain";

/**
 * The import manifest: one logo per row, as JSON Lines (`.jsonl`, one object per line) or
 * CSV (`.csv`, header row first). Both use the same column names:
 *
 *   name         required  company name
 *   domains      required  one or more hosts, primary first (CSV: separated by `;`)
 *   variant      required  `full` (wordmark) or `icon`
 *   image        required  file path (relative to the manifest) or http(s) URL; SVG, PNG, JPEG, WebP, GIF
 *   ticker                 stock ticker, e.g. AAPL
 *   exchange               exchange of the ticker, e.g. NASDAQ
 *   aliases                other names (CSV: separated by `;`)
 *   brand_color            `#rrggbb`
 *   source_set             where the image comes from (default `manifest`)
 *   licence                licence of the image, SPDX id where one exists (default `unknown`)
 *   prominence             integer, higher ranks first among equal search matches (default 0)
 */
const list = z.union([
  z.array(z.string()),
  z.string().transform((value) =>
    value
      .split(";")
      .map((part) => part.trim())
      .filter(Boolean),
  ),
]);

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

export const manifestRowSchema = z.object({
  name: z.string().trim().min(1, "name is required").max(200),
  domains: domainList,
  variant: z.enum(logoVariants, { message: "variant must be full or icon" }),
  image: z.string().trim().min(1, "image is required"),
  ticker: optionalText.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9.&\- ]{1,20}$/, "ticker must be 1-20 letters, digits, dots, dashes, ampersands or spaces")
      .transform((value) => value.toUpperCase())
      .optional(),
  ),
  exchange: optionalText.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9]{2,12}$/, "exchange must be 2-12 letters or digits")
      .transform((value) => value.toUpperCase())
      .optional(),
  ),
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
  licence: optionalText.pipe(z.string().max(100).default("unknown")),
  prominence: z.coerce.number().int().min(0).max(1_000_000).optional().default(0),
});

export type ManifestRow = z.infer<typeof manifestRowSchema>;

export type ParsedLine =
  | { line: number; ok: true; row: ManifestRow }
  | { line: number; ok: false; error: string };

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
    const parser = createReadStream(path).pipe(
      parseCsv({ columns: true, skip_empty_lines: true, trim: true, relax_column_count: true, info: true, bom: true }),
    );
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      yield validate(info.lines, record);
    }
    return;
  }
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    line++;
    if (text.trim() === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      yield { line, ok: false, error: "not valid JSON" };
      continue;
    }
    yield validate(line, raw);
  }
}
