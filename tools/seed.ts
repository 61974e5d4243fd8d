/**
 * npm run seed -- [--remote] [--persist-to DIR] [--plain-progress]
 *
 * Builds the bundled seed catalogue (tools/seed/) into an import manifest under
 * .wrangler/seed/ and imports it. Safe to run again: unchanged logos are skipped, and an
 * interrupted seeding resumes. `npm start` runs this by itself, beside the server, until one
 * seeding has finished; --plain-progress prints progress as lines even on a terminal.
 */
import { parseCommandLine, storageOptions, UsageError } from "./args";
import { seedCatalogue } from "./seed/seed";

try {
  const { values, positionals } = parseCommandLine(process.argv.slice(2), {
    ...storageOptions,
    "plain-progress": { type: "boolean", default: false },
  });
  if (positionals.length > 0) throw new UsageError("usage: npm run seed -- [--remote] [--persist-to DIR] [--plain-progress]");
  const { failures, ...summary } = await seedCatalogue({
    remote: values.remote,
    persistTo: values["persist-to"],
    plainProgress: values["plain-progress"],
  });
  console.log(JSON.stringify({ ...summary, failures }));
  process.exitCode = summary.failed > 0 ? 2 : 0;
} catch (error) {
  console.error(JSON.stringify({ error: { message: (error as Error).message } }));
  process.exitCode = 1;
}
