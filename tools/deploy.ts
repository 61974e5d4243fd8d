import { UsageError, processIo } from "./args";
import { deployCommand } from "./deploy/command";

try {
  process.exitCode = await deployCommand(process.argv.slice(2), processIo);
} catch (error) {
  process.stderr.write(
    `deploy: ${error instanceof UsageError ? `${error.message}\nusage: npm run deploy [-- --dry-run] [--base-url https://…] [--seed]` : (error as Error).message}\n`,
  );
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
