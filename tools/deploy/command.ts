import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { unstable_readConfig } from "wrangler";
import { type CommandIo, parseCommandLine, UsageError } from "../args";
import { projectRoot } from "../platform";
import { type DeploymentConfig, deploymentProblems } from "./checks";
import { type CloudflareApi, cloudflareApi } from "./cloudflareApi";
import { type Action, type DeploymentResources, provision } from "./provision";
import { stripeWebhookProblems } from "./stripeWebhook";

/**
 * npm run deploy [-- --dry-run] [--base-url https://logos.example.com] [--seed]
 *
 * One command from a Cloudflare account to a running service, as many times as wanted:
 *   1. the D1 database, R2 bucket, KV namespace and queue of wrangler.toml are made where
 *      missing, and their ids written into wrangler.toml;
 *   2. `--base-url` sets PUBLIC_BASE_URL in wrangler.toml;
 *   3. the Worker's secrets: those set are kept; a missing one is taken from the environment
 *      variable of its name, asked for at a terminal, or (SIGNED_URL_SECRET) made; a required
 *      one that cannot be had stops the deploy, named;
 *   4. deploy:check's checks of the configuration;
 *   5. the D1 migrations (`wrangler d1 migrations apply DB --remote`);
 *   6. `wrangler deploy`, the secrets uploaded with it (`--secrets-file`, a private file
 *      removed afterwards);
 *   7. with `--seed`, the bundled catalogue (`npm run seed -- --remote`).
 * `--dry-run` looks and says what it would do, and changes nothing. Needs
 * CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID (wrangler reads the same two).
 */
export interface DeployDependencies {
  api?: CloudflareApi;
  /** Runs a program to its end, its output passed through; its exit status. */
  run?: (command: string, args: string[], env?: Record<string, string>) => Promise<number>;
  generate?: () => string;
  /** The Stripe account's webhook endpoints checked (./stripeWebhook.ts; a test's stand-in). */
  webhookProblems?: (config: DeploymentConfig, log: (line: string) => void) => Promise<string[]>;
}

const wrangler = join(projectRoot, "node_modules", ".bin", "wrangler");

function runProgram(command: string, args: string[], env: Record<string, string> = {}): Promise<number> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: projectRoot, stdio: "inherit", env: { ...process.env, ...env } });
    child.on("close", (status) => done(status ?? 1));
  });
}

/** What wrangler.toml says of the resources a deployment needs. */
interface WranglerResources {
  name?: string;
  d1_databases: { binding: string; database_name?: string; database_id?: string }[];
  r2_buckets: { binding: string; bucket_name?: string }[];
  kv_namespaces: { binding: string; id?: string }[];
  queues: { producers?: { binding: string; queue: string }[] };
}

function resourcesOf(config: WranglerResources): DeploymentResources {
  const database = config.d1_databases.find((d) => d.binding === "DB");
  const bucket = config.r2_buckets.find((b) => b.binding === "LOGOS");
  const kv = config.kv_namespaces.find((k) => k.binding === "OAUTH_KV");
  const queue = config.queues.producers?.find((q) => q.binding === "DISCOVERY_QUEUE");
  if (!database?.database_name || !bucket?.bucket_name || !kv || !queue) {
    throw new UsageError(
      "wrangler.toml must bind a D1 database as DB, an R2 bucket as LOGOS, a KV namespace as OAUTH_KV and a queue as DISCOVERY_QUEUE",
    );
  }
  return {
    worker: config.name ?? "logo-lookup",
    database: { binding: "DB", name: database.database_name, id: database.database_id },
    bucket: { name: bucket.bucket_name },
    kv: { binding: "OAUTH_KV", id: kv.id },
    queue: { name: queue.queue },
  };
}

/** wrangler.toml with PUBLIC_BASE_URL set in its [vars]. */
export function withBaseUrl(toml: string, base: string): string {
  const line = `PUBLIC_BASE_URL = ${JSON.stringify(base)}`;
  return /^PUBLIC_BASE_URL\s*=.*$/m.test(toml)
    ? toml.replace(/^PUBLIC_BASE_URL\s*=.*$/m, line)
    : toml.replace(/^\[vars\]\s*$/m, `[vars]\n${line}`);
}

const describe = (action: Action): string => {
  switch (action.kind) {
    case "found":
      return `found      ${action.resource} ${action.name}${action.id ? ` (${action.id})` : ""}`;
    case "create":
      return `create     ${action.resource} ${action.name}`;
    case "write-id":
      return `write      ${action.binding}'s id ${action.id} into wrangler.toml`;
    case "secret-present":
      return `secret     ${action.name} is set`;
    case "secret-set":
      return `secret     ${action.name} from the ${action.from === "generated" ? "random key made here" : action.from}`;
    case "secret-missing":
      return `secret     ${action.name} is missing${action.required ? "" : " (optional)"}`;
  }
};

export async function deployCommand(argv: string[], io: CommandIo, dependencies: DeployDependencies = {}): Promise<number> {
  const { values, positionals } = parseCommandLine(argv, {
    "dry-run": { type: "boolean", default: false },
    seed: { type: "boolean", default: false },
    "base-url": { type: "string" },
    config: { type: "string" },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const dryRun = values["dry-run"];
  const configPath = resolve(values.config ?? join(projectRoot, "wrangler.toml"));
  const say = (line: string) => io.stdout.write(`${line}\n`);

  const token = process.env.CLOUDFLARE_API_TOKEN;
  const accountId = process.env.CLOUDFLARE_ACCOUNT_ID;
  if (!dependencies.api && (!token || !accountId)) {
    throw new UsageError(
      "set CLOUDFLARE_API_TOKEN (an API token allowed to edit Workers, D1, R2, KV and Queues) and CLOUDFLARE_ACCOUNT_ID (the account's id, shown on the dashboard)",
    );
  }
  const api = dependencies.api ?? cloudflareApi({ token: token!, base: process.env.CLOUDFLARE_API_BASE_URL });

  // A dry run reads, and checks, the configuration it would write: a private copy of it.
  let readPath = configPath;
  let scratch: string | undefined;
  if (values["base-url"] !== undefined) {
    let base: URL;
    try {
      base = new URL(values["base-url"]);
    } catch {
      throw new UsageError(`--base-url ${JSON.stringify(values["base-url"])} is not an address`);
    }
    if (base.protocol !== "https:" || base.pathname !== "/" || base.search) {
      throw new UsageError("--base-url is the Worker's public https origin, such as https://logos.example.com");
    }
    const updated = withBaseUrl(readFileSync(configPath, "utf8"), base.origin);
    say(`set        PUBLIC_BASE_URL = ${base.origin}`);
    if (dryRun) {
      scratch = mkdtempSync(join(tmpdir(), "logo-lookup-deploy-"));
      readPath = join(scratch, "wrangler.toml");
      // Beside the real one's relative paths: main, migrations.
      writeFileSync(
        readPath,
        updated.replace(/^main\s*=\s*"([^"]+)"/m, (_, main: string) => `main = ${JSON.stringify(resolve(projectRoot, main))}`),
      );
    } else writeFileSync(configPath, updated);
  }
  try {
    return await deployWith(readPath, configPath, dryRun, values.seed, accountId ?? "", api, io, dependencies);
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

async function deployWith(
  readPath: string,
  configPath: string,
  dryRun: boolean,
  seed: boolean,
  accountId: string,
  api: CloudflareApi,
  io: CommandIo,
  dependencies: DeployDependencies,
): Promise<number> {
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const config = unstable_readConfig({ config: readPath });
  const { actions, secrets } = await provision({
    api,
    accountId,
    configPath,
    resources: resourcesOf(config as unknown as WranglerResources),
    environment: process.env,
    ask: io.stdin?.isTTY ? (name, why) => io.stdin!.askHidden(`${name} (without it, ${why}): `) : undefined,
    generate: dependencies.generate ?? (() => randomBytes(32).toString("base64url")),
    dryRun,
  });
  for (const action of actions) say(describe(action));

  const missing = actions.filter((a) => a.kind === "secret-missing" && a.required).map((a) => (a as { name: string }).name);
  const secretNames = actions
    .filter((a) => a.kind === "secret-present" || a.kind === "secret-set")
    .map((a) => (a as { name: string }).name);
  // A dry run has not made the resources yet: their ids are the ones it would write.
  const toBeMade = new Set(actions.filter((a) => a.kind === "create").map((a) => (a as { resource: string }).resource));
  const problems = deploymentProblems(unstable_readConfig({ config: readPath }) as unknown as DeploymentConfig, [
    ...secretNames,
    ...(dryRun ? missing : []),
  ]).filter(
    (problem) =>
      !(dryRun && toBeMade.has("database") && problem.startsWith("[d1_databases]")) &&
      !(dryRun && toBeMade.has("kv") && problem.startsWith("[kv_namespaces]")),
  );
  if (missing.length > 0 && !dryRun) {
    problems.push(
      `secrets missing: ${missing.join(", ")} (set each as an environment variable of its name, or run npm run deploy in a terminal to be asked)`,
    );
  }
  // The Stripe account's webhook endpoints, asked with the deployment's key where the operator's environment holds it.
  if (problems.length === 0) {
    const check = dependencies.webhookProblems ?? stripeWebhookProblems;
    problems.push(...(await check(config as unknown as DeploymentConfig, say)));
  }
  for (const problem of problems) io.stderr.write(`deploy: ${problem}\n`);
  if (dryRun) {
    if (missing.length > 0) say(`would ask for: ${missing.join(", ")}`);
    say("dry run: nothing was changed");
    return problems.length === 0 ? 0 : 1;
  }
  if (problems.length > 0) return 1;

  const run = dependencies.run ?? runProgram;
  say("migrating the database…");
  if ((await run(wrangler, ["d1", "migrations", "apply", "DB", "--remote", "--config", configPath], { CI: "true" })) !== 0) return 1;
  say("deploying…");
  const deployArgs = ["deploy", "--config", configPath];
  let secretsDir: string | undefined;
  try {
    if (Object.keys(secrets).length > 0) {
      secretsDir = mkdtempSync(join(tmpdir(), "logo-lookup-secrets-"));
      const file = join(secretsDir, "secrets.json");
      writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
      deployArgs.push("--secrets-file", file);
    }
    if ((await run(wrangler, deployArgs)) !== 0) return 1;
  } finally {
    if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
  }
  if (seed) {
    say("seeding the catalogue…");
    if ((await run("npm", ["run", "seed", "--", "--remote"])) !== 0) return 1;
  }
  say("deployed");
  return 0;
}
