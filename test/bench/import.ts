/**
 * npm run bench:import: the bulk import rate, in logos a second, on a generated corpus.
 *
 *   BENCH_IMPORT_LOGOS   logos per corpus (default 8000 PNG, 2000 SVG)
 *   BENCH_IMPORT_KINDS   png, svg or both (default png,svg)
 *   BENCH_IMPORT_ROUNDS  imports of each corpus, each into fresh local storage (default 1)
 *
 * For each kind, builds (once, cached under .wrangler/bench-import/) a corpus of that many
 * logos (./importCorpus.ts), then imports it with the real importer into fresh local D1 and
 * R2 (migrations applied by wrangler), exactly as `npm run import` does: conversion on every
 * core, batched writes through the importer's worker in workerd. Prints, per round, the import
 * rate (rows over the import's own time, after the writer has started), the rate over its second
 * half (a fresh workerd's R2 runs at about half speed over its first few thousand puts, until
 * V8 has optimised it; a load of millions runs at the second half's rate), and the CPU spent per
 * logo by the importer (main thread and conversion threads) and by workerd. Then, per kind,
 * the conversion alone: the same images through the same pool of conversion threads with
 * nothing written, the ceiling the import would reach if storing cost nothing; and the objects
 * that conversion made put alone into a fresh local R2, workerd's CPU for the storing the
 * import cannot skip. Then, per kind, the importer's end of a remote load: the same import with
 * its objects sent through R2's S3 API, as `--remote` sends them, to a stand-in for the bucket
 * on loopback (./s3StandIn.ts, a process of its own that checks each PUT's signature and keeps
 * nothing), rows still to local D1: the rate this machine sustains when the store is not on its
 * cores, as a deployment's R2 is not. Last, the CPU a logo that the target rate leaves on this
 * machine's cores.
 */
import { type ChildProcess, fork, spawnSync } from "node:child_process";
import { once } from "node:events";
import { availableParallelism } from "node:os";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { type PreparedImage, PUTS_AT_ONCE } from "../../src/catalogue/importLogo";
import { startConvertPool } from "../../tools/importer/convertPool";
import { importManifest } from "../../tools/importer/importManifest";
import { readManifest } from "../../tools/importer/manifest";
import { startImportWriter } from "../../tools/importer/writer";
import { projectRoot } from "../../tools/platform";
import type { Result } from "../../src/lib/errors";
import { FAKE_S3 } from "../fakes/r2S3Api";
import { workerdCpuSeconds } from "../helpers/workerd";
import { buildCorpus, type CorpusKind } from "./importCorpus";

/** The PNG corpus is large enough for the writer to reach its steady rate; an SVG import is held by its conversion from the start. */
const logosOf = (kind: CorpusKind) => Number(process.env.BENCH_IMPORT_LOGOS ?? (kind === "png" ? 8000 : 2000));
const kinds = (process.env.BENCH_IMPORT_KINDS ?? "png,svg").split(",").map((k) => k.trim()) as CorpusKind[];
const rounds = Number(process.env.BENCH_IMPORT_ROUNDS ?? 1);
/** The rate the bulk importer aims at for PNG logos. */
const TARGET_RATE = 150;
const root = join(projectRoot, ".wrangler", "bench-import");
const wrangler = join(projectRoot, "node_modules", ".bin", "wrangler");
const log = (message: string) => process.stderr.write(`${message}\n`);

const ownCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

interface Row {
  kind: CorpusKind;
  round: number;
  logos: number;
  meanKiB: number;
  seconds: number;
  rate: number;
  /** Rows a second from the first batch written past half the corpus to the end. */
  secondHalfRate: number;
  importerCpu: number;
  workerdCpu: number;
}

/** Logos a second through the conversion pool alone, every image read into memory first; and what it made. */
async function conversionRate(dir: string, manifest: string): Promise<{ threads: number; rate: number; converted: PreparedImage[] }> {
  const images: Uint8Array[] = [];
  for await (const parsed of readManifest(manifest)) {
    if (!parsed.ok) throw new Error(`bench manifest, line ${parsed.line}: ${parsed.error}`);
    images.push(new Uint8Array(readFileSync(join(dir, parsed.row.image))));
  }
  const pool = startConvertPool();
  try {
    const started = performance.now();
    const converted = await Promise.all(images.map((bytes) => pool.convert(bytes)));
    const seconds = (performance.now() - started) / 1000;
    return { threads: pool.threads, rate: Math.round(images.length / seconds), converted: converted.map((result) => unwrap(result)) };
  } finally {
    await pool.close();
  }
}

function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`a bench image failed to convert: ${result.error.message}`);
  return result.value;
}

/**
 * workerd's CPU a logo for putting, alone, the objects the import stores for the logos
 * converted (every file of each, its vector and its original, as the write path puts them:
 * PUTS_AT_ONCE at once, with metadata) into a fresh local R2: the part of the import's writer that is
 * Miniflare's R2, measured beside it.
 */
async function storingAlone(state: string, converted: PreparedImage[]): Promise<{ objects: number; workerdCpu: number }> {
  const objects = converted.map((image) =>
    [...Object.values(image.files), image.vector, image.original].filter((bytes): bytes is Uint8Array => Boolean(bytes)),
  );
  rmSync(state, { recursive: true, force: true });
  const mf = new Miniflare({
    ...convertV4MiniflareOptions({
      workers: [
        {
          name: "puts",
          modules: true,
          compatibilityDate: "2026-11-01",
          r2Buckets: { LOGOS: { id: "bench-puts" } },
          script: `export default { async fetch(request, env) {
            const body = new Uint8Array(await request.arrayBuffer());
            const sizes = JSON.parse(request.headers.get("x-sizes"));
            const batch = request.headers.get("x-batch");
            let offset = 0;
            const puts = sizes.map((size) => body.subarray(offset, (offset += size)));
            const options = { httpMetadata: { contentType: "image/png" }, customMetadata: { width: "512", height: "256" } };
            let next = 0;
            await Promise.all(Array.from({ length: ${PUTS_AT_ONCE} }, async () => {
              while (next < puts.length) { const index = next++; await env.LOGOS.put("logos/bench/" + batch + "/" + index, puts[index], options); }
            }));
            return new Response("stored");
          } };`,
        },
      ],
    } as never),
    resourcePersistencePath: state,
  });
  try {
    await mf.ready;
    const before = workerdCpuSeconds();
    for (let at = 0; at < objects.length; at += 250) {
      const batch = objects.slice(at, at + 250).flat();
      const response = await mf.dispatchFetch("http://puts/", {
        method: "POST",
        headers: { "x-sizes": JSON.stringify(batch.map((bytes) => bytes.byteLength)), "x-batch": String(at) },
        body: Buffer.concat(batch),
      });
      if (!response.ok) throw new Error(`bench puts answered ${response.status}`);
      await response.text();
    }
    const workerdCpu = ((workerdCpuSeconds() - before) * 1000) / objects.length;
    return { objects: objects.flat().length / objects.length, workerdCpu: Math.round(workerdCpu * 10) / 10 };
  } finally {
    await mf.dispose();
    rmSync(state, { recursive: true, force: true });
  }
}

/** A fresh local state directory with the migrations applied by wrangler, as an operator would. */
function freshState(state: string): void {
  rmSync(state, { recursive: true, force: true });
  mkdirSync(state, { recursive: true });
  const migrated = spawnSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], {
    cwd: projectRoot,
    encoding: "utf8",
    env: { ...process.env, CI: "true" },
  });
  if (migrated.status !== 0) throw new Error(`migrations failed: ${migrated.stderr}`);
}

interface StandInReport {
  cpuMs: number;
  puts: number;
  bytes: number;
}

/** The bucket's stand-in (./s3StandIn.ts) in its own process, and a way to ask what it spent and received. */
async function startStandIn(): Promise<{ url: string; report: () => Promise<StandInReport>; stop: () => void }> {
  const child: ChildProcess = fork(join(projectRoot, "test/bench/s3StandIn.ts"), [], { cwd: projectRoot, execArgv: ["--import", "tsx"] });
  const [{ url }] = (await once(child, "message")) as [{ url: string }];
  return {
    url,
    report: async () => {
      child.send("report");
      return ((await once(child, "message")) as [StandInReport])[0];
    },
    stop: () => child.disconnect(),
  };
}

/** One import of the corpus into fresh local storage, objects to the local R2 or, given `s3`, through the S3 API. */
async function importRound(
  kind: CorpusKind,
  round: number,
  corpus: { manifest: string; meanBytes: number; logos: number },
  standIn?: Awaited<ReturnType<typeof startStandIn>>,
): Promise<Row & { standIn?: StandInReport }> {
  const state = join(root, `state-${kind}${standIn ? "-s3" : ""}`);
  freshState(state);
  const s3 = standIn && {
    endpoint: standIn.url,
    bucket: FAKE_S3.bucket,
    accessKeyId: FAKE_S3.accessKeyId,
    secretAccessKey: FAKE_S3.secretAccessKey,
  };
  const writer = await startImportWriter({ persistTo: state, s3 });
  try {
    const before = standIn && (await standIn.report());
    const cpu0 = ownCpuMs();
    const workerd0 = workerdCpuSeconds() * 1000;
    let workerdAtEnd = 0;
    let half: { rows: number; at: number } | undefined;
    const summary = await importManifest(corpus.manifest, {
      persistTo: state,
      restart: true,
      plainProgress: true,
      writer,
      label: `${kind}${standIn ? " through S3" : ""} round ${round}`,
      // Read workerd's CPU before the writer (and its workerd) stops.
      onFinished: () => (workerdAtEnd = workerdCpuSeconds() * 1000),
      onProgress: ({ rows }) => {
        if (!half && rows >= corpus.logos / 2) half = { rows, at: Date.now() };
      },
    });
    const ended = Date.now();
    if (summary.failed > 0) throw new Error(`${summary.failed} rows failed: ${JSON.stringify(summary.failures.slice(0, 3))}`);
    const after = standIn && (await standIn.report());
    const perLogo = (ms: number) => Math.round((ms / summary.rows) * 10) / 10;
    return {
      kind,
      round,
      logos: summary.rows,
      meanKiB: Math.round(corpus.meanBytes / 102.4) / 10,
      seconds: summary.seconds,
      rate: summary.rowsPerSecond,
      secondHalfRate:
        half && ended > half.at ? Math.round(((summary.rows - half.rows) / ((ended - half.at) / 1000)) * 10) / 10 : summary.rowsPerSecond,
      importerCpu: perLogo(ownCpuMs() - cpu0),
      workerdCpu: perLogo(workerdAtEnd - workerd0),
      ...(before && after
        ? {
            standIn: {
              cpuMs: perLogo(after.cpuMs - before.cpuMs),
              puts: (after.puts - before.puts) / summary.rows,
              bytes: (after.bytes - before.bytes) / summary.rows,
            },
          }
        : {}),
    };
  } finally {
    await writer.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

const results: Row[] = [];
const throughS3: Array<Row & { standIn?: StandInReport }> = [];
const conversion: Array<{ kind: CorpusKind; threads: number; rate: number; objects: number; storingCpu: number }> = [];
for (const kind of kinds) {
  log(`Building the ${kind} corpus of ${logosOf(kind)} logos (cached)…`);
  const corpus = await buildCorpus(root, kind, logosOf(kind));
  for (let round = 1; round <= rounds; round++) results.push(await importRound(kind, round, corpus));
  log(`Converting the ${kind} corpus alone, nothing written…`);
  const { threads, rate, converted } = await conversionRate(corpus.dir, corpus.manifest);
  log(`Putting the ${kind} corpus's objects into local R2 alone…`);
  const storing = await storingAlone(join(root, `state-${kind}-puts`), converted);
  conversion.push({ kind, threads, rate, objects: storing.objects, storingCpu: storing.workerdCpu });
  log(`Importing the ${kind} corpus with its objects through the S3 API to a stand-in on loopback…`);
  const standIn = await startStandIn();
  try {
    for (let round = 1; round <= rounds; round++) throughS3.push(await importRound(kind, round, corpus, standIn));
  } finally {
    standIn.stop();
  }
}

const roundOf = (r: Row) => `${r.kind}${rounds > 1 ? ` (round ${r.round})` : ""}`;
console.log(`\nBulk import on ${availableParallelism()} cores (local D1 and R2 under Miniflare)\n`);
console.log("| corpus | logos | mean file | seconds | logos/s | second half, logos/s | importer CPU ms/logo | workerd CPU ms/logo |");
console.log("|---|---|---|---|---|---|---|---|");
for (const r of results)
  console.log(
    `| ${roundOf(r)} | ${r.logos} | ${r.meanKiB} KiB | ${r.seconds} | ${r.rate} | ${r.secondHalfRate} | ${r.importerCpu} | ${r.workerdCpu} |`,
  );
console.log("\n| corpus | conversion threads | conversion alone, logos/s | objects a logo | putting them alone, workerd CPU ms/logo |");
console.log("|---|---|---|---|---|");
for (const c of conversion) console.log(`| ${c.kind} | ${c.threads} | ${c.rate} | ${c.objects.toFixed(1)} | ${c.storingCpu} |`);
console.log(
  `\nThe importer's end of a remote load on ${availableParallelism()} cores: objects through the S3 API to a stand-in on loopback (its own process), rows to local D1\n`,
);
console.log(
  "| corpus | logos | seconds | logos/s | second half, logos/s | importer CPU ms/logo | workerd CPU ms/logo | stand-in CPU ms/logo | PUTs a logo | KiB sent a logo |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const r of throughS3) {
  const standIn = r.standIn!;
  console.log(
    `| ${roundOf(r)} | ${r.logos} | ${r.seconds} | ${r.rate} | ${r.secondHalfRate} | ${r.importerCpu} | ${r.workerdCpu} | ${standIn.cpuMs} | ${standIn.puts.toFixed(1)} | ${(standIn.bytes / 1024).toFixed(1)} |`,
  );
}
// What 150 logos a second on every core leaves a logo, importer and workerd together.
console.log(
  `\n${TARGET_RATE} logos a second on ${availableParallelism()} cores leaves ${((availableParallelism() * 1000) / TARGET_RATE).toFixed(1)} ms of CPU a logo, importer and workerd together.`,
);
