/**
 * npm start: the whole local service in one command.
 *   1. applies D1 migrations to the local database;
 *   2. seeds the bundled catalogue when the local catalogue is empty (later starts skip it);
 *   3. makes sure the demo account exists and prints fresh keys and example URLs;
 *   4. runs `wrangler dev` on $PORT (default 8787).
 * Any wrangler var or secret (wrangler.toml [vars], .dev.vars.example) can be overridden by an
 * environment variable of the same name.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { unstable_readConfig } from "wrangler";
import { logos } from "../../schema";
import type { Db } from "../lib/db";
import { openPlatform, projectRoot } from "./platform";
import { seedCatalogue } from "./seed/seed";
import { ensureDemoAccount } from "./start/demo";

const port = process.env.PORT ?? "8787";
const wrangler = join(projectRoot, "node_modules", ".bin", "wrangler");
const log = (message: string) => process.stderr.write(`${message}\n`);

function run(args: string[]) {
  const result = spawnSync(wrangler, args, { cwd: projectRoot, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, CI: "true" } });
  if (result.status !== 0) throw new Error(`wrangler ${args.join(" ")} failed`);
}

/** Names of every var and secret the Worker reads, and the file that hands their overrides to wrangler. */
function overridesFile(): string | undefined {
  const config = unstable_readConfig({ config: join(projectRoot, "wrangler.toml") });
  const secretNames = readFileSync(join(projectRoot, ".dev.vars.example"), "utf8")
    .split("\n")
    .map((line) => /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
  const names = [...Object.keys(config.vars ?? {}), ...secretNames];
  const lines = names.filter((name) => process.env[name] !== undefined).map((name) => `${name}=${JSON.stringify(process.env[name])}`);
  if (lines.length === 0) return undefined;
  const dir = join(projectRoot, ".wrangler", "tmp");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "start.env");
  writeFileSync(file, `${lines.join("\n")}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

async function withPlatform<T>(job: (db: Db) => Promise<T>): Promise<T> {
  const platform = await openPlatform();
  try {
    return await job(platform.db);
  } finally {
    await platform.dispose();
  }
}

log("Applying migrations to the local database…");
run(["d1", "migrations", "apply", "DB", "--local"]);

const seeded = await withPlatform(async (db) => (await db.select({ id: logos.id }).from(logos).limit(1).get()) !== undefined);
if (!seeded) {
  log("Seeding the bundled logo catalogue (first start only; a few minutes on two cores)…");
  const report = await seedCatalogue({});
  const logoCount = report.created + report.updated + report.unchanged;
  log(`Seeded ${report.companies} companies and ${logoCount} logos in ${report.seconds}s${report.failed ? ` (${report.failed} rows skipped)` : ""}.`);
}

const demo = await withPlatform((db) => ensureDemoAccount(db));
const base = `http://localhost:${port}`;
log(`
Logo lookup is starting at ${base}

  Demo account     ${demo.email} / ${demo.password}
  Publishable key  ${demo.publishableKey}
  Secret key       ${demo.secretKey}   (shown once; new keys are issued at every start)

  Try              ${base}/github.com?token=${demo.publishableKey}
                   ${base}/health
`);

const envFile = overridesFile();
const devVars = join(projectRoot, ".dev.vars");
const envFileArgs = envFile ? [...(existsSync(devVars) ? ["--env-file", devVars] : []), "--env-file", envFile] : [];
const dev = spawn(wrangler, ["dev", "--port", port, ...envFileArgs], { cwd: projectRoot, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code) => process.exit(code ?? 0));
