import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { type DeploymentConfig, deploymentProblems } from "../../src/cli/deploy/checks";
import { root } from "./helpers";

const shipped = () => unstable_readConfig({ config: join(root, "wrangler.toml") }) as unknown as DeploymentConfig;

describe("npm run deploy:check", () => {
  it("passes the shipped wrangler.toml, whose logs redact query strings (row 14)", () => {
    expect(shipped().observability?.redact_query_string).toBe(true);
    expect(deploymentProblems(shipped(), null)).toEqual([]);
  });

  /** The shipped configuration as a deployment fills it in (README, Deploying). */
  const deployed = (): DeploymentConfig => ({ ...shipped(), vars: { ...shipped().vars, PUBLIC_BASE_URL: "https://logos.example.com" } });

  it("row 11: names every missing production secret, and what fails without it", () => {
    expect(deploymentProblems(deployed(), ["ANTHROPIC_API_KEY", "SIGNED_URL_SECRET"])).toEqual([
      "secret STRIPE_SECRET_KEY is not set (wrangler secret put STRIPE_SECRET_KEY): checkout and the token exchange fail",
      "secret STRIPE_WEBHOOK_SECRET is not set (wrangler secret put STRIPE_WEBHOOK_SECRET): Stripe's webhooks are refused, so plans never change",
    ]);
    expect(deploymentProblems(deployed(), ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "SIGNED_URL_SECRET"])).toEqual([]);
  });

  it("with --remote, an empty PUBLIC_BASE_URL is a problem saying what to set; without it (CI, a fresh clone) it is not", () => {
    const allSecrets = ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "SIGNED_URL_SECRET"];
    expect(deploymentProblems(shipped(), allSecrets)).toEqual([
      "[vars] PUBLIC_BASE_URL is empty (set it in wrangler.toml to the Worker's public address, e.g. https://logos.example.com): the Worker would name its URLs after each request's Host and never report a missing secret",
    ]);
    expect(deploymentProblems(shipped(), null)).toEqual([]);
  });

  it("refuses logs or traces that keep query strings, whichever setting turns them on, and vars that do not validate", () => {
    const config = shipped();
    const keepsQueries = "[observability] redact_query_string must be true: request URLs in logs and traces would keep their query strings";
    expect(
      deploymentProblems({ vars: { ...config.vars, LOOKUP_RESPONSE: "sometimes", CDN_URL: "ftp://cdn" }, observability: { enabled: true } }, null),
    ).toEqual([expect.stringMatching(/^\[vars\] CDN_URL: /), expect.stringMatching(/^\[vars\] LOOKUP_RESPONSE: /), keepsQueries]);
    for (const observability of [{ logs: { enabled: true } }, { enabled: false, logs: { enabled: true } }, { traces: { enabled: true } }]) {
      expect(deploymentProblems({ vars: config.vars, observability }, null)).toEqual([keepsQueries]);
    }
    expect(deploymentProblems({ vars: config.vars, observability: { logs: { enabled: true }, redact_query_string: true } }, null)).toEqual([]);
  });
});
