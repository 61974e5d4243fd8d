import { parseArgs, type ParseArgsConfig } from "node:util";

/** A command-line mistake: printed as a clear message with a non-zero exit, before anything is written. */
export class UsageError extends Error {}

/** The options and positionals of `args`; an unknown option, or one given twice that is not a list, is a UsageError. */
export function parseCommandLine<T extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: T) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // parseArgs keeps the last of a repeated option: `--plan growth --plan free` would quietly be free.
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== "option" || options[token.name]?.multiple) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`);
    seen.add(token.name);
  }
  return parsed;
}

/** A whole-number option: decimal digits only (not `0x10`, `1e3`, `1.0` or ` 7 `) from `min` to `max`, else UsageError(message). */
export function wholeNumber(text: string, message: string, min: number, max: number): number {
  const value = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) throw new UsageError(message);
  return value;
}

/** Options every tool takes: where the storage is. */
export const storageOptions = {
  remote: { type: "boolean", default: false },
  "persist-to": { type: "string" },
} as const;

/** Where a command writes: the process's streams, or a test's buffers. */
export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface CommandIo {
  stdout: Output;
  stderr: Output;
}

export const processIo: CommandIo = { stdout: process.stdout, stderr: process.stderr };
