import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { root } from "../cli/helpers";

/**
 * The SDK as a Node program gets it: the built package subpath `logo-lookup/sdk`, run by the
 * machine's own Node (not the project's Node 22), with nothing but the standard library.
 */
const program = `
import { LogoLookup, ConfigurationError, NetworkError } from "logo-lookup/sdk";
const out = {};
try { new LogoLookup({ baseUrl: "http://127.0.0.1:9" }); } catch (e) { out.noKey = e instanceof ConfigurationError; }
process.env.LOGO_LOOKUP_SECRET_KEY = "sk_fromEnvironment00000000000000000";
process.env.LOGO_LOOKUP_BASE_URL = "http://127.0.0.1:9";
const sdk = new LogoLookup({ maxRetries: 1, sleep: async () => {} });
const retries = [];
sdk.on("retry", (e) => retries.push(e.attempt));
try { await sdk.get("example.com"); } catch (e) { out.unreachable = e instanceof NetworkError; out.message = e.message; }
out.retries = retries;
console.log(JSON.stringify(out));
`;

describe("the SDK package in Node", () => {
  it("builds, imports by its subpath, reads the key from the environment and reports typed errors", () => {
    const build = spawnSync("npm", ["run", "build:sdk"], { cwd: root, encoding: "utf8" });
    expect(build.status, build.stderr).toBe(0);
    const run = spawnSync("/usr/bin/env", ["node", "--input-type=module", "-e", program], { cwd: root, encoding: "utf8", env: { ...process.env, PATH: process.env.PATH!.split(":").filter((p) => !p.includes("node_modules")).join(":") } });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ noKey: true, unreachable: true, message: "Request failed: could not reach http://127.0.0.1:9", retries: [1] });
  });
});
