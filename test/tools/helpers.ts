import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { encode } from "fast-png";
import { afterAll, beforeAll, inject } from "vitest";
import type { CommandIo, Input } from "../../tools/args";
import { openPlatform, type Platform } from "../../tools/platform";
import { templateState } from "../helpers/toolsState";

export const root = resolve(import.meta.dirname, "../..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);

export interface CommandResult {
  status: number | null;
  stdout: string;
  stderr: string;
  json: () => any;
}

const result = (status: number | null, stdout: string, stderr: string): CommandResult => ({
  status,
  stdout,
  stderr,
  json: () => JSON.parse(stdout.trim().split("\n").at(-1)!),
});

/**
 * Runs one of the project's tools the way an operator would, as a process, against a private
 * state directory. Asynchronously: a platform the test file keeps open needs this process's
 * event loop while the tool runs.
 */
export async function tool(
  script: "admin" | "import" | "seed" | "rerender",
  args: string[],
  state: string,
  input = "",
): Promise<CommandResult> {
  const [command, ...scriptArgs] = npmScript(script);
  const child = spawn(command, [...scriptArgs, ...args, "--persist-to", state], {
    cwd: root,
    env: { ...process.env, CI: "true", NO_COLOR: "1" },
    timeout: 120_000,
  });
  child.stdin.end(input);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
  child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return result(status, stdout, stderr);
}

/** What `npm run <script>` runs (package.json), its program resolved: the tools run with the very flags an operator's do. */
export function npmScript(script: string): [string, ...string[]] {
  const scripts = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  const [program, ...args] = scripts[script]!.split(" ");
  return [bin(program!), ...args];
}

/**
 * Runs a tool's command function in this process (what its program does, minus the process),
 * capturing its output. Its standard input is `stdin`: text piped in, or the lines a person
 * types at a terminal, one per prompt.
 */
export async function inProcess(
  command: (io: CommandIo) => Promise<number>,
  stdin: string | { typed: string[] } = "",
): Promise<CommandResult> {
  let stdout = "";
  let stderr = "";
  const typed = typeof stdin === "string" ? undefined : [...stdin.typed];
  const input: Input = {
    isTTY: typed !== undefined,
    readAll: async () => (typeof stdin === "string" ? stdin : ""),
    askHidden: async (prompt) => {
      stderr += `${prompt}\n`; // the line ends as the person presses Enter, echoing nothing else
      const line = typed?.shift();
      if (line === undefined) throw new Error(`asked "${prompt}" with nothing typed`);
      return line;
    },
  };
  const status = await command({
    stdout: { write: (text) => (stdout += text) },
    stderr: { write: (text) => (stderr += text) },
    stdin: input,
  });
  return result(status, stdout, stderr);
}

/**
 * `npm run admin` as an operator runs it, on the local state in `stateDir`, in a process of its
 * own: without blocking this one, whose event loop serves the fake sites a discovery fetches.
 * `json` reads its last line of output.
 */
export function spawnAdmin(
  stateDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ status: number | null; stderr: string; json: () => any }> {
  const child = spawn(join(root, "node_modules", ".bin", "tsx"), [join(root, "tools/admin.ts"), ...args, "--persist-to", stateDir], {
    cwd: root,
    env: { ...process.env, CI: "true", NO_COLOR: "1", ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) => {
    child.on("close", (status) => resolve({ status, stderr, json: () => JSON.parse(stdout.trim().split("\n").at(-1)!) }));
  });
}

/** A square PNG of one grey, `size` px a side, in base64: an icon a fake site serves. */
export const greyPngBase64 = (size: number) =>
  Buffer.from(encode({ width: size, height: size, data: new Uint8Array(size * size * 4).fill(200), channels: 4, depth: 8 })).toString(
    "base64",
  );

/**
 * A fresh local state with migrations applied by wrangler itself (a copy of the tools project's
 * template): what `npm start`'s own applying is checked against.
 */
export async function freshState(): Promise<{ dir: string; cleanup: () => void }> {
  const template = await templateState(inject("toolsStateTemplate"));
  const dir = mkdtempSync(join(tmpdir(), "logo-lookup-state-"));
  cpSync(template, dir, { recursive: true });
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A platform kept open for a whole test file; commands get it without closing it. */
export async function openSharedPlatform(state: string): Promise<Platform & { borrow: () => Promise<Platform> }> {
  const platform = await openPlatform({ persistTo: state });
  return { ...platform, borrow: async () => ({ ...platform, dispose: async () => undefined }) };
}

/**
 * A fresh state with a platform kept open on it for the whole test file, closed and removed
 * after the file: the setup of the files that need nothing more.
 */
export function platformForThisFile(): { readonly dir: string; readonly platform: Awaited<ReturnType<typeof openSharedPlatform>> } {
  let state: Awaited<ReturnType<typeof freshState>> | undefined;
  let platform: Awaited<ReturnType<typeof openSharedPlatform>> | undefined;
  beforeAll(async () => {
    state = await freshState();
    platform = await openSharedPlatform(state.dir);
  });
  afterAll(async () => {
    await platform?.dispose();
    state?.cleanup();
  });
  return {
    get dir() {
      if (!state) throw new Error("platformForThisFile: used outside the file's tests");
      return state.dir;
    },
    get platform() {
      if (!platform) throw new Error("platformForThisFile: used outside the file's tests");
      return platform;
    },
  };
}

/** A platform opened for one job and closed after it. */
export async function withPlatform<T>(state: string, job: (platform: Platform) => Promise<T>): Promise<T> {
  const platform = await openPlatform({ persistTo: state });
  try {
    return await job(platform);
  } finally {
    await platform.dispose();
  }
}

/** A manifest of `count` flat-colour PNG logos under `dir`, one company each (`name`, `domain` of its index). */
export async function flatPngManifest(
  dir: string,
  count: number,
  company: (i: number) => { name: string; domain: string },
  width = 64,
): Promise<string> {
  const { default: sharp } = await import("sharp");
  mkdirSync(join(dir, "img"), { recursive: true });
  const rows: string[] = [];
  for (let i = 0; i < count; i++) {
    const background = `#${(0x102030 + i * 0x030507).toString(16).slice(-6)}`;
    writeFileSync(
      join(dir, `img/${i}.png`),
      await sharp({ create: { width, height: width / 2, channels: 4, background } })
        .png()
        .toBuffer(),
    );
    const { name, domain } = company(i);
    rows.push(JSON.stringify({ name, domains: [domain], variant: "icon", image: `img/${i}.png` }));
  }
  const manifest = join(dir, "manifest.jsonl");
  writeFileSync(manifest, `${rows.join("\n")}\n`);
  return manifest;
}
