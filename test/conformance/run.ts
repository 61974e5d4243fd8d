/**
 * npm run conformance: the official MCP conformance suite (@modelcontextprotocol/conformance,
 * server mode) against this service's real /mcp.
 *
 * The Worker is bundled as for deployment and run on workerd by Miniflare with its real
 * bindings (D1 with the migrations applied, R2, Durable Objects, KV) in a temporary state
 * directory, removed afterwards. An account is created in that D1 and signs in through the
 * real OAuth flow (client registration, sign-in, consent, code exchange with PKCE) to get an
 * access token, exactly as an MCP client would.
 *
 * Why the proxy: the suite's server mode cannot send a token, and /mcp answers 401 without
 * one. A small proxy on 127.0.0.1 adds `Authorization: Bearer …` and forwards everything else
 * as it came: method, path, body, every end-to-end header including Host and Origin, and the
 * answer streamed back. Host matters: with no PUBLIC_BASE_URL (as under `npm start`) the
 * Worker takes its own origin from Host, and the dns-rebinding-protection scenario sends a
 * hostile Host and Origin together, as a rebinding browser does; rewriting Host would test a
 * request no attacker sends. The token is therefore obtained through the proxy too, so that it
 * is issued for the resource the suite's URL names (http://127.0.0.1:<proxy port>/mcp).
 *
 * Each scenario runs in its own CLI process under a 30-second limit (a scenario waiting for
 * something our server never sends must not stall the rest), a few at a time, with the
 * suite's own `--expected-failures` check against baseline.yml: scenarios written for the
 * suite's fixture server are listed there with their reasons. The suite counts a scenario
 * with a failed check or a warning as failing; the run fails on any failure not in the
 * baseline, and on a baseline entry that passes (remove it). Results are read from the
 * suite's checks.json files and printed as a table on stdout; progress goes to stderr.
 *
 *   npm run conformance                      every server scenario the suite lists
 *   npm run conformance -- ping tools-list   just these
 *   CONFORMANCE_JOBS=1 npm run conformance   one scenario at a time (default 4)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, request } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { createAccount } from "../../src/accounts/accounts";
import { openPlatform, projectRoot } from "../../tools/platform";
import { accessTokenThroughOAuth } from "../helpers/oauthClient";
import { bundleWorker, run, workerOptions, wrangler } from "../helpers/workerd";

const started = Date.now();
const log = (message: string) => process.stderr.write(`[${String(Math.round((Date.now() - started) / 1000)).padStart(3)} s] ${message}\n`);
const EMAIL = "conformance@example.com";
const PASSWORD = "conformance-password-1";
const BASELINE = join(projectRoot, "test", "conformance", "baseline.yml");
const SCENARIO_TIMEOUT_MS = 30_000;
const JOBS = Math.max(1, Number(process.env.CONFORMANCE_JOBS ?? 4));
/** The suite's CLI, run by the Node running this script (22 under npm scripts), not whatever `node` is on PATH. */
const SUITE_CLI = join(
  dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/package.json")),
  "dist",
  "index.js",
);

/** Hop-by-hop headers (RFC 9110 §7.6.1) belong to each connection; a proxy does not forward them. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"]);
const endToEnd = (headers: IncomingHttpHeaders): OutgoingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && !HOP_BY_HOP.has(name)));

interface TokenProxy {
  /** The proxy's origin, http://127.0.0.1:<port>. */
  origin: string;
  /** From now on, every request goes upstream with this bearer token instead of its own. */
  useToken(token: string): void;
  close(): void;
}

/** Forwards requests to `upstream` as they came (Host included), adding the token once it is set; answers stream back. */
async function startProxy(upstream: URL): Promise<TokenProxy> {
  let token: string | undefined;
  const server = createServer((incoming, answer) => {
    const headers = endToEnd(incoming.headers);
    if (token) headers.authorization = `Bearer ${token}`;
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers },
      (response) => {
        answer.writeHead(response.statusCode ?? 502, response.statusMessage, endToEnd(response.headers));
        response.pipe(answer);
      },
    );
    forwarded.on("error", (error) => (answer.headersSent ? answer.destroy() : answer.writeHead(502).end(`proxy: ${error.message}`)));
    // The suite hanging up (an SSE stream it is done with) ends the upstream request too.
    answer.on("close", () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy: no port");
  return {
    origin: `http://127.0.0.1:${address.port}`,
    useToken: (value) => (token = value),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** The baseline's entries and their reasons: `  - name  # reason` lines under `server:` (the suite reads the same file). */
function baseline(): Map<string, string> {
  const text = readFileSync(BASELINE, "utf8");
  return new Map([...text.matchAll(/^\s+-\s+([a-z0-9-]+)[ \t]*(?:#[ \t]*(.*))?$/gm)].map((m) => [m[1]!, m[2]?.trim() ?? ""]));
}

/** Suite processes still running, ended if this run is interrupted. */
const running = new Set<ChildProcess>();

/** Runs the suite's CLI without blocking this process, which also serves the proxy. */
function suite(args: string[], timeoutMs: number): Promise<{ status: number | null; timedOut: boolean; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SUITE_CLI, ...args], { cwd: projectRoot });
    running.add(child);
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("close", (status) => {
      running.delete(child);
      clearTimeout(timer);
      resolve({ status, timedOut, output });
    });
  });
}

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
  details?: unknown;
}

interface Outcome {
  scenario: string;
  ok: boolean;
  outcome: string;
  checks: string;
  note: string;
  problems: string[];
}

/** One scenario in its own suite process; the verdict is the suite's own baseline check, the table's detail its checks.json. */
async function runScenario(url: string, scenario: string, listed: Map<string, string>, results: string): Promise<Outcome> {
  const out = join(results, scenario);
  const run = await suite(
    ["server", "--url", url, "--scenario", scenario, "--expected-failures", BASELINE, "-o", out],
    SCENARIO_TIMEOUT_MS,
  );
  let checks: Check[] | undefined;
  try {
    const [dir] = readdirSync(out);
    checks = JSON.parse(readFileSync(join(out, dir!, "checks.json"), "utf8")) as Check[];
  } catch {
    // No results: the scenario timed out or the suite could not run it.
  }
  const inBaseline = listed.has(scenario);
  const base = { scenario, checks: "", note: inBaseline ? listed.get(scenario)! : "", problems: [] as string[] };
  if (run.timedOut) return { ...base, ok: false, outcome: "TIMED OUT", problems: [`no answer within ${SCENARIO_TIMEOUT_MS / 1000} s`] };
  if (!checks) return { ...base, ok: false, outcome: "NO RESULT", problems: run.output.trim().split("\n").slice(-8) };

  const count = (status: Check["status"]) => checks.filter((check) => check.status === status).length;
  const [passed, failed, warnings] = [count("SUCCESS"), count("FAILURE"), count("WARNING")];
  const summary = `${passed}/${passed + failed}${warnings ? `, ${warnings} warning${warnings > 1 ? "s" : ""}` : ""}`;
  // The suite's rule (its baseline check): a failed check or a warning makes the scenario fail.
  const clean = failed === 0 && warnings === 0;
  const problems = checks
    .filter((check) => check.status === "FAILURE" || check.status === "WARNING")
    .map((check) => `${check.status} ${check.id}: ${check.errorMessage ?? JSON.stringify(check.details ?? "")}`.slice(0, 400));
  const expected = clean !== inBaseline;
  // The suite's exit code and our reading of its checks must agree; if they do not, trust neither.
  const agrees = (run.status === 0) === expected;
  const outcome = clean
    ? inBaseline
      ? "PASSED, but in the baseline: remove it"
      : "passed"
    : inBaseline
      ? "expected failure"
      : failed
        ? "FAILED"
        : "FAILED (warnings)";
  return {
    ...base,
    ok: expected && agrees,
    outcome: agrees ? outcome : `${outcome}; the suite exited ${run.status}`,
    checks: summary,
    problems: expected ? [] : problems,
  };
}

async function runScenarios(url: string, results: string): Promise<Outcome[]> {
  const list = await suite(["list", "--server"], SCENARIO_TIMEOUT_MS);
  const scenarios = [...list.output.matchAll(/^\s+-\s+([a-z0-9-]+)/gm)].map((m) => m[1]!);
  if (list.status !== 0 || scenarios.length === 0) throw new Error(`the suite listed no server scenarios:\n${list.output}`);
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !scenarios.includes(name));
  if (unknown.length) throw new Error(`not scenarios of the suite: ${unknown.join(", ")}`);
  const listed = baseline();
  const stale = [...listed.keys()].filter((name) => !scenarios.includes(name));
  if (stale.length) throw new Error(`baseline.yml names scenarios the suite no longer has: ${stale.join(", ")}`);

  const queue = scenarios.filter((name) => wanted.length === 0 || wanted.includes(name));
  const outcomes = new Map<string, Outcome>();
  await Promise.all(
    Array.from({ length: Math.min(JOBS, queue.length) }, async () => {
      for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) {
        const outcome = await runScenario(url, scenario, listed, results);
        outcomes.set(scenario, outcome);
        log(`  ${outcome.ok ? "✓" : "✗"} ${scenario} — ${outcome.outcome}`);
      }
    }),
  );
  return scenarios.filter((name) => outcomes.has(name)).map((name) => outcomes.get(name)!);
}

function report(outcomes: Outcome[], seconds: number) {
  const widest = (column: (o: Outcome) => string, heading: string) => Math.max(heading.length, ...outcomes.map((o) => column(o).length));
  const [scenarioWidth, checksWidth, outcomeWidth] = [
    widest((o) => o.scenario, "scenario"),
    widest((o) => o.checks, "checks"),
    widest((o) => o.outcome, "outcome"),
  ];
  const row = (mark: string, scenario: string, checks: string, outcome: string, note: string) =>
    `${mark} ${scenario.padEnd(scenarioWidth)}  ${checks.padEnd(checksWidth)}  ${outcome.padEnd(outcomeWidth)}  ${note}`.trimEnd();
  console.log(`\n${row(" ", "scenario", "checks", "outcome", "baseline reason")}`);
  for (const o of outcomes) {
    console.log(row(o.ok ? "✓" : "✗", o.scenario, o.checks, o.outcome, o.note));
    for (const problem of o.problems) console.log(`      ${problem}`);
  }
  const bad = outcomes.filter((o) => !o.ok).length;
  const passed = outcomes.filter((o) => o.ok && o.outcome === "passed").length;
  console.log(
    `\n${outcomes.length - bad} of ${outcomes.length} scenarios as expected (${passed} passed, ${outcomes.length - bad - passed} expected to fail)` +
      `${bad ? `; ${bad} not` : ""}, in ${seconds} s.`,
  );
}

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), "logo-lookup-conformance-"));
  const state = join(work, "state");
  const dist = join(projectRoot, ".wrangler", "conformance", "dist");
  // Files still being written (results, workerd's state) make a removal retry.
  const removeWork = () => rmSync(work, { recursive: true, force: true, maxRetries: 5 });
  // Interrupted (Ctrl-C, a CI timeout): still leave no state behind.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      for (const child of running) child.kill("SIGKILL");
      removeWork();
      process.exit(1);
    });
  }
  try {
    log("Bundling the Worker and preparing a local state…");
    bundleWorker(dist);
    run(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state]);
    const platform = await openPlatform({ persistTo: state });
    try {
      const account = await createAccount(platform.db, { email: EMAIL, password: PASSWORD, plan: "enterprise" });
      if (!account.ok) throw new Error(account.error.message);
    } finally {
      await platform.dispose();
    }

    log("Starting workerd…");
    const mf = new Miniflare({
      ...convertV4MiniflareOptions({
        workers: [workerOptions(dist, "logo-lookup", { SIGNED_URL_SECRET: "conformance-signing-secret" })],
      } as never),
      resourcePersistencePath: join(state, "v3"),
    });
    try {
      const proxy = await startProxy(await mf.unsafeGetDirectURL("logo-lookup"));
      try {
        log("Signing in through OAuth…");
        proxy.useToken(await accessTokenThroughOAuth(proxy.origin, EMAIL, PASSWORD));
        const url = `${proxy.origin}/mcp`;
        log(`Running the conformance suite against ${url}, ${JOBS} scenarios at a time…`);
        const outcomes = await runScenarios(url, join(work, "results"));
        report(outcomes, Math.round((Date.now() - started) / 1000));
        return outcomes.every((o) => o.ok) ? 0 : 1;
      } finally {
        proxy.close();
      }
    } finally {
      await mf.dispose();
    }
  } finally {
    removeWork();
  }
}

process.exitCode = await main();
