import { parseArgs, type ParseArgsConfig } from "node:util";

/** A command-line mistake: printed as a clear message with a non-zero exit, before anything is written. */
export class UsageError extends Error {}

export function parseCommandLine<T extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
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
