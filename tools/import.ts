/**
 * npm run import -- <manifest.jsonl|manifest.csv> [--batch-size N] [--restart] [--remote] [--persist-to DIR]
 *
 * Loads the logos a manifest names (format: tools/importer/manifest.ts, docs/importing.md)
 * into D1 and R2: local state by default, the deployed database and bucket with
 * --remote. Images are converted on every core and rows written in batches; an interrupted
 * import resumes where it stopped (--restart starts over). Bad rows are reported on stderr with
 * their line number and skipped. Prints a JSON summary; exits 0 when every row imported, 2 when
 * rows were skipped, 1 when the import could not run.
 */
import { importCommand } from "./importer/command";

process.exitCode = await importCommand(process.argv.slice(2));
