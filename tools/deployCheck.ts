/**
 * npm run deploy:check [-- --remote]
 *
 * What a deployment needs, checked before `wrangler deploy` does anything: the vars of
 * wrangler.toml validate, production logs redact query strings (a key mistakenly put in a URL
 * must not be stored in them), the Worker bundles, and — with `--remote`, which reads the
 * Worker's secret names through `wrangler secret list` (needs `wrangler login` or
 * CLOUDFLARE_API_TOKEN) — every production secret is set, and, when the operator's
 * environment holds the deployment's STRIPE_SECRET_KEY, that a Stripe webhook endpoint sends
 * the events the service handles to it. Without `--remote` the secrets cannot be seen and are
 * listed as what a deployment needs. Prints each problem by name, never a value, and exits 1
 * when there is any. `npm run deploy` runs it with `--remote` first.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { unstable_readConfig } from "wrangler";
import { productionSecrets } from "../src/env";
import { parseCommandLine, UsageError } from "./args";
import { type DeploymentConfig, deploymentProblems } from "./deploy/checks";
import { stripeWebhookProblems } from "./deploy/stripeWebhook";
import { projectRoot } from "./platform";

const wrangler = join(projectRoot, "node_modules", ".bin", "wrangler");

function secretsOnWorker(): string[] {
  const listed = spawnSync(wrangler, ["secret", "list", "--format", "json"], {
    cwd: projectRoot,
    encoding: "utf8",
    env: { ...process.env, CI: "true" },
  });
  if (listed.status !== 0) throw new Error(`wrangler secret list failed (are you logged in?):\n${listed.stderr}`);
  return (JSON.parse(listed.stdout) as { name: string }[]).map((secret) => secret.name);
}

try {
  const { values, positionals } = parseCommandLine(process.argv.slice(2), { remote: { type: "boolean", default: false } });
  // `deploy:check remote` meant --remote: checked as if without it, it would pass what it cannot see.
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const config = unstable_readConfig({ config: join(projectRoot, "wrangler.toml") }) as unknown as DeploymentConfig;
  const problems = deploymentProblems(config, values.remote ? secretsOnWorker() : null);
  const bundled = spawnSync(wrangler, ["deploy", "--dry-run", "--outdir", ".wrangler/dry-run"], {
    cwd: projectRoot,
    stdio: "inherit",
    env: { ...process.env, CI: "true" },
  });
  if (bundled.status !== 0) problems.push("the Worker does not bundle (see above)");
  if (values.remote) problems.push(...(await stripeWebhookProblems(config)));
  if (!values.remote) {
    const needed = Object.entries(productionSecrets).map(([name, s]) => `${name}${s.required ? "" : " (optional)"}`);
    console.log(`Secrets not checked (run with --remote to read them from the Worker). A deployment needs: ${needed.join(", ")}.`);
  }
  for (const problem of problems) console.error(`deploy:check: ${problem}`);
  if (problems.length === 0) console.log("deploy:check: ready to deploy");
  process.exitCode = problems.length === 0 ? 0 : 1;
} catch (error) {
  console.error(
    `deploy:check: ${error instanceof UsageError ? `${error.message}\nusage: npm run deploy:check [-- --remote]` : (error as Error).message}`,
  );
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
