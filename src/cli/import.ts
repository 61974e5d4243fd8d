/**
 * npm run import -- <manifest.jsonl|manifest.csv> [--remote] [--persist-to DIR]
 *
 * Loads the logos a manifest names (format: src/cli/importer/manifest.ts, README "Importing
 * logos") into D1 and R2: local state by default, the deployed database and bucket with
 * --remote. Bad rows are reported on stderr with their line number and skipped. Prints a
 * JSON summary; exits 0 when every row imported, 2 when rows were skipped, 1 when the
 * import could not run.
 */
import { parseCommandLine, storageOptions, UsageError } from "./args";
import { importManifest } from "./importer/importManifest";

try {
  const { values, positionals } = parseCommandLine(process.argv.slice(2), storageOptions);
  if (positionals.length !== 1) {
    throw new UsageError("usage: npm run import -- <manifest.jsonl|manifest.csv> [--remote] [--persist-to DIR]");
  }
  const { failures, ...summary } = await importManifest(positionals[0]!, {
    remote: values.remote,
    persistTo: values["persist-to"],
  });
  console.log(JSON.stringify({ ...summary, failures }));
  process.exitCode = summary.failed > 0 ? 2 : 0;
} catch (error) {
  console.error(JSON.stringify({ error: { message: (error as Error).message } }));
  process.exitCode = 1;
}
