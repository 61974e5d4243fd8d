import { rootCause } from "../../src/lib/dependencies";
import { statusOf } from "../../src/lib/errors";
import { type CommandIo, processIo, UsageError } from "../args";
import { openPlatform, type Platform, type PlatformOptions } from "../platform";
import { type Command, commands } from "./commands";

export const adminUsage = `usage: npm run admin -- <command> [--remote] [--persist-to DIR]\n${Object.values(commands)
  .map((c) => `  ${c.usage}`)
  .join("\n")}`;

/**
 * `npm run admin` as a function: runs one command, prints its JSON result on stdout or
 * {"error":{code,message}} on stderr, and returns the exit code (0; 2 for a usage mistake or
 * an invalid argument; 1 for anything else). Tests call it in-process on a platform they
 * keep open; the program opens one per run.
 */
export async function runAdmin(
  argv: string[],
  io: CommandIo = processIo,
  open: (options: PlatformOptions) => Promise<Platform> = openPlatform,
): Promise<number> {
  const failWith = (code: string, message: string, exitCode: number) => {
    io.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
    return exitCode;
  };
  const { storage, words: commandWords } = leadingStorageOptions(argv);
  const named = commandOf(commandWords, storage);
  if (!named) {
    const words = commandWords.slice(0, 2).filter((arg) => !arg.startsWith("-"));
    return failWith("invalid_argument", words.length > 0 ? `unknown command "${words.join(" ")}"\n${adminUsage}` : adminUsage, 2);
  }
  const { command, rest } = named;
  try {
    const job = await command.parse(rest, io);
    const platform = await open(job.storage);
    try {
      const result = await job.run(platform.db, platform);
      if (!result.ok) return failWith(result.error.code, result.error.message, statusOf(result.error.code) === 400 ? 2 : 1);
      io.stdout.write(`${JSON.stringify(result.value)}\n`);
      return 0;
    } finally {
      await platform.dispose();
    }
  } catch (error) {
    if (error instanceof UsageError) return failWith("invalid_argument", `${error.message}\nusage: npm run admin -- ${command.usage}`, 2);
    return failWith("internal", causeOf(error), 1);
  }
}

/**
 * What went wrong, in the database's own words rather than the query drizzle wraps them in (which
 * names no cause and may quote the statement's parameters), and what to do about a state with no
 * catalogue in it.
 */
function causeOf(error: unknown): string {
  const innermost = rootCause(error);
  if (!/no such table/i.test(innermost)) return innermost;
  return `${innermost}: no catalogue in this state (run npm start once, or wrangler d1 migrations apply DB --local; or check --persist-to)`;
}

/**
 * The storage options (`--remote`, `--persist-to DIR`) written before the command's words, which
 * every command takes (`npm run admin -- --remote key revoke --key …`), and the words after them.
 */
function leadingStorageOptions(argv: string[]): { storage: string[]; words: string[] } {
  let at = 0;
  while (at < argv.length) {
    const arg = argv[at]!;
    if (arg === "--remote" || arg.startsWith("--persist-to=")) at += 1;
    else if (arg === "--persist-to" && at + 1 < argv.length) at += 2;
    else break;
  }
  return { storage: argv.slice(0, at), words: argv.slice(at) };
}

/** The command named by the first words ("key create", "discover"), and its arguments: those after them, then `storage`. */
function commandOf(argv: string[], storage: string[]): { command: Command; rest: string[] } | undefined {
  for (const [name, command] of Object.entries(commands)) {
    const words = name.split(" ");
    if (words.every((word, index) => argv[index] === word)) return { command, rest: [...argv.slice(words.length), ...storage] };
  }
  return undefined;
}
