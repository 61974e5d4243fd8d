/**
 * npm start: the whole local service in one command.
 *   1. applies D1 migrations to the local database;
 *   2. seeds the bundled catalogue until one seeding has finished (later starts skip it; an
 *      interrupted one resumes, the importer skipping what is already stored);
 *   3. makes sure the demo account exists and prints fresh keys and example URLs;
 *   4. runs `wrangler dev` on $PORT (default 8787).
 * Any wrangler var or secret (wrangler.toml [vars], .dev.vars.example) can be overridden by an
 * environment variable of the same name.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logos } from "../../schema";
import type { Db } from "../lib/db";
import { openPlatform, projectRoot } from "./platform";
import { seedCatalogue } from "./seed/seed";
import { ensureDemoAccount } from "./start/demo";
import { localSigningSecret, writeOverrides } from "./start/overrides";

const port = process.env.PORT ?? "8787";
const wrangler = join(projectRoot, "node_modules", ".bin", "wrangler");
const log = (message: string) => process.stderr.write(`${message}\n`);

function run(args: string[]) {
  // CI=true: wrangler answers its own confirmation prompts instead of waiting for a terminal.
  const result = spawnSync(wrangler, args, { cwd: projectRoot, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, CI: "true" } });
  if (result.status !== 0) throw new Error(`wrangler ${args.join(" ")} failed`);
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

// Written when a seeding finishes; a catalogue that has logos but no mark was interrupted.
const seededMark = join(projectRoot, ".wrangler", "state", "seeded");
if (!existsSync(seededMark)) {
  const resuming = await withPlatform(async (db) => (await db.select({ id: logos.id }).from(logos).limit(1).get()) !== undefined);
  log(resuming ? "Resuming the interrupted seeding of the bundled catalogue…" : "Seeding the bundled logo catalogue (first start only; a few minutes on two cores)…");
  const report = await seedCatalogue({});
  const logoCount = report.created + report.updated + report.unchanged;
  log(`Seeded ${report.companies} companies and ${logoCount} logos in ${report.seconds}s${report.failed ? ` (${report.failed} rows skipped)` : ""}.`);
  writeFileSync(seededMark, `${new Date().toISOString()}\n`);
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

const devVars = join(projectRoot, ".dev.vars");
const envFile = writeOverrides(projectRoot, { ...process.env, ...localSigningSecret(devVars) }, join(projectRoot, ".wrangler", "tmp", "start.env"));
const envFileArgs = envFile ? [...(existsSync(devVars) ? ["--env-file", devVars] : []), "--env-file", envFile] : [];
const dev = spawn(wrangler, ["dev", "--port", port, ...envFileArgs], { cwd: projectRoot, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code) => process.exit(code ?? 0));
