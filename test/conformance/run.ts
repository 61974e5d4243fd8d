/**
 * npm run conformance: the official MCP conformance suite (@modelcontextprotocol/conformance,
 * server mode) against this service's real /mcp.
 *
 * The Worker is bundled as for deployment and run on workerd by Miniflare with its real
 * bindings and a fresh local state. An account signs in through the real OAuth flow (client
 * registration, sign-in, consent, code exchange with PKCE) to get an access token. The
 * suite's server mode cannot send a token, so a small proxy on 127.0.0.1 adds
 * `Authorization: Bearer …` to every request and forwards everything else as it came
 * (including a hostile Origin, which the DNS-rebinding scenario sends); it sets Host to the
 * Worker's own, as any reverse proxy does.
 *
 * Scenarios written for the suite's own fixture server (its test tools, prompts, fixture
 * resources, sampling and elicitation) are listed with their reasons in baseline.yml; the
 * suite fails the run on any other failure and on a baseline entry that starts passing.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { createAccount } from "../../src/accounts/accounts";
import { openPlatform, projectRoot } from "../../src/cli/platform";
import { bundleWorker, run, workerOptions, wrangler } from "../helpers/workerd";

const log = (message: string) => process.stderr.write(`${message}\n`);
const EMAIL = "conformance@example.com";
const PASSWORD = "conformance-password-1";
const REDIRECT_URI = "http://127.0.0.1:33418/callback";
const BASELINE = join(projectRoot, "test", "conformance", "baseline.yml");
const SCENARIO_TIMEOUT_MS = 30_000;

/** An access token for /mcp, obtained the way an MCP client obtains one. */
async function accessToken(base: string): Promise<string> {
  const cookies = new Map<string, string>();
  const browse = async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (cookies.size) headers.set("Cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const response = await fetch(new URL(url, base), { ...init, headers, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const at = pair!.indexOf("=");
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return response;
  };
  const form = (fields: Record<string, string>) => ({
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: new URL(base).origin },
    body: new URLSearchParams(fields).toString(),
  });

  const registered = await fetch(new URL("/oauth/register", base), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: "MCP conformance", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", grant_types: ["authorization_code"], response_types: ["code"] }),
  });
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  const challenge = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))).toString("base64url");
  const authorize = `/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: "logos",
    state: "conformance",
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: new URL("/mcp", base).href,
  })}`;
  const signedIn = await browse(authorize, form({ step: "sign-in", email: EMAIL, password: PASSWORD }));
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}`);
  const consent = await (await browse(signedIn.headers.get("location")!)).text();
  const handle = /name="handle" value="([^"]+)"/.exec(consent)?.[1];
  if (!handle) throw new Error("no consent form");
  const approved = await browse(authorize, form({ step: "consent", handle, decision: "approve" }));
  const code = new URL(approved.headers.get("location") ?? "").searchParams.get("code");
  if (!code) throw new Error(`consent answered ${approved.status}`);
  const token = await fetch(new URL("/oauth/token", base), {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: clientId, code_verifier: verifier, resource: new URL("/mcp", base).href }),
  });
  if (!token.ok) throw new Error(`token endpoint answered ${token.status}`);
  return ((await token.json()) as { access_token: string }).access_token;
}

/** Forwards to the Worker with the bearer token added; answers stream through unbuffered. */
async function startProxy(upstream: string, token: string): Promise<{ url: string; close: () => void }> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || ["host", "connection", "content-length", "authorization"].includes(name)) continue;
      headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    headers.set("Authorization", `Bearer ${token}`);
    try {
      const response = await fetch(new URL(req.url ?? "/", upstream), {
        method: req.method,
        headers,
        body: ["GET", "HEAD"].includes(req.method ?? "GET") ? undefined : Buffer.concat(chunks),
        redirect: "manual",
      });
      const out: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        if (name !== "content-encoding" && name !== "content-length") out[name] = value;
      });
      res.writeHead(response.status, out);
      if (response.body) Readable.fromWeb(response.body as never).pipe(res);
      else res.end();
    } catch (error) {
      res.writeHead(502).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy: no port");
  return { url: `http://localhost:${address.port}/mcp`, close: () => server.close() };
}

/** Scenario names of the baseline file: `  - name  # reason` lines under `server:`. */
function baseline(): Set<string> {
  const text = readFileSync(BASELINE, "utf8");
  return new Set([...text.matchAll(/^\s+-\s+([a-z0-9-]+)/gm)].map((m) => m[1]!));
}

/**
 * Each scenario runs on its own, under a time limit: one that waits for something our server
 * never sends (a fixture tool's notification, say) must not stall the rest.
 */
/** Runs the suite's CLI without blocking this process, which also serves the proxy. */
function suiteRun(args: string[], timeoutMs: number): Promise<{ status: number | null; timedOut: boolean; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(join(projectRoot, "node_modules", ".bin", "conformance"), args, { cwd: projectRoot });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stdout += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, timedOut, stdout });
    });
  });
}

async function runScenarios(url: string, started: number): Promise<number> {
  const listed = await suiteRun(["list", "--server"], SCENARIO_TIMEOUT_MS);
  const scenarios = [...listed.stdout.matchAll(/^\s+-\s+([a-z0-9-]+)/gm)].map((m) => m[1]!);
  const wanted = process.argv.slice(2);
  const expected = baseline();
  const rows: { scenario: string; outcome: string; ok: boolean }[] = [];
  for (const scenario of scenarios.filter((s) => wanted.length === 0 || wanted.includes(s))) {
    const began = Date.now();
    const result = await suiteRun(["server", "--url", url, "--scenario", scenario], SCENARIO_TIMEOUT_MS);
    const passed = result.status === 0;
    const { timedOut } = result;
    const inBaseline = expected.has(scenario);
    const outcome = passed ? (inBaseline ? "PASSED, but listed in the baseline" : "passed") : inBaseline ? "expected failure" : timedOut ? "TIMED OUT" : "FAILED";
    const ok = passed !== inBaseline;
    rows.push({ scenario, outcome, ok });
    log(`  ${ok ? "✓" : "✗"} ${scenario.padEnd(34)} ${outcome} (${((Date.now() - began) / 1000).toFixed(1)} s)`);
    if (!ok && !passed) log((result.stdout ?? "").split("\n").filter((line) => /FAIL|✗|Error|error/i.test(line)).slice(0, 12).map((line) => `      ${line}`).join("\n"));
  }
  const bad = rows.filter((row) => !row.ok);
  log(`\n${rows.length - bad.length} of ${rows.length} scenarios as expected (${rows.filter((r) => r.outcome === "passed").length} passed, ${rows.filter((r) => r.outcome === "expected failure").length} fixture-only) in ${Math.round((Date.now() - started) / 1000)} s.`);
  return bad.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), "logo-lookup-conformance-"));
  const state = join(work, "state");
  const dist = join(projectRoot, ".wrangler", "conformance", "dist");
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
      ...convertV4MiniflareOptions({ workers: [workerOptions(dist, "logo-lookup", { SIGNED_URL_SECRET: "conformance-signing-secret" })] } as never),
      resourcePersistencePath: join(state, "v3"),
    });
    try {
      const base = (await mf.unsafeGetDirectURL("logo-lookup")).href;
      const token = await accessToken(base);
      const proxy = await startProxy(base, token);
      try {
        log(`Running the conformance suite against ${proxy.url}…`);
        return await runScenarios(proxy.url, started);
      } finally {
        proxy.close();
      }
    } finally {
      await mf.dispose();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

process.exitCode = await main();
