/**
 * npm run admin -- <command> [options] [--remote] [--persist-to DIR]
 *
 * Operator commands on the local state (also while `npm start` runs; changes apply at once)
 * or, with --remote, on the deployment. Prints one JSON object on stdout. On failure prints
 * {"error":{code,message}} on stderr and exits 1; a usage mistake exits 2; either way
 * nothing is written. The commands are in ./admin/commands.ts, the program in ./admin/run.ts.
 */
import { runAdmin } from "./admin/run";

process.exitCode = await runAdmin(process.argv.slice(2));
