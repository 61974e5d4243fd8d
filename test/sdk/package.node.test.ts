import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root } from "../tools/helpers";

/**
 * The SDK as a customer gets it: `npm pack` of packages/sdk (which builds it), installed into an
 * empty directory with nothing else, then used from plain Node ESM and from TypeScript. Run by
 * the machine's own Node, not the project's Node 22, so that `engines` (Node 20) holds.
 */
const sdkDir = join(root, "packages", "sdk");
const machinePath = process.env
  .PATH!.split(":")
  .filter((p) => !p.includes("node_modules"))
  .join(":");
let customer: string;

beforeAll(() => {
  customer = mkdtempSync(join(tmpdir(), "sdk-customer-"));
  const pack = spawnSync("npm", ["pack", "--pack-destination", customer, "--json"], { cwd: sdkDir, encoding: "utf8" });
  expect(pack.status, pack.stderr).toBe(0);
  const [{ filename, files }] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
  // What ships: the build, its declarations, the README and the licence; never the sources' tests or configs.
  expect(files.map((f) => f.path).sort()).toEqual(
    expect.arrayContaining([
      "LICENSE",
      "README.md",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/react.js",
      "dist/react.d.ts",
      "package.json",
    ]),
  );
  expect(files.some((f) => f.path.startsWith("src/") || f.path === "tsconfig.json")).toBe(false);
  writeFileSync(join(customer, "package.json"), JSON.stringify({ name: "customer", private: true, type: "module" }));
  const install = spawnSync("npm", ["install", "--offline", "--no-audit", "--no-fund", join(customer, filename)], {
    cwd: customer,
    encoding: "utf8",
    env: { ...process.env, PATH: machinePath },
  });
  expect(install.status, install.stderr).toBe(0);
  // Nothing but the SDK itself: it has no dependencies.
  expect(readdirSync(join(customer, "node_modules")).filter((name) => !name.startsWith("."))).toEqual(["@logo-lookup"]);
}, 120_000);

afterAll(() => rmSync(customer, { recursive: true, force: true }));

const program = `
import { LogoLookup, ConfigurationError, NetworkError } from "@logo-lookup/sdk";
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

describe("the SDK package, installed from its tarball", () => {
  it("imports from plain Node ESM, reads the key from the environment and reports typed errors", () => {
    const run = spawnSync("node", ["--input-type=module", "-e", program], {
      cwd: customer,
      encoding: "utf8",
      env: { ...process.env, PATH: machinePath },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      noKey: true,
      unreachable: true,
      message: "Request failed: could not reach http://127.0.0.1:9",
      retries: [1],
    });
  });

  it("type-checks a TypeScript program against its declarations, and refuses a wrong option", () => {
    writeFileSync(
      join(customer, "good.ts"),
      `import { LogoLookup, type Logo, NotFoundError } from "@logo-lookup/sdk";
const sdk = new LogoLookup({ secretKey: "sk_" + "a".repeat(32), baseUrl: "https://logos.example.com" });
export async function width(domain: string): Promise<number | null> {
  try {
    const logo: Logo = await sdk.get(domain, { size: 256, theme: "dark", format: "webp" });
    return logo.width;
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}
`,
    );
    writeFileSync(
      join(customer, "bad.ts"),
      `import { LogoLookup } from "@logo-lookup/sdk";\nnew LogoLookup().get("stripe.com", { theme: "sepia" });\n`,
    );
    // A customer's strict project on Node's own module resolution, with no ambient types.
    const project = (file: string) => {
      const compilerOptions = {
        strict: true,
        noEmit: true,
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        lib: ["es2022", "dom"],
        types: [],
      };
      writeFileSync(join(customer, "tsconfig.json"), JSON.stringify({ compilerOptions, files: [file] }));
      return spawnSync(join(root, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json"], { cwd: customer, encoding: "utf8" });
    };
    const good = project("good.ts");
    expect(good.status, good.stdout).toBe(0);
    const bad = project("bad.ts");
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toContain(`'"sepia"' is not assignable`);
  });
});
