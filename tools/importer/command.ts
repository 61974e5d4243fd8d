import { type CommandIo, parseCommandLine, processIo, storageOptions, UsageError, wholeNumber } from "../args";
import { type ImportManifestOptions, importManifest } from "./importManifest";

export const importUsage =
  "usage: npm run import -- <manifest.jsonl|manifest.csv> [--batch-size N] [--restart] [--allow-private-urls] [--remote] [--persist-to DIR]";

/**
 * `npm run import` as a function: parses argv, imports, prints the JSON summary on stdout and
 * returns the exit code: 0 when every row imported, 2 when rows were skipped, 1 when the import
 * could not run. Tests call it in-process with a shared writer and conversion pool.
 */
export async function importCommand(
  argv: string[],
  io: CommandIo = processIo,
  reuse: Pick<ImportManifestOptions, "writer" | "pool"> = {},
): Promise<number> {
  try {
    const { values, positionals } = parseCommandLine(argv, {
      ...storageOptions,
      "batch-size": { type: "string" },
      restart: { type: "boolean", default: false },
      "allow-private-urls": { type: "boolean", default: false },
    });
    if (positionals.length !== 1) throw new UsageError(importUsage);
    const batchSizeText = values["batch-size"];
    const batchSize =
      batchSizeText === undefined
        ? undefined
        : wholeNumber(batchSizeText, "--batch-size must be a whole number from 1 to 10000", 1, 10_000);
    const { failures, ...summary } = await importManifest(positionals[0]!, {
      remote: values.remote,
      persistTo: values["persist-to"],
      batchSize,
      restart: values.restart,
      allowPrivateUrls: values["allow-private-urls"],
      stream: io.stderr,
      ...reuse,
    });
    io.stdout.write(`${JSON.stringify({ ...summary, failures })}\n`);
    return summary.failed > 0 ? 2 : 0;
  } catch (error) {
    io.stderr.write(`${JSON.stringify({ error: { message: (error as Error).message } })}\n`);
    return 1;
  }
}
