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
 * all at once. It checks what must hold under load and exits 1 when anything does not: no
 * 5xx; in every minute, every key served exactly as many lookups as it was asked for up to
 * its limit, never more; exactly 50 MCP calls admitted; the event applied once and every other
 * delivery a duplicate; and workerd's memory (RSS) flat: sampled every second, it may grow
 * while caches and objects fill in the first half, not in the second.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import Stripe from "stripe";
import { createAccount } from "../../src/accounts/accounts";
import { openPlatform, projectRoot } from "../../src/cli/platform";
import { createKey } from "../../src/keys/apiKeys";
import { accessTokenThroughOAuth } from "../helpers/oauthClient";
import { bundleWorker, seededState, workerOptions, workerdProcesses } from "../helpers/workerd";

const seconds = Number(process.env.LOAD_SECONDS ?? 30);
const connections = Number(process.env.LOAD_CONNECTIONS ?? 500);
const keyCount = Number(process.env.LOAD_KEYS ?? 50);
const mcpWorkers = Number(process.env.LOAD_MCP_WORKERS ?? 10);
const webhookWorkers = Number(process.env.LOAD_WEBHOOK_WORKERS ?? 20);
const perMinute = Number(process.env.LOAD_PER_MINUTE ?? 20);
const WEBHOOK_SECRET = "whsec_load_0123456789abcdef";
const MCP_EMAIL = "load-mcp@example.com";
const PASSWORD = "load-password-1234";
const log = (message: string) => process.stderr.write(`${message}\n`);

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
      const count = (key: number, status: number, reset: string | null | undefined) => {
        const window = `${key}@${reset}`;
        asked.set(window, (asked.get(window) ?? 0) + 1);
        if (status === 302) served.set(window, (served.get(window) ?? 0) + 1);
      };
      // Warm-up: every key once, so memory is measured with the isolate's caches in use; these count too.
      for (const [index, key] of keys.entries()) {
        const response = await fetch(`${base}/github.com?token=${key}`, { redirect: "manual" });
        await response.arrayBuffer();
        count(index, response.status, response.headers.get("x-ratelimit-reset"));
      }
      const rssBefore = workerdRssMiB();

      const payload = JSON.stringify({
        id: "evt_load_replayed",
        object: "event",
        type: "customer.subscription.created",
        created: Math.floor(Date.now() / 1000),
        data: { object: { id: "sub_load", object: "subscription", status: "active", customer: "cus_load", metadata: { accountId: billed, plan: "launch" }, items: { data: [] } } },
      });
      const signature = await Stripe.webhooks.generateTestHeaderStringAsync({ payload, secret: WEBHOOK_SECRET, cryptoProvider: Stripe.createSubtleCryptoProvider() });

      log(`Loading for ${seconds} s: ${connections} lookup connections over ${keyCount} keys (${perMinute} a minute each), MCP and webhook replays alongside…`);
      const until = Date.now() + seconds * 1000;
      const statuses = new Map<number, number>();
      let next = 0;
      const lookups = autocannon({
        url: base,
        connections,
        duration: seconds,
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
              count(context.key!, status, reset);
            },
          },
        ],
      } as autocannon.Options);
      const rss: number[] = [];
      const sampler = setInterval(() => rss.push(workerdRssMiB()), 1000);
      const [lookupResult, mcp, webhooks] = await Promise.all([
        lookups,
        loop(mcpWorkers, until, async () => {
          const response = await fetch(`${base}/mcp`, {
            method: "POST",
            headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
          });
          await response.arrayBuffer();
          return String(response.status);
        }),
        loop(webhookWorkers, until, async () => {
          const response = await fetch(`${base}/apiaas/billing/webhook`, { method: "POST", headers: { "Content-Type": "application/json", "Stripe-Signature": signature }, body: payload });
          const body = (await response.json()) as { outcome?: string };
          return `${response.status} ${body.outcome ?? ""}`.trim();
        }),
      ]);
      clearInterval(sampler);
      const rssMiddle = rss[Math.floor(rss.length / 2)] ?? rssBefore;
      const rssAfter = workerdRssMiB();

      const failures: string[] = [];
      const fiveHundreds = [...statuses].filter(([status]) => status >= 500).reduce((sum, [, n]) => sum + n, 0);
      // A timeout is the queue of an overloaded machine; any other connection error is the Worker's.
      const connectionErrors = lookupResult.errors - lookupResult.timeouts;
      if (fiveHundreds > 0 || connectionErrors > 0) failures.push(`lookups: ${fiveHundreds} answers ≥ 500, ${connectionErrors} connection errors`);
      const windows = [...asked.keys()];
      const perWindow = windows.map((w) => served.get(w) ?? 0);
      const inexact = windows.filter((w) => (served.get(w) ?? 0) !== Math.min(asked.get(w)!, perMinute));
      if (inexact.length > 0) {
        const sample = inexact.slice(0, 3).map((w) => `asked ${asked.get(w)}, served ${served.get(w) ?? 0}`);
        failures.push(`lookups: ${inexact.length} key-minutes not served exactly min(asked, ${perMinute}): ${sample.join("; ")}`);
      }
      const mcpAdmitted = mcp.get("200") ?? 0;
      if (mcpWorkers > 0 && mcpAdmitted !== 50) failures.push(`MCP: ${mcpAdmitted} calls admitted, the Free daily cap is 50`);
      if ([...mcp.keys()].some((status) => status !== "200" && status !== "429")) failures.push(`MCP: answers ${JSON.stringify(Object.fromEntries(mcp))}`);
      if ((webhookWorkers > 0 && webhooks.get("200 applied") !== 1) || [...webhooks.keys()].some((k) => k !== "200 applied" && k !== "200 duplicate")) {
        failures.push(`webhooks: ${JSON.stringify(Object.fromEntries(webhooks))}`);
      }
      if (rssAfter > rssMiddle * 1.2) failures.push(`workerd memory grew in the second half of the run, from ${rssMiddle.toFixed(0)} to ${rssAfter.toFixed(0)} MiB`);

      console.log(
        `\nlookups      ${lookupResult.requests.total} answered (${lookupResult.requests.average.toFixed(0)} req/s, p99 ${lookupResult.latency.p99} ms, ${lookupResult.timeouts} over 30 s): ${JSON.stringify(Object.fromEntries(statuses))}`,
      );
      const askedCounts = [...asked.values()];
      console.log(`             ${windows.length} key-minutes, each asked ${Math.min(...askedCounts)}–${Math.max(...askedCounts)} and served ${Math.min(...perWindow)}–${Math.max(...perWindow)} (limit ${perMinute})`);
      console.log(`MCP          ${JSON.stringify(Object.fromEntries(mcp))} (Free: 50 a day)`);
      console.log(`webhooks     ${JSON.stringify(Object.fromEntries(webhooks))}`);
      console.log(`workerd RSS  ${rssBefore.toFixed(0)} MiB after warm-up, ${rssMiddle.toFixed(0)} MiB half-way, ${rssAfter.toFixed(0)} MiB at the end`);
      console.log(`             every 5 s: ${rss.filter((_, i) => i % 5 === 4).map((m) => m.toFixed(0)).join(", ")} MiB`);
      console.log(failures.length === 0 ? "\nall checks held" : `\nFAILED:\n  ${failures.join("\n  ")}`);
      return failures.length === 0 ? 0 : 1;
    } finally {
      await mf.dispose();
    }
  } finally {
    rmSync(work, { recursive: true, force: true, maxRetries: 5 });
  }
}

process.exitCode = await main();
