import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configurableNames, localAddresses, localSigningSecret, writeOverrides } from "../../src/cli/start/overrides";
import { onLineStarting } from "../../src/cli/start/seeding";
import { EXAMPLE_SEEDED } from "../../src/cli/seed/seed";
import { root } from "./helpers";

describe("npm start configuration overrides", () => {
  it("covers every var of wrangler.toml and every secret of .dev.vars.example", () => {
    expect(configurableNames(root)).toEqual(
      expect.arrayContaining(["PUBLIC_BASE_URL", "CDN_URL", "LOOKUP_RESPONSE", "STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "SIGNED_URL_SECRET"]),
    );
  });

  it("passes environment values of those names to wrangler dev in an owner-only file", () => {
    const file = join(mkdtempSync(join(tmpdir(), "overrides-")), "start.env");
    const written = writeOverrides(root, { CDN_URL: "https://cdn.example.com", STRIPE_SECRET_KEY: 'sk_test_"quoted"', UNRELATED: "x" }, file);
    expect(written).toBe(file);
    expect(readFileSync(file, "utf8")).toBe('CDN_URL="https://cdn.example.com"\nSTRIPE_SECRET_KEY="sk_test_\\"quoted\\""\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("writes nothing when nothing is overridden", () => {
    expect(writeOverrides(root, { HOME: "/root" }, join(tmpdir(), "never-written.env"))).toBeUndefined();
  });

  it("gives a local server a signing secret of its own, the same at every start, unless one is configured", () => {
    const project = mkdtempSync(join(tmpdir(), "project-"));
    const devVars = join(project, ".dev.vars");
    const first = localSigningSecret(devVars, {});
    expect(first.SIGNED_URL_SECRET).toMatch(/^[\w-]{43}$/);
    expect(localSigningSecret(devVars, {})).toEqual(first);
    expect(statSync(join(project, ".wrangler", "state", "signed-url-secret")).mode & 0o777).toBe(0o600);

    expect(localSigningSecret(devVars, { SIGNED_URL_SECRET: "from-the-environment" })).toEqual({});
    writeFileSync(devVars, "SIGNED_URL_SECRET=from-dev-vars\n");
    expect(localSigningSecret(devVars, {})).toEqual({});
  });

  it("serves locally under the local address, not the deployment's in wrangler.toml, unless told otherwise", () => {
    const devVars = join(mkdtempSync(join(tmpdir(), "project-")), ".dev.vars");
    expect(localAddresses(devVars, {})).toEqual({ PUBLIC_BASE_URL: "", CDN_URL: "" });
    expect(localAddresses(devVars, { CDN_URL: "https://cdn.example.com" })).toEqual({ PUBLIC_BASE_URL: "" });
    writeFileSync(devVars, "PUBLIC_BASE_URL=https://tunnel.example.com\n");
    expect(localAddresses(devVars, {})).toEqual({ CDN_URL: "" });
  });
});

describe("npm start beside its seeding", () => {
  it("offers the example once, when seeding's line saying it is in has arrived whole, however the output is cut", () => {
    let offered = 0;
    const feed = onLineStarting(EXAMPLE_SEEDED, () => offered++);
    feed("seeding: 0/5,817 rows in 5 s (0/s)\nseeding: github.com and the best");
    expect(offered).toBe(0);
    feed("-known companies are in; the rest follow");
    expect(offered).toBe(0);
    feed("\nseeding: 100/5,817 rows in 10 s (10/s, 571 s left)\n");
    expect(offered).toBe(1);
    feed(`${EXAMPLE_SEEDED}; the rest follow\n`);
    expect(offered).toBe(1);
  });

  it("does not take a progress line for the cue", () => {
    let offered = 0;
    const feed = onLineStarting(EXAMPLE_SEEDED, () => offered++);
    feed("seeding: 1,200/5,817 rows in 110 s (11/s, 420 s left)\nSeeded 5020 companies and 5817 logos in 530s.\n");
    expect(offered).toBe(0);
  });
});
