import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { deployCommand } from "../../tools/deploy/command";
import { type FakeCloudflare, startFakeCloudflare } from "../fakes/cloudflareApi";
import { root } from "./helpers";

/**
 * `npm run deploy` against a stand-in of Cloudflare's API on loopback: what a first run makes
 * and writes, that a second changes nothing, that a dry run only looks, and that a missing
 * secret stops it. The wrangler steps (migrations, deploy) are recorded, not run: they are
 * wrangler's own, against the real API.
 */
let cloudflare: FakeCloudflare;
let dir: string;
let config: string;
const saved = { ...process.env };

beforeAll(async () => {
  cloudflare = await startFakeCloudflare();
});
afterAll(() => cloudflare.close());

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "deploy-test-"));
  config = join(dir, "wrangler.toml");
  writeFileSync(config, readFileSync(join(root, "wrangler.toml"), "utf8"));
  Object.assign(process.env, {
    CLOUDFLARE_API_TOKEN: cloudflare.token,
    CLOUDFLARE_ACCOUNT_ID: cloudflare.accountId,
    CLOUDFLARE_API_BASE_URL: cloudflare.url,
    STRIPE_SECRET_KEY: "sk_test_deploy_0123456789",
    STRIPE_WEBHOOK_SECRET: "whsec_deploy_0123456789",
  });
  delete process.env.ANTHROPIC_API_KEY;
  delete process.env.SIGNED_URL_SECRET;
  cloudflare.requests.length = 0;
  Object.assign(cloudflare.account, { databases: [], buckets: [], namespaces: [], queues: [], scripts: new Map() });
});
afterEach(() => {
  process.env = { ...saved };
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the command with a recorder for the programs it starts: wrangler's deploy "uploads" its secrets to the fake. */
async function deploy(args: string[], webhookProblems: string[] = []) {
  cloudflare.requests.length = 0;
  let stdout = "";
  let stderr = "";
  const ran: { args: string[]; secrets?: Record<string, string> }[] = [];
  const status = await deployCommand(
    ["--config", config, ...args],
    { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } },
    {
      generate: () => "generated-signing-key-0123456789abcdef",
      // Stripe's side is deployCheck.test.ts's, against the fake Stripe.
      webhookProblems: async () => webhookProblems,
      run: async (_command, commandArgs) => {
        const file = commandArgs[commandArgs.indexOf("--secrets-file") + 1];
        const secrets =
          commandArgs.includes("--secrets-file") && file ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, string>) : undefined;
        ran.push({ args: commandArgs, ...(secrets ? { secrets } : {}) });
        if (commandArgs[0] === "deploy") {
          const names = cloudflare.account.scripts.get("logo-lookup") ?? new Set<string>();
          for (const name of Object.keys(secrets ?? {})) names.add(name);
          cloudflare.account.scripts.set("logo-lookup", names);
        }
        return 0;
      },
    },
  );
  const changed = cloudflare.requests.filter((r) => r.method !== "GET");
  return { status, stdout, stderr, ran, changed };
}

describe("npm run deploy", () => {
  it("makes what is missing, writes its ids and the address, migrates and deploys with the secrets; a second run changes nothing", async () => {
    const first = await deploy(["--base-url", "https://logos.example.com"]);
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    expect(first.changed.map((r) => `${r.method} ${r.path.replace(`/client/v4/accounts/${cloudflare.accountId}`, "")}`)).toEqual([
      "POST /d1/database",
      "POST /r2/buckets",
      "POST /storage/kv/namespaces",
      "POST /queues",
    ]);
    const { databases, buckets, namespaces, queues } = cloudflare.account;
    expect([databases[0]?.name, buckets[0], namespaces[0]?.title, queues[0]?.queue_name]).toEqual([
      "logo-lookup",
      "logo-lookup-logos",
      "logo-lookup-OAUTH_KV",
      "logo-discovery",
    ]);
    const toml = readFileSync(config, "utf8");
    expect(toml).toContain(`database_id = "${databases[0]!.uuid}"`);
    expect(toml).toContain(`id = "${namespaces[0]!.id}"`);
    expect(toml).toContain('PUBLIC_BASE_URL = "https://logos.example.com"');
    // Comments and everything else stay as they were.
    expect(toml.split("\n").length).toBe(readFileSync(join(root, "wrangler.toml"), "utf8").split("\n").length);
    expect(first.ran.map((r) => r.args.slice(0, 2))).toEqual([
      ["d1", "migrations"],
      ["deploy", "--config"],
    ]);
    expect(first.ran[1]!.secrets).toEqual({
      STRIPE_SECRET_KEY: "sk_test_deploy_0123456789",
      STRIPE_WEBHOOK_SECRET: "whsec_deploy_0123456789",
      SIGNED_URL_SECRET: "generated-signing-key-0123456789abcdef",
    });
    // The secrets file is gone once wrangler has read it, and no secret was printed.
    const file = first.ran[1]!.args[first.ran[1]!.args.indexOf("--secrets-file") + 1]!;
    expect(existsSync(file)).toBe(false);
    expect(first.stdout).not.toMatch(/sk_test_deploy|whsec_deploy|generated-signing-key/);
    expect(first.stdout).toContain("secret     ANTHROPIC_API_KEY is missing (optional)");

    const second = await deploy([]);
    expect(second.status).toBe(0);
    expect(second.changed).toEqual([]);
    expect(readFileSync(config, "utf8")).toBe(toml);
    expect(second.ran.map((r) => r.args.slice(0, 2))).toEqual([
      ["d1", "migrations"],
      ["deploy", "--config"],
    ]);
    // Every secret is on the Worker already: none is uploaded again.
    expect(second.ran[1]!.args).not.toContain("--secrets-file");
    expect(second.stdout).toContain("found      database logo-lookup");
  });

  it("a dry run asks the API and writes nothing, saying what it would do", async () => {
    const before = readFileSync(config, "utf8");
    const dry = await deploy(["--dry-run", "--base-url", "https://logos.example.com"]);
    expect(dry.stderr).toBe("");
    expect(dry.status).toBe(0);
    expect(dry.changed).toEqual([]);
    expect(dry.ran).toEqual([]);
    expect(readFileSync(config, "utf8")).toBe(before);
    expect(dry.stdout).toContain("create     database logo-lookup");
    expect(dry.stdout).toContain("create     queue logo-discovery");
    expect(dry.stdout).toContain("set        PUBLIC_BASE_URL = https://logos.example.com");
    expect(dry.stdout).toContain("dry run: nothing was changed");
  });

  it("stops before migrating or deploying when a required secret is missing and no one can be asked, naming it", async () => {
    delete process.env.STRIPE_WEBHOOK_SECRET;
    const stopped = await deploy(["--base-url", "https://logos.example.com"]);
    expect(stopped.status).toBe(1);
    expect(stopped.stderr).toContain("secrets missing: STRIPE_WEBHOOK_SECRET");
    expect(stopped.ran).toEqual([]);
  });

  it("stops when the Stripe account's webhook endpoints would leave the service deaf, naming why", async () => {
    const stopped = await deploy(["--base-url", "https://logos.example.com"], ["[stripe] no enabled webhook endpoint sends events to …"]);
    expect(stopped.status).toBe(1);
    expect(stopped.stderr).toContain("deploy: [stripe] no enabled webhook endpoint");
    expect(stopped.ran).toEqual([]);
  });

  it("refuses an address that is not a public https origin, and an empty one left in wrangler.toml", async () => {
    await expect(deploy(["--base-url", "http://logos.example.com"])).rejects.toThrow("public https origin");
    const empty = await deploy([]);
    expect(empty.status).toBe(1);
    expect(empty.stderr).toContain("PUBLIC_BASE_URL is empty");
    expect(empty.ran).toEqual([]);
  });

  it("says what a token that the API refuses lacks, without the token", async () => {
    process.env.CLOUDFLARE_API_TOKEN = "cf-wrong-token";
    await expect(deploy(["--dry-run"])).rejects.toThrow(/Authentication error \(10000\)/);
  });
});
