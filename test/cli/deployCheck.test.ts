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

  it("row 11: names every missing production secret, and what fails without it", () => {
    expect(deploymentProblems(shipped(), ["ANTHROPIC_API_KEY", "SIGNED_URL_SECRET"])).toEqual([
      "secret STRIPE_SECRET_KEY is not set (wrangler secret put STRIPE_SECRET_KEY): checkout and the token exchange fail",
      "secret STRIPE_WEBHOOK_SECRET is not set (wrangler secret put STRIPE_WEBHOOK_SECRET): Stripe's webhooks are refused, so plans never change",
    ]);
    expect(deploymentProblems(shipped(), ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "SIGNED_URL_SECRET"])).toEqual([]);
  });

  it("refuses logs that keep query strings and vars that do not validate", () => {
    const config = shipped();
    expect(
      deploymentProblems({ vars: { ...config.vars, LOOKUP_RESPONSE: "sometimes", CDN_URL: "ftp://cdn" }, observability: { enabled: true } }, null),
    ).toEqual([
      expect.stringMatching(/^\[vars\] CDN_URL: /),
      expect.stringMatching(/^\[vars\] LOOKUP_RESPONSE: /),
      "[observability] redact_query_string must be true: request URLs in logs would keep their query strings",
    ]);
  });
});
