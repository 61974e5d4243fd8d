/**
 * npm run bench:load: a bounded load run on loopback that stops by itself, against the Worker
 * bundled as for deployment and run on workerd by Miniflare with its real bindings:
 *
 *   lookups    LOAD_CONNECTIONS (500) connections over LOAD_KEYS (50) publishable keys, each
 *              limited to LOAD_PER_MINUTE (20) lookups a minute, for LOAD_SECONDS (30)
 *   MCP        a Free account (50 calls a day) calling tools/list from LOAD_MCP_WORKERS (10) connections
 *   webhooks   one signed Stripe event replayed from LOAD_WEBHOOK_WORKERS (20) connections
 *
 * (either set to 0 leaves that part and its checks out: to see whose memory grows),
 *
 * all at once, after LOAD_WARMUP_SECONDS (90) of the same traffic. It checks what must hold
 * under load and exits 1 when anything does not: no 5xx; in every minute, every key served
 * exactly as many lookups as it was asked for up to its limit, never more; exactly 50 MCP
 * calls admitted; the event applied once and every other delivery a duplicate; and workerd's
 * memory (RSS) flat over the measured seconds: at most 10 % above where the warm-up left it
 * (each the median of five one-second samples), or no more than the baseline's (below).
 *
 * workerd's memory grows under any load for a minute or two before it levels off, whatever the
 * Worker does: its allocator (tcmalloc) and V8 size themselves to the traffic, and reads of
 * Miniflare's local KV (every MCP call makes one, validating its token) take it higher still.
 * So the same traffic first
 * runs against a baseline Worker that does the least the same bindings allow (a fixed 302,
 * one KV read for an MCP call, a fixed answer to a webhook), and its memory is printed beside
 * ours (LOAD_BASELINE=0 leaves it out).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import Stripe from "stripe";
import { createAccount } from "../../src/accounts/accounts";
import { openPlatform, projectRoot } from "../../tools/platform";
import { createKey } from "../../src/keys/apiKeys";
import { accessTokenThroughOAuth } from "../helpers/oauthClient";
import { bundleWorker, seededState, workerOptions, workerdProcesses } from "../helpers/workerd";

const seconds = Number(process.env.LOAD_SECONDS ?? 30);
const warmupSeconds = Number(process.env.LOAD_WARMUP_SECONDS ?? 90);
const baseline = process.env.LOAD_BASELINE !== "0";
const connections = Number(process.env.LOAD_CONNECTIONS ?? 500);
const keyCount = Number(process.env.LOAD_KEYS ?? 50);
const mcpWorkers = Number(process.env.LOAD_MCP_WORKERS ?? 10);
const webhookWorkers = Number(process.env.LOAD_WEBHOOK_WORKERS ?? 20);
const perMinute = Number(process.env.LOAD_PER_MINUTE ?? 20);
const WEBHOOK_SECRET = "whsec_load_0123456789abcdef";
const MCP_EMAIL = "load-mcp@example.com";
const PASSWORD = "load-password-1234";
const log = (message: string) => process.stderr.write(`${message}\n`);
const cryptoProvider = Stripe.createSubtleCryptoProvider();

/** Resident memory of the workerd processes this process started, in MiB. */
function workerdRssMiB(): number {
  let kib = 0;
  for (const { pid } of workerdProcesses()) {
    try {
      kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // The process ended while we looked.
    }
  }
  return kib / 1024;
}

/** Calls `once` from `workers` loops until the deadline; counts what it answers. */
async function loop(workers: number, until: number, once: () => Promise<string>): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < until) {
        const outcome = await once().catch((error: Error) => `network error: ${error.message}`);
        counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
      }
    }),
  );
  return counts;
}

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), "logo-lookup-load-"));
  const dist = join(projectRoot, ".wrangler", "load", "dist");
  try {
    log("Bundling the Worker and preparing a local state…");
    bundleWorker(dist);
    const state = await seededState(work, /^github\.com$/);

    const platform = await openPlatform({ persistTo: state });
    const keys: string[] = [];
    let billed: string;
    try {
      const owner = await createAccount(platform.db, { email: "load@example.com", password: PASSWORD, plan: "enterprise" });
      const agent = await createAccount(platform.db, { email: MCP_EMAIL, password: PASSWORD, plan: "free" });
      // The webhooks upgrade an account of their own: the MCP account must stay on Free.
      const customer = await createAccount(platform.db, { email: "load-billing@example.com", password: PASSWORD, plan: "free" });
      if (!owner.ok || !agent.ok || !customer.ok) throw new Error("accounts could not be created");
      billed = customer.value.id;
      for (let i = 0; i < keyCount; i++) {
        const key = await createKey(platform.db, { accountId: owner.value.id, type: "publishable", perMinute });
        if (!key.ok) throw new Error(key.error.message);
        keys.push(key.value.key);
      }
    } finally {
      await platform.dispose();
    }

    const payload = JSON.stringify({
      id: "evt_load_replayed",
      object: "event",
      type: "customer.subscription.created",
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: "sub_load",
          object: "subscription",
          status: "active",
          customer: "cus_load",
          metadata: { accountId: billed, plan: "launch" },
          items: { data: [] },
        },
      },
    });

    let floor: Run | undefined;
    if (baseline) {
      log(`Baseline: the same traffic for ${warmupSeconds + seconds} s against a Worker that does the least its bindings allow…`);
      const mf = new Miniflare({
        ...convertV4MiniflareOptions({ workers: [baselineWorker] } as never),
        resourcePersistencePath: join(work, "baseline"),
      });
      try {
        const floorBase = (await mf.unsafeGetDirectURL("baseline")).href.replace(/\/$/, "");
        // A record the size of a stored token's, for every MCP call to read.
        await fetch(`${floorBase}/token`, {
          method: "PUT",
          body: JSON.stringify({ wrappedEncryptionKey: "k".repeat(56), grant: { encryptedProps: "p".repeat(600) } }),
        });
        floor = await traffic(floorBase, { keys, token: "baseline", payload });
      } finally {
        await mf.dispose();
      }
    }

    log("Starting workerd…");
    const mf = new Miniflare({
      ...convertV4MiniflareOptions({ workers: [workerOptions(dist, "logo-lookup", { STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET })] } as never),
      resourcePersistencePath: join(state, "v3"),
    });
    try {
      const base = (await mf.unsafeGetDirectURL("logo-lookup")).href.replace(/\/$/, "");
      const token = await accessTokenThroughOAuth(base, MCP_EMAIL, PASSWORD);
      // Lookups asked and served per key and minute window (the window the Worker reports in X-RateLimit-Reset).
      const asked = new Map<string, number>();
      const served = new Map<string, number>();
      const count = (key: number, status: number, reset: string | undefined) => {
        const window = `${key}@${reset}`;
        asked.set(window, (asked.get(window) ?? 0) + 1);
        if (status === 302) served.set(window, (served.get(window) ?? 0) + 1);
      };
      // Every key once, so the isolate's caches are in use from the start; these count too.
      for (const [index, key] of keys.entries()) {
        const response = await fetch(`${base}/github.com?token=${key}`, { redirect: "manual" });
        await response.arrayBuffer();
        count(index, response.status, response.headers.get("x-ratelimit-reset") ?? undefined);
      }
      const run = await traffic(base, { keys, token, payload, onLookup: count });
      const { lookups: lookupResult, statuses, mcp, webhooks } = run;

      const failures: string[] = [];
      const fiveHundreds = [...statuses].filter(([status]) => status >= 500).reduce((sum, [, n]) => sum + n, 0);
      // A timeout is the queue of an overloaded machine; any other connection error is the Worker's.
      const connectionErrors = lookupResult.errors - lookupResult.timeouts;
      if (fiveHundreds > 0 || connectionErrors > 0)
        failures.push(`lookups: ${fiveHundreds} answers ≥ 500, ${connectionErrors} connection errors`);
      const windows = [...asked.keys()];
      const perWindow = windows.map((w) => served.get(w) ?? 0);
      const inexact = windows.filter((w) => (served.get(w) ?? 0) !== Math.min(asked.get(w)!, perMinute));
      if (inexact.length > 0) {
        const sample = inexact.slice(0, 3).map((w) => `asked ${asked.get(w)}, served ${served.get(w) ?? 0}`);
        failures.push(`lookups: ${inexact.length} key-minutes not served exactly min(asked, ${perMinute}): ${sample.join("; ")}`);
      }
      const mcpAdmitted = mcp.get("200") ?? 0;
      if (mcpWorkers > 0 && mcpAdmitted !== 50) failures.push(`MCP: ${mcpAdmitted} calls admitted, the Free daily cap is 50`);
      if ([...mcp.keys()].some((status) => status !== "200" && status !== "429"))
        failures.push(`MCP: answers ${JSON.stringify(Object.fromEntries(mcp))}`);
      if (
        (webhookWorkers > 0 && webhooks.get("200 applied") !== 1) ||
        [...webhooks.keys()].some((k) => k !== "200 applied" && k !== "200 duplicate")
      ) {
        failures.push(`webhooks: ${JSON.stringify(Object.fromEntries(webhooks))}`);
      }
      // workerd with the baseline Worker creeps up too: growth as large as its own is not ours.
      const memory = memoryOf(run);
      const floorMemory = floor && memoryOf(floor);
      const allowed = Math.max(0.1, floorMemory ? growthOf(floorMemory) : 0);
      if (growthOf(memory) > allowed) {
        failures.push(
          `workerd memory grew over the measured ${seconds} s, from ${memory.warmed.toFixed(0)} to ${memory.end.toFixed(0)} MiB (more than ${(allowed * 100).toFixed(0)} %)`,
        );
      }

      console.log(
        `\nlookups      ${lookupResult.requests.total} answered (${lookupResult.requests.average.toFixed(0)} req/s, p99 ${lookupResult.latency.p99} ms, ${lookupResult.timeouts} over 30 s): ${JSON.stringify(Object.fromEntries(statuses))}`,
      );
      const askedCounts = [...asked.values()];
      console.log(
        `             ${windows.length} key-minutes, each asked ${Math.min(...askedCounts)}–${Math.max(...askedCounts)} and served ${Math.min(...perWindow)}–${Math.max(...perWindow)} (limit ${perMinute})`,
      );
      console.log(`MCP          ${JSON.stringify(Object.fromEntries(mcp))} (Free: 50 a day)`);
      console.log(`webhooks     ${JSON.stringify(Object.fromEntries(webhooks))}`);
      console.log(`\nworkerd RSS, MiB: at the start → after ${warmupSeconds} s of warm-up → after ${seconds} s more (every 5 s)`);
      console.log(`  this Worker   ${describeMemory(memory)}`);
      if (floor && floorMemory) console.log(`  baseline      ${describeMemory(floorMemory)}   (${floor.lookups.requests.total} lookups)`);
      console.log(failures.length === 0 ? "\nall checks held" : `\nFAILED:\n  ${failures.join("\n  ")}`);
      return failures.length === 0 ? 0 : 1;
    } finally {
      await mf.dispose();
    }
  } finally {
    rmSync(work, { recursive: true, force: true, maxRetries: 5 });
  }
}

interface Traffic {
  keys: string[];
  token: string;
  /** The webhook event every delivery replays, signed afresh each time as Stripe's retries are. */
  payload: string;
  onLookup?: (key: number, status: number, reset: string | undefined) => void;
}

interface Run {
  lookups: autocannon.Result;
  statuses: Map<number, number>;
  mcp: Map<string, number>;
  webhooks: Map<string, number>;
  /** workerd's RSS in MiB: before the traffic, then once a second. */
  rss: number[];
}

/** The load: lookups, MCP calls and webhook replays at once, for the warm-up and the measured seconds. */
async function traffic(base: string, { keys, token, payload, onLookup }: Traffic): Promise<Run> {
  const duration = warmupSeconds + seconds;
  log(
    `Loading for ${warmupSeconds} + ${duration - warmupSeconds} s: ${connections} lookup connections over ${keyCount} keys (${perMinute} a minute each), MCP and webhook replays alongside…`,
  );
  const until = Date.now() + duration * 1000;
  const statuses = new Map<number, number>();
  let next = 0;
  const lookups = autocannon({
    url: base,
    connections,
    duration,
    // Overloaded on purpose: a lookup may queue for seconds. One that takes this long counts as a timeout.
    timeout: 30,
    requests: [
      {
        setupRequest: (request: { path: string }, context: { key?: number }) => {
          context.key = next++ % keyCount;
          request.path = `/github.com?token=${keys[context.key]}`;
          return request;
        },
        onResponse: (status: number, _body: string, context: { key?: number }, headers: Record<string, string>) => {
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          // autocannon hands the headers over as the Worker spelled them.
          const reset = Object.entries(headers).find(([name]) => name.toLowerCase() === "x-ratelimit-reset")?.[1];
          onLookup?.(context.key!, status, reset);
        },
      },
    ],
  } as autocannon.Options);
  const rss = [workerdRssMiB()];
  const sampler = setInterval(() => rss.push(workerdRssMiB()), 1000);
  try {
    const [result, mcp, webhooks] = await Promise.all([
      lookups,
      loop(mcpWorkers, until, async () => {
        const response = await fetch(`${base}/mcp`, {
          method: "POST",
          headers: {
            Authorization: `Bearer ${token}`,
            "Content-Type": "application/json",
            Accept: "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
        });
        await response.arrayBuffer();
        return String(response.status);
      }),
      loop(webhookWorkers, until, async () => {
        const signature = await Stripe.webhooks.generateTestHeaderStringAsync({ payload, secret: WEBHOOK_SECRET, cryptoProvider });
        const response = await fetch(`${base}/apiaas/billing/webhook`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "Stripe-Signature": signature },
          body: payload,
        });
        const body = (await response.json()) as { outcome?: string };
        return `${response.status} ${body.outcome ?? ""}`.trim();
      }),
    ]);
    return { lookups: result, statuses, mcp, webhooks, rss };
  } finally {
    clearInterval(sampler);
    rss.push(workerdRssMiB());
  }
}

/**
 * Where memory stood: at the start, as the warm-up ended and at the end, each of the latter two
 * the median of five one-second samples (so that one collection's dip or peak is not the figure).
 */
function memoryOf({ rss }: Run) {
  const median = (samples: number[]) => samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
  const warmupEnd = Math.min(warmupSeconds, rss.length - 1);
  return {
    start: rss[0]!,
    warmed: median(rss.slice(Math.max(1, warmupEnd - 4), warmupEnd + 1)),
    end: median(rss.slice(-5)),
    every5s: rss.filter((_, i) => i > 0 && i % 5 === 0),
  };
}

const growthOf = (memory: ReturnType<typeof memoryOf>) => memory.end / memory.warmed - 1;

function describeMemory(memory: ReturnType<typeof memoryOf>): string {
  const growth = (growthOf(memory) * 100).toFixed(0);
  return `${memory.start.toFixed(0)} → ${memory.warmed.toFixed(0)} → ${memory.end.toFixed(0)} (${growth} % over the measured seconds; ${memory.every5s.map((m) => m.toFixed(0)).join(", ")})`;
}

/**
 * The baseline: the same routes as the Worker, each doing the least its bindings allow. An MCP
 * call reads one KV record as token validation does and is refused as past the daily cap.
 */
const baselineWorker = {
  name: "baseline",
  modules: true,
  compatibilityDate: "2025-09-01",
  kvNamespaces: ["OAUTH_KV"],
  unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
  script: `export default {
    async fetch(request, env) {
      const { pathname } = new URL(request.url);
      if (pathname === "/token" && request.method === "PUT") {
        await env.OAUTH_KV.put("token", await request.text());
        return new Response(null, { status: 204 });
      }
      if (pathname === "/mcp") {
        await request.arrayBuffer();
        const record = await env.OAUTH_KV.get("token", { type: "json" });
        return Response.json({ error: record ? "Daily limit" : "Invalid or expired token" }, { status: record ? 429 : 401 });
      }
      if (pathname === "/apiaas/billing/webhook") {
        await request.arrayBuffer();
        return Response.json({ outcome: "duplicate" });
      }
      return new Response(null, { status: 302, headers: { Location: "/assets/logos/github.com/icon.png", "Cache-Control": "public, max-age=86400" } });
    },
  };`,
};
process.exitCode = await main();
