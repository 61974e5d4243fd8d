/**
 * npm run bench: throughput, latency and CPU of the lookup paths on workerd itself, each
 * against a baseline measured in the same run with the same harness.
 *
 *   redirect  GET /{domain} (302, warm cache)     vs  a trivial Worker returning a fixed 302,
 *             and vs one returning a fixed 302 with the redirect's seven headers (what the
 *             answer's size costs, apart from the work of finding it)
 *   bytes     GET /{domain} in bytes mode (200)   vs  the same trivial Worker
 *   webp, dpr GET /{domain} in bytes mode with format=webp, and with dpr=2   vs  the PNG bytes row
 *   assets    GET /assets/{key}?maxWidth=256      vs  sharp resizing the same PNG in Node
 *   discovered  GET /{domain} (302, warm) of a logo discovery found on a (fake, loopback) site
 *   monogram  GET /{domain}?fallback=monogram of a site with no icon (its miss remembered)
 *   hostile   the discovery of a site whose icon is a 1,100 px PNG of random colours: workerd's
 *             CPU for the whole discovery, alone, against the discovery of a two-colour PNG of
 *             the same size (what the colours cost); and the p99 of warm catalogued redirects
 *             served while such a discovery runs against their p99 alone, in turn
 *
 * The Worker is bundled as for deployment and run by Miniflare with the real bindings (D1, R2,
 * Durable Objects, Images, Cache) on a direct socket: wrangler dev's proxy caps every Worker
 * at a few hundred requests a second and would hide the differences. Load comes from
 * autocannon on loopback; workerd CPU per request is workerd's own CPU time over the run
 * divided by the requests it served (the Worker's code and workerd's HTTP work for it alike).
 * The warm redirect's own CPU, apart from the HTTP work, is measured inside its isolate too:
 * workerd's CPU over 50,000 calls of the Worker's fetch handler within one request, against
 * the trivial Worker's handler called the same way in the same isolate.
 * Figures depend on the machine: compare the ratios.
 *
 * A shared two-core machine drifts by ±15 % from one run to the next, so each scenario is
 * measured in BENCH_ROUNDS rounds, the scenarios taking turns, and the median round counts
 * (the redirect and its baselines in reversed order every other round).
 *
 * Options (environment): BENCH_SECONDS per round (3), BENCH_ROUNDS (5), BENCH_CONNECTIONS (32).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import sharp from "sharp";
import { createAccount } from "../../src/accounts/accounts";
import { discoveredMaster } from "../../src/discovery/image";
import { encodeAssetKey } from "../../src/images/assetUrls";
import { type Pixels, renditionPixels } from "../../src/images/renditions";
import { redirectTarget } from "../../src/images/assetUrls";
import { logosInIdOrder } from "../../src/catalogue/logos";
import { openPlatform, projectRoot } from "../../tools/platform";
import { createKey } from "../../src/keys/apiKeys";
import { startFakeWebsites } from "../fakes/websites";
import { discPixels, noisePixels, pngOf } from "../fixtures/images";
import { bundleWorker, seededState, workerdCpuSeconds, workerOptions } from "../helpers/workerd";

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const log = (message: string) => process.stderr.write(`${message}\n`);

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  cpuMicros?: number;
  errors: number;
}

async function load(url: string, expectStatus: number): Promise<Figures> {
  const cpuBefore = workerdCpuSeconds();
  let unexpected = 0;
  const statuses = new Map<number, number>();
  // Every response's time, as autocannon measures it (hrtime, in ms): its own percentiles come
  // from a histogram of whole milliseconds, too coarse for a p99 of 2 or 3 ms.
  const latencies: number[] = [];
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    // Count statuses other than the expected one as errors (2xx-only by default).
    expectBody: undefined,
    setupClient: (client) => {
      client.on("response", (status: number, _bytes: number, responseTime: number) => {
        latencies.push(responseTime);
        if (status !== expectStatus) unexpected++;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      });
    },
  } as autocannon.Options);
  const cpu = workerdCpuSeconds() - cpuBefore;
  if (unexpected > 0 || result.errors > 0)
    log(
      `  ${url.replace(/token=[^&]+/, "token=…")}: statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  const requests = result.requests.total;
  return {
    rps: result.requests.average,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuMicros: requests > 0 ? (cpu / requests) * 1e6 : undefined,
    errors: unexpected + result.errors + result.timeouts,
  };
}

function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

/** sharp resizing `png` to `width`, as many at once as autocannon has connections to the Worker. */
async function sharpBaseline(png: Uint8Array, width: number): Promise<Figures> {
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        await sharp(png).resize({ width, withoutEnlargement: true }).png().toBuffer();
        latencies.push(performance.now() - started);
      }
    }),
  );
  return {
    rps: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors: 0,
  };
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), "logo-lookup-bench-"));
  const dist = join(projectRoot, ".wrangler", "bench", "dist");
  try {
    log("Bundling the Worker as for deployment…");
    bundleWorker(dist);

    log("Preparing a local catalogue…");
    const state = await seededState(work, /^(github|stripe)\.com$/);

    const platform = await openPlatform({ persistTo: state });
    let keys: { redirect: string; bytes: string };
    let masterKey: string;
    try {
      const account = await createAccount(platform.db, { email: "bench@example.com", password: "bench-password-123", plan: "enterprise" });
      if (!account.ok) throw new Error(account.error.message);
      const make = async () => {
        // Far from its limit, as a warm key is: the bench measures lookups, not refusals.
        const key = await createKey(platform.db, { accountId: account.value.id, type: "publishable", perMinute: 900_000 });
        if (!key.ok) throw new Error(key.error.message);
        return key.value.key;
      };
      keys = { redirect: await make(), bytes: await make() };
      masterKey = (await logosInIdOrder(platform.db, { limit: 1 }))[0]!.masterKey;
    } finally {
      await platform.dispose();
    }

    // Two company sites on loopback for the discovery rows: one with an icon, one without.
    const websites = await startFakeWebsites();
    const claim = async (routes: Record<string, unknown>) => {
      const { host } = (await (await fetch(`${websites.controlUrl}/claim`, { method: "POST" })).json()) as { host: string };
      await fetch(`${websites.controlUrl}/sites/${host}`, { method: "PUT", body: JSON.stringify({ routes }) });
      return host;
    };
    const iconPng = await sharp({ create: { width: 180, height: 180, channels: 4, background: "#1f6feb" } })
      .png()
      .toBuffer();
    const discoveredHost = await claim({
      "/": { type: "text/html", body: '<title>Bench Co</title><link rel="apple-touch-icon" href="/icon.png">' },
      "/icon.png": { type: "image/png", base64: iconPng.toString("base64") },
    });
    const emptyHost = await claim({ "/": { type: "text/html", body: "<title>Quiet Co</title>" } });
    // Three sites a round, each discovered once: a hostile one alone (its CPU), a two-colour
    // one of the same size alone (the baseline), and a hostile one under load.
    const noise = noisePng(1100).toString("base64");
    const plain = twoColourPng(1100).toString("base64");
    const iconSite = (base64: string) =>
      claim({
        "/": { type: "text/html", body: '<title>Home</title><link rel="icon" href="/icon.png">' },
        "/icon.png": { type: "image/png", base64 },
      });
    const hostileHosts: string[] = [];
    for (let i = 0; i < rounds; i++) hostileHosts.push(await iconSite(noise), await iconSite(plain), await iconSite(noise));

    log("Starting workerd…");
    // With a signing secret, as deployed: redirects to widths between the ladder's rungs are signed.
    const signingSecret = "bench-signing-secret-0123456789";
    const worker = (name: string, response: string, scriptPath?: string) => {
      const options: Record<string, unknown> = workerOptions(dist, name, {
        LOOKUP_RESPONSE: response,
        DISCOVERY_RESOLVE: websites.resolve,
        SIGNED_URL_SECRET: signingSecret,
      });
      if (scriptPath) {
        // The main module first, then the bundle it imports, named as it imports it.
        delete options.scriptPath;
        options.modulesRoot = dist;
        options.modules = [scriptPath, join(dist, "index.js")].map((path) => ({ type: "ESModule", path }));
      }
      // A queue has one consumer: the redirect worker's.
      if (name !== "lookup-redirect") delete options.queueConsumers;
      return options;
    };
    const direct = [{ host: "127.0.0.1", port: 0 }];
    const mf = new Miniflare({
      ...convertV4MiniflareOptions({
        workers: [
          worker("lookup-redirect", "redirect"),
          worker("lookup-bytes", "bytes"),
          worker("lookup-loop", "redirect", writeLoopModule(dist)),
          {
            name: "trivial",
            modules: true,
            compatibilityDate: "2026-11-01",
            script: `export default { fetch() { return ${TRIVIAL_302}; } };`,
            unsafeDirectSockets: direct,
          },
          {
            // The warm redirect's headers, its Location of the same form, with nothing to find.
            name: "trivial-headers",
            modules: true,
            compatibilityDate: "2026-11-01",
            script: `const location = ${JSON.stringify(redirectTarget({ cdn: "", base: "", secret: signingSecret }, { key: masterKey, format: "png", width: 128, page: "light" }))};
let remaining = 900000;
export default { fetch() {
  return new Response(null, { status: 302, headers: { Location: location, "Cache-Control": "public, max-age=86400", "X-Logo-Source": "catalogue", "Access-Control-Allow-Origin": "*", "X-RateLimit-Remaining": String(--remaining), "X-RateLimit-Reset": String(Math.ceil(Date.now() / 60000) * 60), "X-Request-Id": "0badc0de-" + remaining.toString(36) } });
} };`,
            unsafeDirectSockets: direct,
          },
        ],
      } as never),
      // Where wrangler's local tools (migrations, the importer) wrote the catalogue.
      resourcePersistencePath: join(state, "v3"),
      // The Worker writes its lines (an access-log line per request) as deployed, and pays for
      // them inside workerd; printing thousands a second here would load the machine's cores.
      handleStructuredLogs: () => {},
    });
    try {
      const [redirectBase, bytesBase, trivialBase, headersBase, loopBase] = await Promise.all(
        ["lookup-redirect", "lookup-bytes", "trivial", "trivial-headers", "lookup-loop"].map((name) => mf.unsafeGetDirectURL(name)),
      );
      const urls = {
        trivial: new URL("/github.com", trivialBase).href,
        headers: new URL("/github.com", headersBase).href,
        redirect: new URL(`/github.com?token=${keys.redirect}`, redirectBase).href,
        bytes: new URL(`/github.com?token=${keys.bytes}`, bytesBase).href,
        webp: new URL(`/github.com?token=${keys.bytes}&format=webp`, bytesBase).href,
        dpr2: new URL(`/github.com?token=${keys.bytes}&dpr=2`, bytesBase).href,
        assets: new URL(`/assets/${encodeAssetKey(masterKey)}?maxWidth=256`, redirectBase).href,
        // The warm-up below is the discovery itself; the load then measures the catalogue hits.
        discovered: new URL(`/${discoveredHost}?token=${keys.redirect}`, redirectBase).href,
        monogram: new URL(`/${emptyHost}?token=${keys.redirect}&fallback=monogram`, redirectBase).href,
      };
      for (const [name, url] of Object.entries(urls)) {
        const started = performance.now();
        const response = await fetch(url, { redirect: "manual" });
        // The warm-up of the discovery rows is a first lookup: the discovery itself.
        if (name === "discovered" || name === "monogram")
          log(`  first lookup, ${name}: ${(performance.now() - started).toFixed(0)} ms (${response.status})`);
        if (response.status >= 400) throw new Error(`warm-up of ${name} answered ${response.status}`);
        await response.arrayBuffer();
      }
      // The baseline stays honest only while it sends what the redirect sends.
      const answer = async (url: string) => {
        const { headers } = await fetch(url, { redirect: "manual" });
        return `${[...headers.keys()].sort().join(", ")}; Location: ${headers.get("location")}`;
      };
      const [sent, mimicked] = await Promise.all([answer(urls.redirect), answer(urls.headers)]);
      if (sent !== mimicked) throw new Error(`the seven-header baseline sends ${mimicked}, the redirect ${sent}`);
      const png = new Uint8Array(await (await fetch(new URL(`/assets/${encodeAssetKey(masterKey)}`, redirectBase))).arrayBuffer());

      log(`Measuring: ${rounds} rounds of ${seconds} s per scenario, ${connections} connections…`);
      const samples: Record<Scenario, Figures[]> = {
        trivial: [],
        headers: [],
        redirect: [],
        bytes: [],
        webp: [],
        dpr2: [],
        assets: [],
        sharp: [],
        discovered: [],
        monogram: [],
      };
      // The redirect and its two baselines run back to back, the order reversed every other
      // round, so that a machine drifting within a round favours neither side of their ratios.
      const hotPath = ["trivial", "headers", "redirect"] as const;
      for (let round = 0; round < rounds; round++) {
        for (const name of inTurn(hotPath, round)) samples[name].push(await load(urls[name], 302));
        samples.bytes.push(await load(urls.bytes, 200));
        samples.webp.push(await load(urls.webp, 200));
        samples.dpr2.push(await load(urls.dpr2, 200));
        samples.assets.push(await load(urls.assets, 200));
        samples.sharp.push(await sharpBaseline(png, 256));
        samples.discovered.push(await load(urls.discovered, 302));
        samples.monogram.push(await load(urls.monogram, 200));
      }
      log(`Measuring the warm redirect inside its isolate: ${rounds} rounds of ${LOOP_CALLS.toLocaleString("en")} calls…`);
      const isolate = await isolateLoops(new URL("/", loopBase), new URL(`/github.com?token=${keys.redirect}`, loopBase).href);
      log(`Measuring the hostile icon's discovery: ${rounds} rounds, alone and beside ${seconds} s of catalogued lookups…`);
      const hostile = await hostileRounds(
        hostileHosts,
        (host) => new URL(`/${host}?token=${keys.redirect}`, redirectBase).href,
        urls.redirect,
      );
      log(`Measuring the hostile icon's analysis in Node: ${rounds} rounds…`);
      report(samples, isolate, hostile, analysisRounds(rounds));
    } finally {
      await mf.dispose();
    }
  } finally {
    if (!process.env.BENCH_KEEP) rmSync(work, { recursive: true, force: true });
  }
}

/** The trivial Worker's answer, as JavaScript: a fixed 302 with two headers. */
const TRIVIAL_302 = `new Response(null, { status: 302, headers: { Location: "https://cdn.example.com/logos/github.com.png", "Cache-Control": "public, max-age=86400" } })`;

// workerd's CPU clock ticks every 10 ms: at 50,000 calls a tick is under 2 % of a round.
const LOOP_CALLS = 50_000;

/**
 * A module beside the bundle whose fetch handler, asked to, calls the Worker's own fetch
 * handler (or the trivial Worker's) `calls` times on one lookup request and answers how many
 * of those were redirects: workerd's CPU over that request is the handler's own, without
 * the HTTP work around each answer.
 */
function writeLoopModule(dist: string): string {
  const path = join(dist, "loop.js");
  writeFileSync(
    path,
    `import worker from "./index.js";
export * from "./index.js";
const trivial = () => ${TRIVIAL_302};
export default {
  async fetch(request, env, ctx) {
    const asked = new URL(request.url);
    const calls = Number(asked.searchParams.get("calls"));
    if (!calls) return worker.fetch(request, env, ctx);
    const lookup = new Request(asked.searchParams.get("lookup"));
    const handler = asked.searchParams.get("handler") === "trivial" ? trivial : () => worker.fetch(lookup, env, ctx);
    let redirects = 0;
    for (let i = 0; i < calls; i++) {
      // Awaited only when it is a promise (a lease renewal), as workerd itself would.
      let answer = handler();
      if (answer instanceof Promise) answer = await answer;
      if (answer.status === 302) redirects++;
    }
    return new Response(String(redirects));
  },
};
`,
  );
  return path;
}

const noisePng = (edge: number) => Buffer.from(pngOf(noisePixels(edge)));
const twoColourPng = (edge: number) => Buffer.from(pngOf(discPixels(edge)));

interface AnalysisFigures {
  /** CPU ms of the first analysis of a noise icon in this process: code not yet compiled, caches empty. */
  firstMs: number;
  /** CPU ms of each later one (fresh noise each), and of the two-colour icon's. */
  noiseMs: number[];
  plainMs: number[];
}

/**
 * The hostile icon's analysis alone, in Node: the code a Durable Object runs for it once the
 * icon is decoded (src/discovery/image.ts, discoveredMaster, then src/images/renditions.ts,
 * renditionPixels), timed by this process's CPU, compiler threads included. Nothing before it in
 * this process has run that code, so the first is as cold as a fresh isolate's.
 */
function analysisRounds(rounds: number): AnalysisFigures {
  const cpuMs = (pixels: Pixels) => {
    const start = process.cpuUsage();
    renditionPixels(discoveredMaster(pixels));
    const { user, system } = process.cpuUsage(start);
    return (user + system) / 1000;
  };
  const figures: AnalysisFigures = { firstMs: cpuMs(noisePixels(1100)), noiseMs: [], plainMs: [] };
  for (let i = 0; i < rounds; i++) {
    figures.noiseMs.push(cpuMs(noisePixels(1100)));
    figures.plainMs.push(cpuMs(discPixels(1100)));
  }
  return figures;
}

interface HostileFigures {
  /** workerd's CPU for one discovery of the hostile site, alone (ms). */
  cpuMs: number[];
  /** workerd's CPU for one discovery of a two-colour icon of the same size, alone (ms). */
  plainCpuMs: number[];
  /** Wall time from the first lookup to the logo served (ms), alone. */
  wallMs: number[];
  /** p99 of warm catalogued redirects alone, and while a hostile discovery runs (ms). */
  aloneP99: number[];
  duringP99: number[];
}

/** Looks `url` up until the discovered logo is served (302), at most a minute; the time it took. */
async function discovered(url: string): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < 60_000) {
    const response = await fetch(url, { redirect: "manual" });
    await response.arrayBuffer();
    if (response.status === 302) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url.replace(/token=[^&]+/, "token=…")} was not discovered within a minute`);
}

/**
 * Per round: a hostile site discovered alone, workerd's CPU over it; the catalogued redirect
 * loaded alone; and loaded again while another hostile site is discovered (started just
 * before), the order of the two loads reversed every other round.
 */
async function hostileRounds(hosts: string[], lookup: (host: string) => string, catalogued: string): Promise<HostileFigures> {
  const figures: HostileFigures = { cpuMs: [], plainCpuMs: [], wallMs: [], aloneP99: [], duringP99: [] };
  for (let round = 0; round < rounds; round++) {
    for (const icon of inTurn(["noise", "plain"] as const, round)) {
      const cpuBefore = workerdCpuSeconds();
      const wall = await discovered(lookup(hosts[3 * round + (icon === "noise" ? 0 : 1)]!));
      const cpu = (workerdCpuSeconds() - cpuBefore) * 1000;
      if (icon === "noise") figures.wallMs.push(wall);
      (icon === "noise" ? figures.cpuMs : figures.plainCpuMs).push(cpu);
    }
    for (const phase of inTurn(["alone", "during"] as const, round)) {
      if (phase === "alone") {
        figures.aloneP99.push((await load(catalogued, 302)).p99);
        continue;
      }
      const discovery = discovered(lookup(hosts[3 * round + 2]!));
      figures.duringP99.push((await load(catalogued, 302)).p99);
      await discovery;
    }
  }
  return figures;
}

interface IsolateFigures {
  trivial: number[];
  redirect: number[];
}

/** Per call, in µs: the trivial handler and the warm redirect, in turn, `rounds` times. */
async function isolateLoops(base: URL, lookupUrl: string): Promise<IsolateFigures> {
  const loop = async (handler: keyof IsolateFigures, calls: number) => {
    const url = new URL(`/?calls=${calls}&handler=${handler}&lookup=${encodeURIComponent(lookupUrl)}`, base);
    const cpuBefore = workerdCpuSeconds();
    const redirects = Number(await (await fetch(url)).text());
    const micros = ((workerdCpuSeconds() - cpuBefore) / calls) * 1e6;
    if (redirects !== calls) throw new Error(`${handler} answered ${redirects} redirects of ${calls}`);
    return micros;
  };
  await loop("redirect", 1000);
  const figures: IsolateFigures = { trivial: [], redirect: [] };
  for (let round = 0; round < rounds; round++) {
    for (const handler of inTurn(["trivial", "redirect"] as const, round)) figures[handler].push(await loop(handler, LOOP_CALLS));
  }
  return figures;
}

type Scenario = "trivial" | "headers" | "redirect" | "bytes" | "webp" | "dpr2" | "assets" | "sharp" | "discovered" | "monogram";

/** The round with the median throughput. */
function median(runs: Figures[]): Figures {
  return [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
}

/** Median over rounds of a ratio taken within each round, so drift between rounds cancels. */
function pairedRatio(samples: Record<Scenario, Figures[]>, a: Scenario, b: Scenario): string {
  return pairedMedian(samples, (i) => samples[a][i]!.rps / samples[b][i]!.rps).toFixed(2);
}

function report(samples: Record<Scenario, Figures[]>, isolate: IsolateFigures, hostile: HostileFigures, analysis: AnalysisFigures) {
  const f = Object.fromEntries(Object.entries(samples).map(([name, runs]) => [name, median(runs)])) as Record<Scenario, Figures>;
  const row = (name: string, x: Figures) =>
    `${name.padEnd(44)} ${x.rps.toFixed(0).padStart(8)} ${x.p50.toFixed(2).padStart(7)} ${x.p99.toFixed(2).padStart(7)} ${
      x.cpuMicros === undefined ? "      –" : x.cpuMicros.toFixed(0).padStart(7)
    } ${String(x.errors).padStart(6)}`;
  console.log(
    `\n${"scenario".padEnd(44)} ${"req/s".padStart(8)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"CPU µs".padStart(7)} ${"errors".padStart(6)}`,
  );
  console.log(row("trivial Worker, fixed 302 (ceiling)", f.trivial));
  console.log(row("trivial Worker, the redirect's seven headers", f.headers));
  console.log(row("GET /{domain}, redirect, warm cache", f.redirect));
  console.log(row("GET /{domain}, bytes, size 128", f.bytes));
  console.log(row("GET /{domain}, bytes, size 128, format=webp", f.webp));
  console.log(row("GET /{domain}, bytes, size 128, dpr=2", f.dpr2));
  console.log(row("GET /assets/{key}?maxWidth=256", f.assets));
  console.log(row("sharp resize of the same PNG to 256 (Node)", f.sharp));
  console.log(row("GET /{domain}, redirect, discovered logo", f.discovered));
  console.log(row("GET /{domain}?fallback=monogram, known miss", f.monogram));
  console.log(`\nratios of throughput (median of per-round ratios over ${samples.trivial.length} rounds)`);
  console.log(`  redirect / trivial      ${pairedRatio(samples, "redirect", "trivial")}   (target ≥ 0.85)`);
  console.log(`  seven headers / trivial ${pairedRatio(samples, "headers", "trivial")}   (the answer's size alone)`);
  console.log(`  redirect / seven headers${pairedRatio(samples, "redirect", "headers")}   (the work of finding it)`);
  console.log(`  bytes / trivial         ${pairedRatio(samples, "bytes", "trivial")}`);
  console.log(`  webp bytes / png bytes  ${pairedRatio(samples, "webp", "bytes")}`);
  console.log(`  dpr=2 bytes / png bytes ${pairedRatio(samples, "dpr2", "bytes")}`);
  console.log(`  assets / sharp          ${pairedRatio(samples, "assets", "sharp")}`);
  console.log(`  discovered / trivial    ${pairedRatio(samples, "discovered", "trivial")}`);
  console.log(`  monogram / trivial      ${pairedRatio(samples, "monogram", "trivial")}`);
  console.log(
    `  redirect p99 / trivial p99 ${pairedMedian(samples, (i) => samples.redirect[i]!.p99 / samples.trivial[i]!.p99).toFixed(2)}   (target ≤ 1.5)`,
  );
  const cpuAbove = pairedMedian(
    samples,
    (i) => (samples.redirect[i]!.cpuMicros ?? Number.NaN) - (samples.trivial[i]!.cpuMicros ?? Number.NaN),
  );
  const cpuAboveHeaders = pairedMedian(
    samples,
    (i) => (samples.redirect[i]!.cpuMicros ?? Number.NaN) - (samples.headers[i]!.cpuMicros ?? Number.NaN),
  );
  console.log(
    `\nworkerd CPU per redirect request above the trivial Worker's: ${cpuAbove.toFixed(0)} µs (median of per-round differences; the Worker and its HTTP work)`,
  );
  console.log(`  of which above the trivial Worker with the same seven headers: ${cpuAboveHeaders.toFixed(0)} µs`);
  const above = middle(isolate.redirect.map((micros, i) => micros - isolate.trivial[i]!));
  console.log(
    `\nWorker CPU inside the isolate, per call of its fetch handler (${LOOP_CALLS.toLocaleString("en")} calls a round, medians of ${isolate.trivial.length} rounds)`,
  );
  console.log(`  trivial Worker's handler   ${middle(isolate.trivial).toFixed(1)} µs`);
  console.log(`  warm redirect              ${middle(isolate.redirect).toFixed(1)} µs`);
  console.log(`  above the trivial Worker   ${above.toFixed(1)} µs   (median of per-round differences; target ≤ 10)`);
  console.log(
    `  rounds: trivial ${isolate.trivial.map((x) => x.toFixed(1)).join(", ")}; redirect ${isolate.redirect.map((x) => x.toFixed(1)).join(", ")}`,
  );
  const p99Ratio = middle(hostile.duringP99.map((during, i) => during / hostile.aloneP99[i]!));
  console.log(`
hostile icon: discovering a site whose icon is a 1,100 px PNG of random colours (medians of ${hostile.cpuMs.length} rounds)`);
  console.log(
    `  workerd CPU for the whole discovery   ${middle(hostile.cpuMs).toFixed(0)} ms   (fetch, decode, analysis, renditions, writes)`,
  );
  console.log(`  the same, a two-colour 1,100 px PNG   ${middle(hostile.plainCpuMs).toFixed(0)} ms`);
  const colourCost = middle(hostile.cpuMs.map((cpu, i) => cpu / hostile.plainCpuMs[i]!));
  console.log(`  random colours / two colours          ${colourCost.toFixed(2)}   (median of per-round ratios: what the colours cost)`);
  console.log(`  first lookup to logo served           ${middle(hostile.wallMs).toFixed(0)} ms`);
  console.log(
    `  catalogued redirect p99 alone         ${middle(hostile.aloneP99).toFixed(2)} ms; while the discovery runs ${middle(hostile.duringP99).toFixed(2)} ms`,
  );
  console.log(`  p99 during / alone                    ${p99Ratio.toFixed(2)}   (median of per-round ratios; target ≤ 2)`);
  console.log(`  analysis alone (Node CPU), first      ${analysis.firstMs.toFixed(0)} ms   (cold: a fresh isolate's; target ≤ 200)`);
  console.log(
    `  analysis alone, later ones            ${middle(analysis.noiseMs).toFixed(0)} ms; a two-colour icon's ${middle(analysis.plainMs).toFixed(0)} ms`,
  );
  console.log(
    `  rounds: CPU ${hostile.cpuMs.map((x) => x.toFixed(0)).join(", ")} ms, two colours ${hostile.plainCpuMs.map((x) => x.toFixed(0)).join(", ")} ms; p99 alone ${hostile.aloneP99.map((x) => x.toFixed(2)).join(", ")}; during ${hostile.duringP99.map((x) => x.toFixed(2)).join(", ")}`,
  );
}

/** The median over rounds of a figure taken within each round. */
function pairedMedian(samples: Record<Scenario, Figures[]>, ofRound: (round: number) => number): number {
  return middle(samples.trivial.map((_, i) => ofRound(i)));
}

/** The middle value (the upper one of an even count). */
function middle(values: number[]): number {
  return [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
}

/** `order` in even rounds and reversed in odd ones, so that a steady drift favours neither end. */
function inTurn<T>(order: readonly T[], round: number): readonly T[] {
  return round % 2 === 0 ? order : [...order].reverse();
}

await main();
