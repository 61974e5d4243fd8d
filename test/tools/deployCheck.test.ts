import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import Stripe from "stripe";
import { handledEvents } from "../../src/billing/events";
import { type DeploymentConfig, deploymentProblems } from "../../tools/deploy/checks";
import { webhookProblems } from "../../tools/deploy/stripeWebhook";
import { FAKE_STRIPE_SECRET_KEY, startFakeStripe } from "../fakes/stripeApi";
import { root } from "./helpers";

const shipped = () => unstable_readConfig({ config: join(root, "wrangler.toml") }) as unknown as DeploymentConfig;

describe("npm run deploy:check", () => {
  it("passes the shipped wrangler.toml, whose logs redact query strings (row 14)", () => {
    expect(shipped().observability?.redact_query_string).toBe(true);
    expect(deploymentProblems(shipped(), null)).toEqual([]);
  });

  /** The shipped configuration as a deployment fills it in (docs/deploying.md). */
  const deployed = (): DeploymentConfig => ({
    ...shipped(),
    vars: { ...shipped().vars, PUBLIC_BASE_URL: "https://logos.example.com" },
    d1_databases: shipped().d1_databases!.map((database) => ({ ...database, database_id: "6d1f5a36-9c7e-4c2b-9b0e-2f0c1f3a7e11" })),
    kv_namespaces: shipped().kv_namespaces!.map((namespace) => ({ ...namespace, id: "3b8e0f6c1d2a4e5f9a7b6c5d4e3f2a1b" })),
  });
  const allSecrets = ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "SIGNED_URL_SECRET"];

  it("with --remote, refuses the shipped placeholder ids, which wrangler deploy would send as they are", () => {
    expect(
      deploymentProblems({ ...deployed(), d1_databases: shipped().d1_databases, kv_namespaces: shipped().kv_namespaces }, allSecrets),
    ).toEqual([
      "[d1_databases] DB: database_id is the shipped placeholder (create the database and put its id in wrangler.toml; docs/deploying.md)",
      "[kv_namespaces] OAUTH_KV: id is the shipped placeholder (create the namespace and put its id in wrangler.toml; docs/deploying.md)",
    ]);
    expect(deploymentProblems(deployed(), allSecrets)).toEqual([]);
  });

  it("refuses a PUBLIC_BASE_URL that is no origin, and with --remote one that is not a public https address", () => {
    for (const url of ["https://logos.example.com/v1", "https://logos.example.com/?a=b", "https://logos.example.com#top"]) {
      expect(deploymentProblems({ ...deployed(), vars: { ...deployed().vars, PUBLIC_BASE_URL: url } }, null), url).toEqual([
        expect.stringMatching(/^\[vars\] PUBLIC_BASE_URL: must be an origin/),
      ]);
    }
    for (const url of [
      "http://logos.example.com",
      "https://localhost:8787",
      "https://LOCALHOST",
      "https://127.0.0.1",
      "https://10.0.0.5",
      "https://[::1]",
      "https://logos.internal",
    ]) {
      expect(deploymentProblems({ ...deployed(), vars: { ...deployed().vars, PUBLIC_BASE_URL: url } }, allSecrets), url).toEqual([
        expect.stringMatching(/^\[vars\] PUBLIC_BASE_URL must be the Worker's public https address/),
      ]);
    }
    // A trailing slash is the origin itself; a public name that merely starts like a local one is public.
    for (const url of [
      "https://logos.example.com/",
      "https://localhost.acme-corp.com",
      "https://127.logos.example.com",
      "https://logos.example.com:8443",
    ]) {
      expect(deploymentProblems({ ...deployed(), vars: { ...deployed().vars, PUBLIC_BASE_URL: url } }, allSecrets), url).toEqual([]);
    }
  });

  it("with --remote, refuses the local addresses the tests' stand-ins use for Stripe, the file API and the CDN", () => {
    const local = {
      STRIPE_API_BASE: "http://localhost:12111",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:8788",
      CDN_URL: "http://localhost:8787",
    };
    expect(deploymentProblems({ ...deployed(), vars: { ...deployed().vars, ...local } }, allSecrets)).toEqual([
      "[vars] STRIPE_API_BASE must be a public https address in a deployment (the Worker would call it in production), or left out for the default",
      "[vars] ANTHROPIC_BASE_URL must be a public https address in a deployment (the Worker would call it in production), or left out for the default",
      "[vars] CDN_URL must be a public https address in a deployment (lookups would redirect browsers to it), or left out for the default",
    ]);
    // Without --remote (CI, a local server) they are what the tests run with.
    expect(deploymentProblems({ ...deployed(), vars: { ...deployed().vars, ...local } }, null)).toEqual([]);
    expect(deploymentProblems({ ...deployed(), vars: { ...deployed().vars, CDN_URL: "https://cdn.example.com" } }, allSecrets)).toEqual([]);
  });

  it("refuses an argument it does not take: `remote` for --remote would check less than asked", () => {
    const run = spawnSync(join(root, "node_modules", ".bin", "tsx"), ["tools/deployCheck.ts", "remote"], { cwd: root, encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('deploy:check: unexpected argument "remote"');
  });

  it("row 11: names every missing production secret, and what fails without it", () => {
    expect(deploymentProblems(deployed(), ["ANTHROPIC_API_KEY", "SIGNED_URL_SECRET"])).toEqual([
      "secret STRIPE_SECRET_KEY is not set (wrangler secret put STRIPE_SECRET_KEY): checkout and the token exchange fail",
      "secret STRIPE_WEBHOOK_SECRET is not set (wrangler secret put STRIPE_WEBHOOK_SECRET): Stripe's webhooks are refused, so plans never change",
    ]);
    expect(deploymentProblems(deployed(), ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "SIGNED_URL_SECRET"])).toEqual([]);
  });

  it("with --remote, an empty PUBLIC_BASE_URL is a problem saying what to set; without it (CI, a fresh clone) it is not", () => {
    expect(deploymentProblems({ ...deployed(), vars: shipped().vars }, allSecrets)).toEqual([
      "[vars] PUBLIC_BASE_URL is empty (set it in wrangler.toml to the Worker's public address, e.g. https://logos.example.com): the Worker would name its URLs after each request's Host and never report a missing secret",
    ]);
    expect(deploymentProblems(shipped(), null)).toEqual([]);
  });

  it("refuses logs or traces that keep query strings, whichever setting turns them on, and vars that do not validate", () => {
    const config = shipped();
    const keepsQueries = "[observability] redact_query_string must be true: request URLs in logs and traces would keep their query strings";
    expect(
      deploymentProblems(
        { vars: { ...config.vars, LOOKUP_RESPONSE: "sometimes", CDN_URL: "ftp://cdn" }, observability: { enabled: true } },
        null,
      ),
    ).toEqual([expect.stringMatching(/^\[vars\] CDN_URL: /), expect.stringMatching(/^\[vars\] LOOKUP_RESPONSE: /), keepsQueries]);
    for (const observability of [{ logs: { enabled: true } }, { enabled: false, logs: { enabled: true } }, { traces: { enabled: true } }]) {
      expect(deploymentProblems({ vars: config.vars, observability }, null)).toEqual([keepsQueries]);
    }
    expect(deploymentProblems({ vars: config.vars, observability: { logs: { enabled: true }, redact_query_string: true } }, null)).toEqual(
      [],
    );
  });
});

describe("npm run deploy:check --remote, with the deployment's STRIPE_SECRET_KEY in the environment", () => {
  const base = "https://logos.example.com";
  const stripeAt = async () => {
    const fake = await startFakeStripe();
    const api = new URL(fake.url);
    const stripe = new Stripe(FAKE_STRIPE_SECRET_KEY, { host: api.hostname, port: api.port, protocol: "http" });
    return { fake, stripe };
  };

  it("names a missing webhook endpoint, a disabled one, and events it is not sent; passes one sent them all", async () => {
    const { fake, stripe } = await stripeAt();
    try {
      // Another service's endpoint on the same account is not this deployment's.
      await stripe.webhookEndpoints.create({ url: "https://elsewhere.example.com/hooks", enabled_events: ["*"] });
      expect(await webhookProblems(stripe, base)).toEqual([
        expect.stringMatching(
          /^\[stripe\] no enabled webhook endpoint sends events to https:\/\/logos\.example\.com\/apiaas\/billing\/webhook: .*checkout\.session\.completed, checkout\.session\.expired, customer\.subscription\.created/,
        ),
      ]);

      const ours = await stripe.webhookEndpoints.create({
        url: `${base}/apiaas/billing/webhook`,
        enabled_events: ["checkout.session.completed", "customer.subscription.updated"],
      });
      expect(await webhookProblems(stripe, base)).toEqual([
        "[stripe] the webhook endpoint for https://logos.example.com/apiaas/billing/webhook is not sent checkout.session.expired, customer.subscription.created, customer.subscription.deleted: add them to its events (the service handles checkout.session.completed, checkout.session.expired, customer.subscription.created, customer.subscription.updated, customer.subscription.deleted)",
      ]);

      await stripe.webhookEndpoints.update(ours.id, { enabled_events: [...handledEvents] });
      expect(await webhookProblems(stripe, `${base}/`)).toEqual([]);

      await stripe.webhookEndpoints.update(ours.id, { disabled: true });
      expect(await webhookProblems(stripe, base)).toEqual([expect.stringContaining("(one there is disabled)")]);

      // The gateway path, sent every event, found past the first page of endpoints.
      for (let i = 0; i < 120; i++)
        await stripe.webhookEndpoints.create({ url: `https://other-${i}.example.com/hooks`, enabled_events: ["*"] });
      const gateway = await stripe.webhookEndpoints.create({ url: `${base}/api/billing/webhook`, enabled_events: ["*"] });
      for (let i = 0; i < 3; i++)
        await stripe.webhookEndpoints.create({ url: `https://later-${i}.example.com/hooks`, enabled_events: ["*"] });
      expect(gateway.status).toBe("enabled");
      expect(await webhookProblems(stripe, base)).toEqual([]);
    } finally {
      fake.server.close();
    }
  });

  it("says so when the key cannot read them, never quoting it", async () => {
    const { fake } = await stripeAt();
    try {
      const api = new URL(fake.url);
      const wrong = new Stripe("sk_test_not_the_key", { host: api.hostname, port: api.port, protocol: "http" });
      const problems = await webhookProblems(wrong, base);
      expect(problems).toEqual([
        expect.stringMatching(/^\[stripe\] the webhook endpoints could not be read with STRIPE_SECRET_KEY: Invalid API Key provided/),
      ]);
      expect(problems.join()).not.toContain("sk_test_not_the_key");
    } finally {
      fake.server.close();
    }
  });
});
