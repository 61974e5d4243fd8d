/**
 * npm run seed [-- --remote] [--persist-to DIR]
 *
 * Builds the bundled seed catalogue (src/cli/seed/) into an import manifest under
 * .wrangler/seed/ and imports it. Safe to run again: unchanged logos are skipped.
 * `npm start` runs this by itself when the local catalogue is empty.
 */
import { parseCommandLine, storageOptions, UsageError } from "./args";
import { seedCatalogue } from "./seed/seed";

try {
  const { values, positionals } = parseCommandLine(process.argv.slice(2), storageOptions);
  if (positionals.length > 0) throw new UsageError("usage: npm run seed [-- --remote] [--persist-to DIR]");
  const { failures, ...summary } = await seedCatalogue({ remote: values.remote, persistTo: values["persist-to"] });
  console.log(JSON.stringify({ ...summary, failures }));
  process.exitCode = summary.failed > 0 ? 2 : 0;
} catch (error) {
  console.error(JSON.stringify({ error: { message: (error as Error).message } }));
  process.exitCode = 1;
}
