import { copyFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { getPlatformProxy } from "wrangler";
import { configurableNames, localAddresses, localSigningSecret, publicAddressSet, writeOverrides } from "../../tools/start/overrides";
import { beginSeeding, mustSeed, onLineStarting, recordSeeding } from "../../tools/start/seeding";
import { EXAMPLE_SEEDED } from "../../tools/seed/seed";
import { root } from "./helpers";

describe("npm start configuration overrides", () => {
  it("covers every var of wrangler.toml and every secret of .dev.vars.example", () => {
    expect(configurableNames(root)).toEqual(
      expect.arrayContaining([
        "PUBLIC_BASE_URL",
        "CDN_URL",
        "LOOKUP_RESPONSE",
        "STRIPE_SECRET_KEY",
        "STRIPE_WEBHOOK_SECRET",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
        "SIGNED_URL_SECRET",
      ]),
    );
  });

  /** A project of the same configuration as this one, with a .dev.vars of its own. */
  const project = (devVars?: string) => {
    const dir = mkdtempSync(join(tmpdir(), "project-"));
    for (const name of ["wrangler.toml", ".dev.vars.example"]) copyFileSync(join(root, name), join(dir, name));
    if (devVars !== undefined) writeFileSync(join(dir, ".dev.vars"), devVars);
    return dir;
  };
  /** What a Worker given the file as wrangler's --env-file sees: wrangler's own reading of it. */
  const seenByWrangler = async (file: string, names: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), "reader-"));
    writeFileSync(join(dir, "wrangler.json"), JSON.stringify({ name: "reader", compatibility_date: "2025-01-01" }));
    const proxy = await getPlatformProxy<Record<string, string>>({
      configPath: join(dir, "wrangler.json"),
      envFiles: [file],
      persist: false,
    });
    try {
      return Object.fromEntries(names.map((name) => [name, proxy.env[name]]));
    } finally {
      await proxy.dispose();
    }
  };

  it("passes .dev.vars and the environment's values of those names to wrangler dev in an owner-only file, word for word", async () => {
    const dir = project("CDN_URL=https://cdn$HOST.example.com\nMY_OWN_SECRET='kept # as is'\nSTRIPE_SECRET_KEY=sk_test_from_dev_vars\n");
    const file = join(dir, "start.env");
    const environment = {
      STRIPE_SECRET_KEY: 'sk_test_"quoted"',
      SIGNED_URL_SECRET: "abc$HOMEdef${PATH}\\$x",
      STRIPE_WEBHOOK_SECRET: "whsec_a\\b\\n`",
      ANTHROPIC_API_KEY: "it's `all` here",
      ANTHROPIC_BASE_URL: "it's\\nhere",
      UNRELATED: "x",
    };
    expect(writeOverrides(dir, environment, file)).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).not.toContain("UNRELATED");
    expect(
      await seenByWrangler(file, [
        "CDN_URL",
        "MY_OWN_SECRET",
        "STRIPE_SECRET_KEY",
        "SIGNED_URL_SECRET",
        "STRIPE_WEBHOOK_SECRET",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
      ]),
    ).toEqual({
      // .dev.vars as wrangler reads it on its own, not expanded; the environment wins over it.
      CDN_URL: "https://cdn$HOST.example.com",
      MY_OWN_SECRET: "kept # as is",
      STRIPE_SECRET_KEY: 'sk_test_"quoted"',
      SIGNED_URL_SECRET: "abc$HOMEdef${PATH}\\$x",
      STRIPE_WEBHOOK_SECRET: "whsec_a\\b\\n`",
      ANTHROPIC_API_KEY: "it's `all` here",
      ANTHROPIC_BASE_URL: "it's\\nhere",
    });
  });

  it("refuses a value no env file can carry, and writes nothing when there is nothing to pass", () => {
    expect(() => writeOverrides(project(), { STRIPE_SECRET_KEY: `'"\`` }, join(tmpdir(), "never-written.env"))).toThrow(
      /STRIPE_SECRET_KEY holds quotes of every kind/,
    );
    expect(writeOverrides(project(), { HOME: "/root" }, join(tmpdir(), "never-written.env"))).toBeUndefined();
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
    // Set as wrangler reads the file, spaced or exported: not covered by a generated one.
    for (const line of ["SIGNED_URL_SECRET = spaced", "export SIGNED_URL_SECRET=exported"]) {
      writeFileSync(devVars, `${line}\n`);
      expect(localSigningSecret(devVars, {}), line).toEqual({});
    }
  });

  it("serves locally under the local address, not the deployment's in wrangler.toml, unless told otherwise", () => {
    const devVars = join(mkdtempSync(join(tmpdir(), "project-")), ".dev.vars");
    expect(localAddresses(devVars, {})).toEqual({ PUBLIC_BASE_URL: "", CDN_URL: "" });
    expect(localAddresses(devVars, { CDN_URL: "https://cdn.example.com" })).toEqual({ PUBLIC_BASE_URL: "" });
    writeFileSync(devVars, "PUBLIC_BASE_URL=https://tunnel.example.com\n");
    expect(localAddresses(devVars, {})).toEqual({ CDN_URL: "" });
  });

  it("knows when the server has a public address of its own, from the environment or .dev.vars", () => {
    const devVars = join(mkdtempSync(join(tmpdir(), "project-")), ".dev.vars");
    expect(publicAddressSet(devVars, {})).toBe(false);
    expect(publicAddressSet(devVars, { PUBLIC_BASE_URL: "" })).toBe(false);
    expect(publicAddressSet(devVars, { PUBLIC_BASE_URL: "https://tunnel.example.com" })).toBe(true);
    writeFileSync(devVars, "PUBLIC_BASE_URL='https://tunnel.example.com'\n");
    expect(publicAddressSet(devVars, {})).toBe(true);
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

describe("the first start's seeding, as the next start finds it", () => {
  const summary = (failed: number) => `${JSON.stringify({ companies: 5017, logos: 5813, failed, seconds: 459 })}\n`;

  it("is done once it finished, and again once the catalogue has no logo", () => {
    const mark = join(mkdtempSync(join(tmpdir(), "state-")), "seeded");
    expect(mustSeed(mark, false)).toBe(true);
    expect(recordSeeding(mark, 0, summary(0))).toBe("Seeded 5017 companies and 5813 logos in 459s.");
    expect(mustSeed(mark, true)).toBe(false);
    // Its database deleted since, the mark left behind: seeded again, and resumed if that is interrupted.
    expect(mustSeed(mark, false)).toBe(true);
    beginSeeding(mark, false);
    recordSeeding(mark, null, "");
    expect(mustSeed(mark, true)).toBe(true);
  });

  it("resumes one that stopped, and tries rows it skipped once more before it lets them be", () => {
    const mark = join(mkdtempSync(join(tmpdir(), "state-")), "seeded");
    expect(recordSeeding(mark, 1, "")).toBe("Seeding stopped (exit code 1); the next npm start resumes it.");
    expect(recordSeeding(mark, null, "")).toBe("Seeding stopped; the next npm start resumes it.");
    expect(mustSeed(mark, true)).toBe(true);
    expect(recordSeeding(mark, 2, summary(3))).toBe(
      "Seeded 5017 companies and 5810 logos in 459s (3 rows skipped). The next npm start tries the skipped rows once more.",
    );
    expect(mustSeed(mark, true)).toBe(true);
    expect(recordSeeding(mark, 2, summary(1))).toMatch(
      /\(1 rows skipped\)\. They were skipped twice and stay out \(npm run seed tries them again\)\.$/,
    );
    expect(mustSeed(mark, true)).toBe(false);
  });
});
