import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encode } from "fast-png";
import { apiKeys } from "../../schema";
import { logosInIdOrder } from "../../src/catalogue/logos";
import { createAccount } from "../../src/accounts/accounts";
import { createKey } from "../../src/keys/apiKeys";
import { startFakeWebsites } from "../fakes/websites";
import { runAdmin } from "../../tools/admin/run";
import { domainName } from "../../src/catalogue/names";
import { freshState, inProcess, root, withPlatform } from "./helpers";

let state: { dir: string; cleanup: () => void };
let control: string;
beforeAll(async () => {
  state = freshState();
  const websites = await startFakeWebsites();
  control = websites.controlUrl;
  // The tool worker reads DISCOVERY_RESOLVE from the environment the admin command runs in.
  process.env.DISCOVERY_RESOLVE = websites.resolve;
});
afterAll(() => state.cleanup());

/**
 * The admin command as an operator runs it, but without blocking this process: the fake
 * websites it discovers from are served by this process's event loop.
 */
function adminProcess(...args: string[]): Promise<{ status: number | null; stderr: string; json: () => any }> {
  const child = spawn(join(root, "node_modules", ".bin", "tsx"), [join(root, "tools/admin.ts"), ...args, "--persist-to", state.dir], {
    cwd: root,
    env: { ...process.env, CI: "true", NO_COLOR: "1" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) => {
    child.on("close", (status) => resolve({ status, stderr, json: () => JSON.parse(stdout.trim().split("\n").at(-1)!) }));
  });
}
/** The same command in this process: the program itself runs once, for discover. */
const admin = (...args: string[]) => inProcess((io) => runAdmin([...args, "--persist-to", state.dir], io));

const png = (size: number) =>
  Buffer.from(encode({ width: size, height: size, data: new Uint8Array(size * size * 4).fill(200), channels: 4, depth: 8 })).toString(
    "base64",
  );

describe("npm run admin: discovery", () => {
  it("discover prints what it chose and why, logo forget removes it and its objects, key fallback sets a key's default", async () => {
    const { host } = (await (await fetch(`${control}/claim`, { method: "POST" })).json()) as { host: string };
    const routes = {
      "/": {
        type: "text/html",
        body: '<title>Ops Test</title><link rel="icon" sizes="16x16" href="/16.png"><link rel="apple-touch-icon" href="/180.png">',
      },
      "/16.png": { type: "image/png", base64: png(16) },
      "/180.png": { type: "image/png", base64: png(180) },
    };
    await fetch(`${control}/sites/${host}`, { method: "PUT", body: JSON.stringify({ routes }) });

    const discovered = await adminProcess("discover", `--domain=WWW.${host.toUpperCase()}`);
    expect(discovered.stderr).toBe("");
    expect(discovered.status).toBe(0);
    const report = discovered.json();
    expect(report).toMatchObject({
      domain: host,
      outcome: "found",
      // The title does not agree with the domain: the company is named after its domain.
      name: domainName(host),
      chosen: { url: `https://${host}/180.png`, width: 180, written: "created" },
    });
    expect(report.candidates).toEqual([
      expect.objectContaining({ url: `https://${host}/180.png`, from: "apple-touch-icon", width: 180, score: 180 }),
      expect.objectContaining({ url: `https://${host}/16.png`, from: "link icon", width: 16, score: expect.any(Number) }),
    ]);
    const [stored] = await withPlatform(state.dir, ({ db }) => logosInIdOrder(db));
    expect(stored).toMatchObject({ sourceSet: "discovered", sourceUrl: `https://${host}/180.png` });

    const forgotten = await admin("logo", "forget", "--domain", host);
    expect(forgotten.status).toBe(0);
    expect(forgotten.json()).toEqual({ domain: host, logos: 1, companyRemoved: true, missForgotten: false });
    await withPlatform(state.dir, async ({ db, bucket }) => {
      expect(await logosInIdOrder(db)).toEqual([]);
      expect(await bucket.head(stored!.masterKey)).toBeNull();
      expect(await bucket.head(stored!.originalKey)).toBeNull();
    });

    const key = await withPlatform(state.dir, async ({ db }) => {
      const account = await createAccount(db, { email: "fallback@example.com", password: "correct horse battery", plan: "free" });
      const created = await createKey(db, { accountId: account.ok ? account.value.id : "", type: "publishable" });
      return created.ok ? created.value : { id: "", key: "" };
    });
    expect((await admin("key", "fallback", "--key", key.key, "--fallback", "monogram")).json()).toMatchObject({
      id: key.id,
      fallback: "monogram",
    });
    expect((await admin("key", "fallback", "--key", key.key, "--fallback", "sometimes")).status).toBe(2);
    const [row] = await withPlatform(state.dir, ({ db }) => db.select().from(apiKeys).all());
    expect(row?.fallback).toBe("monogram");
  });
});
