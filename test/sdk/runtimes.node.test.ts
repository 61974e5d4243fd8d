import { spawn, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root } from "../tools/helpers";

/**
 * The SDK as built (packages/sdk/dist) in every runtime its README names: Node (the machine's
 * own), Deno and Bun (both from devDependencies), each fetching a logo from a stand-in of the
 * service on loopback with nothing but its own fetch. Workers are test/sdk/sdk.test.ts's.
 */
const KEY = `sk_${"b".repeat(32)}`;
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
let server: Server;
let base = "";
const seen: { runtime: string | undefined; authorization: string | undefined }[] = [];

beforeAll(async () => {
  const build = spawnSync("npm", ["run", "build:sdk"], { cwd: root, encoding: "utf8" });
  expect(build.status, build.stderr).toBe(0);
  server = createServer((request, response) => {
    seen.push({ runtime: request.headers["x-runtime"] as string | undefined, authorization: request.headers.authorization });
    if (request.url?.startsWith("/stripe.com?")) {
      response.writeHead(200, {
        "Content-Type": "image/png",
        "X-Logo-Id": "7",
        "X-Company-Id": "3",
        "X-Company-Name": encodeURIComponent("Stripe"),
        "X-Logo-Domain": "stripe.com",
        "X-Logo-Width": "64",
        "X-Logo-Height": "64",
        "X-Logo-Source": "catalogue",
      });
      response.end(PNG);
    } else {
      response.writeHead(404, { "Content-Type": "text/plain" }).end("Logo not found");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(() => new Promise((resolve) => server.close(resolve)));

const program = (runtime: string) => `
import { LogoLookup, NotFoundError } from ${JSON.stringify(join(root, "packages/sdk/dist/index.js"))};
const sdk = new LogoLookup({
  secretKey: ${JSON.stringify(KEY)},
  baseUrl: ${JSON.stringify(base)},
  maxRetries: 0,
  fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, "X-Runtime": ${JSON.stringify(runtime)} } }),
});
const logo = await sdk.get("stripe.com", { size: 64 });
let missing = null;
try { await sdk.get("nothing.example"); } catch (error) { missing = error instanceof NotFoundError ? error.message : String(error); }
console.log(JSON.stringify({ name: logo.companyName, width: logo.width, bytes: logo.bytes.length, format: logo.format, missing }));
`;

const bin = (name: string) => join(root, "node_modules", ".bin", name);
const machineNode = process.env
  .PATH!.split(":")
  .filter((p) => !p.includes("node_modules"))
  .join(":");

/** A program run to its end, asynchronously: the stand-in answers it from this process meanwhile. */
function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, timeout: 60_000 });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

const runtimes: Record<string, (source: string) => ReturnType<typeof run>> = {
  node: (source) => run("node", ["--input-type=module", "-e", source], { ...process.env, PATH: machineNode }),
  deno: (source) =>
    run(bin("deno"), ["eval", "--quiet", "--allow-net=127.0.0.1", "--allow-read", "--allow-env", source], {
      ...process.env,
      DENO_NO_UPDATE_CHECK: "1",
      NO_COLOR: "1",
    }),
  bun: (source) => run(bin("bun"), ["--eval", source]),
};

describe("the SDK in every runtime it names", () => {
  it.each(Object.keys(runtimes))(
    "%s: gets a logo and its metadata, and a miss as NotFoundError, with the key in the header",
    async (runtime) => {
      const ran = await runtimes[runtime]!(program(runtime));
      expect(ran.status, ran.stderr).toBe(0);
      expect(JSON.parse(ran.stdout.trim().split("\n").at(-1)!)).toEqual({
        name: "Stripe",
        width: 64,
        bytes: PNG.length,
        format: "png",
        missing: "Logo not found",
      });
      const asked = seen.filter((request) => request.runtime === runtime);
      expect(asked).toHaveLength(2);
      expect(asked.every((request) => request.authorization === `Bearer ${KEY}`)).toBe(true);
    },
  );
});
