/**
 * npm start: the whole local service in one command.
 *   1. applies D1 migrations to the local database (./start/migrations.ts, as wrangler would);
 *   2. makes sure the demo account exists and prints fresh keys and example URLs;
 *   3. runs `wrangler dev` on $PORT (default 8787);
 *   4. until one seeding has finished, seeds the bundled catalogue beside the running server
 *      (./start/seeding.ts): logos appear as they are written, progress goes to stderr, and an
 *      interrupted seeding resumes at the next start.
 * Any wrangler var or secret (wrangler.toml [vars], .dev.vars.example) can be overridden by an
 * environment variable of the same name.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { logos } from "../schema";
import { openPlatform, type Platform, projectRoot, storageTool } from "./platform";
import { demoPassword, ensureDemoAccount, printedKeyIds, rememberPrintedKeys } from "./start/demo";
import { applyMigrations } from "./start/migrations";
import { localAddresses, localSigningSecret, publicAddressSet, writeOverrides } from "./start/overrides";
import { EXAMPLE_DOMAIN } from "./seed/seed";
import { beginSeeding, mustSeed, seedBesideTheServer } from "./start/seeding";

const port = process.env.PORT ?? "8787";
const wrangler = join(projectRoot, "node_modules", ".bin", "wrangler");
const log = (message: string) => process.stderr.write(`${message}\n`);

/** A start that cannot go on says why in one line: a stack trace would bury it. */
function stop(message: string): never {
  log(`npm start: ${message}`);
  process.exit(1);
}

/** A step before the server starts; one that throws (storage, wrangler.toml) stops the start. */
async function step<T>(job: () => T | Promise<T>): Promise<T> {
  try {
    return await job();
  } catch (error) {
    stop((error as Error).message);
  }
}

async function withPlatform<T>(job: (platform: Platform) => Promise<T>): Promise<T> {
  const platform = await openPlatform();
  try {
    return await job(platform);
  } finally {
    await platform.dispose();
  }
}

// Checked before anything is started or written.
const devVars = join(projectRoot, ".dev.vars");
const password = await demoPassword(process.env, publicAddressSet(devVars));
if (!password.ok) stop(password.error.message);

// The ids of the keys the last start printed: this start revokes them.
const demoKeysFile = join(projectRoot, ".wrangler", "state", "demo-keys.json");
// Written when a seeding finishes; a catalogue that has logos but no mark was interrupted.
const seededMark = join(projectRoot, ".wrangler", "state", "seeded");
const prepared = await step(() =>
  withPlatform(async ({ d1, db }) => {
    const applied = await applyMigrations(d1, (await storageTool({})).migrationsDir);
    log(applied.length > 0 ? `Applied ${applied.length} migrations to the local database.` : "The local database is up to date.");
    return {
      demo: await ensureDemoAccount(db, password.value, printedKeyIds(demoKeysFile)),
      hasLogos: (await db.select({ id: logos.id }).from(logos).limit(1).get()) !== undefined,
    };
  }),
);
if (!prepared.demo.ok) stop(prepared.demo.error.message);
const seeding = mustSeed(seededMark, prepared.hasLogos);
if (seeding) beginSeeding(seededMark, prepared.hasLogos);
const resuming = seeding && prepared.hasLogos;
const demo = prepared.demo.value;
await step(() => rememberPrintedKeys(demoKeysFile, demo.keyIds));
const base = `http://localhost:${port}`;
const example = `${base}/${EXAMPLE_DOMAIN}?token=${demo.publishableKey}`;
// A lookup made before its company is written is remembered as a miss for a minute, so on a
// first start the example is offered once its batch is in (a resumed seeding has it already).
const offerLater = seeding && !resuming;
log(`
Logo lookup is starting at ${base}

  Demo account     ${demo.email} / ${demo.password}
  Publishable key  ${demo.publishableKey}
  Secret key       ${demo.secretKey}   (shown once; new keys are issued at every start)

  Try              ${offerLater ? `${base}/health, and a lookup once seeding has written its first logos` : example}
                   ${offerLater ? "" : `${base}/health`}
`);

const envFile = await step(() =>
  writeOverrides(
    projectRoot,
    { ...process.env, ...localAddresses(devVars), ...localSigningSecret(devVars) },
    join(projectRoot, ".wrangler", "tmp", "start.env"),
  ),
);
// One file, .dev.vars within it: wrangler given --env-file reads no .dev.vars of its own.
const envFileArgs = envFile ? ["--env-file", envFile] : [];
// The Worker never reads `request.cf`: wrangler need not fetch its data from Cloudflare, which
// on a machine without internet printed two getaddrinfo errors into the first start's output.
const devEnv = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: process.env.CLOUDFLARE_CF_FETCH_ENABLED ?? "false" };
const dev = spawn(wrangler, ["dev", "--port", port, ...envFileArgs], { cwd: projectRoot, stdio: "inherit", env: devEnv });

let seeder: ReturnType<typeof seedBesideTheServer> | undefined;
if (seeding) {
  log(
    resuming
      ? "Resuming the interrupted seeding of the bundled catalogue beside the server…"
      : "Seeding the bundled logo catalogue beside the server (first start only; best-known companies first, about two minutes on two cores, progress below)…",
  );
  seeder = seedBesideTheServer(seededMark, log, () => {
    if (offerLater) log(`\n  Try              ${example}\n`);
  });
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    seeder?.stop();
    dev.kill(signal);
  });
}
dev.on("error", (error) => {
  seeder?.stop();
  stop(`wrangler dev could not start: ${error.message}`);
});
dev.on("exit", (code) => {
  seeder?.stop();
  process.exit(code ?? 0);
});
