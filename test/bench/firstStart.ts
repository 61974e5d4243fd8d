/**
 * npm run bench:start -- [DIR]: how long the first `npm start` of a fresh clone takes to answer.
 *
 *   git clone . /tmp/fresh && (cd /tmp/fresh && npm install) && npm run bench:start -- /tmp/fresh
 *
 * Starts `npm start` in DIR (default: this project; its local state must be empty for a first
 * start) and polls, every 250 ms, http://localhost:$PORT/health and, once the start offers it
 * (on a first start, when the example's batch is in), the example lookup with the key it prints.
 * Prints, in seconds from the start: the first 200 of each, when the lookup was offered, when
 * seeding reported itself finished, and the lines of progress seen; then stops the server.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { projectRoot } from "../../tools/platform";

const dir = resolve(process.argv[2] ?? projectRoot);
const port = process.env.PORT ?? "8787";
const domain = process.env.BENCH_START_DOMAIN ?? "github.com";
const limitSeconds = Number(process.env.BENCH_START_LIMIT ?? 600);
const base = `http://localhost:${port}`;

const started = Date.now();
const elapsed = () => Math.round((Date.now() - started) / 100) / 10;
const child = spawn("npm", ["start"], { cwd: dir, detached: true, env: { ...process.env, PORT: port }, stdio: ["ignore", "pipe", "pipe"] });

const times: Record<string, number> = {};
const progressLines: Array<[number, string]> = [];
let key: string | undefined;
let output = "";
const onOutput = (chunk: Buffer) => {
  const text = chunk.toString();
  output += text;
  for (const line of text.split("\n")) {
    // The lookup is tried as a user would: once npm start offers it (on a first start, when its batch is in).
    const offered = /Try\s+\S*\?token=(pk_\w+)/.exec(line)?.[1];
    if (offered && key === undefined) {
      key = offered;
      times.offered = elapsed();
    }
    if (/^Seeded /.test(line)) times.seeded ??= elapsed();
    if (/seeding|importing|Seeding/i.test(line)) progressLines.push([elapsed(), line.trim()]);
  }
};
child.stdout.on("data", onOutput);
child.stderr.on("data", onOutput);
let exited = false;
child.on("exit", () => (exited = true));

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status === 200 || response.status === 302;
  } catch {
    return false;
  }
}

try {
  while (!exited && elapsed() < limitSeconds) {
    if (times.health === undefined && (await answers(`${base}/health`))) times.health = elapsed();
    if (key && times.lookup === undefined && (await answers(`${base}/${domain}?token=${key}`))) times.lookup = elapsed();
    if (times.health !== undefined && times.lookup !== undefined && times.seeded !== undefined) break;
    await new Promise((r) => setTimeout(r, 250));
  }
} finally {
  process.kill(-child.pid!, "SIGTERM");
}
if (exited) process.stderr.write(output);
console.log(
  JSON.stringify(
    {
      dir,
      health: times.health ?? null,
      offered: times.offered ?? null,
      lookup: times.lookup ?? null,
      seeded: times.seeded ?? null,
      progress: progressLines,
    },
    null,
    1,
  ),
);
