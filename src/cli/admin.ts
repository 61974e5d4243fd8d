/**
 * npm run admin -- <command> [options] [--remote] [--persist-to DIR]
 *
 * Operator commands on the local state (also while `npm start` runs; changes apply at once)
 * or, with --remote, on the deployment. Prints one JSON object on stdout. On failure prints
 * {"error":{code,message}} on stderr and exits 1; a usage mistake exits 2; either way
 * nothing is written.
 */
import { statusOf } from "../lib/errors";
import { UsageError } from "./args";
import { commands } from "./admin/commands";
import { openPlatform } from "./platform";

const usage = `usage: npm run admin -- <command> [--remote] [--persist-to DIR]\n${Object.values(commands)
  .map((c) => `  ${c.usage}`)
  .join("\n")}`;

function failWith(code: string, message: string, exitCode: number): void {
  console.error(JSON.stringify({ error: { code, message } }));
  process.exitCode = exitCode;
}

const [noun, verb, ...rest] = process.argv.slice(2);
const command = commands[`${noun} ${verb}`];

if (!command) {
  failWith("invalid_argument", noun ? `unknown command "${[noun, verb].filter(Boolean).join(" ")}"\n${usage}` : usage, 2);
} else {
  try {
    const job = command.parse(rest);
    const platform = await openPlatform(job.storage);
    try {
      const result = await job.run(platform.db);
      if (result.ok) console.log(JSON.stringify(result.value));
      else failWith(result.error.code, result.error.message, statusOf(result.error.code) === 400 ? 2 : 1);
    } finally {
      await platform.dispose();
    }
  } catch (error) {
    if (error instanceof UsageError) failWith("invalid_argument", `${error.message}\nusage: npm run admin -- ${command.usage}`, 2);
    else failWith("internal", (error as Error).message, 1);
  }
}
