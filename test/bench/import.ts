/**
 * npm run bench:import: the bulk import rate, in logos a second, on a generated corpus.
 *
 *   BENCH_IMPORT_LOGOS   logos per corpus (default 2000)
 *   BENCH_IMPORT_KINDS   png, svg or both (default png,svg)
 *   BENCH_IMPORT_ROUNDS  imports of each corpus, each into fresh local storage (default 1)
 *
 * For each kind, builds (once, cached under .wrangler/bench-import/) a corpus of that many
 * logos (./importCorpus.ts), then imports it with the real importer into fresh local D1 and
 * R2 (migrations applied by wrangler), exactly as `npm run import` does: conversion on every
 * core, batched writes through the importer's worker in workerd. Prints, per round, the import
 * rate (rows over the import's own time, after the writer has started) and the CPU spent per
 * logo by the importer (main thread and conversion threads) and by workerd. Then, per kind,
 * the conversion alone: the same images through the same pool of conversion threads with
 * nothing written, the ceiling the import would reach if storing cost nothing.
 */
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startConvertPool } from "../../src/cli/importer/convertPool";
import { importManifest } from "../../src/cli/importer/importManifest";
import { readManifest } from "../../src/cli/importer/manifest";
import { projectRoot } from "../../src/cli/platform";
import { workerdCpuSeconds } from "../helpers/workerd";
import { buildCorpus, type CorpusKind } from "./importCorpus";

const logos = Number(process.env.BENCH_IMPORT_LOGOS ?? 2000);
const kinds = (process.env.BENCH_IMPORT_KINDS ?? "png,svg").split(",").map((k) => k.trim()) as CorpusKind[];
const rounds = Number(process.env.BENCH_IMPORT_ROUNDS ?? 1);
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
  importerCpu: number;
  workerdCpu: number;
}

/** Logos a second through the conversion pool alone, every image read into memory first. */
async function conversionRate(dir: string, manifest: string): Promise<{ threads: number; rate: number }> {
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
    if (converted.some((result) => !result.ok)) throw new Error("a bench image failed to convert");
    return { threads: pool.threads, rate: Math.round(images.length / seconds) };
  } finally {
    await pool.close();
  }
}

const results: Row[] = [];
const conversion: Array<{ kind: CorpusKind; threads: number; rate: number }> = [];
for (const kind of kinds) {
  log(`Building the ${kind} corpus of ${logos} logos (cached)…`);
  const corpus = await buildCorpus(root, kind, logos);
  for (let round = 1; round <= rounds; round++) {
    const state = join(root, `state-${kind}`);
    rmSync(state, { recursive: true, force: true });
    mkdirSync(state, { recursive: true });
    const migrated = spawnSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], {
      cwd: projectRoot,
      encoding: "utf8",
      env: { ...process.env, CI: "true" },
    });
    if (migrated.status !== 0) throw new Error(`migrations failed: ${migrated.stderr}`);

    const cpu0 = ownCpuMs();
    const workerd0 = workerdCpuSeconds() * 1000;
    let workerdAtEnd = 0;
    const summary = await importManifest(corpus.manifest, {
      persistTo: state,
      restart: true,
      plainProgress: true,
      label: `${kind} round ${round}`,
      // Read workerd's CPU before the writer (and its workerd) stops.
      onFinished: () => (workerdAtEnd = workerdCpuSeconds() * 1000),
    });
    if (summary.failed > 0) throw new Error(`${summary.failed} rows failed: ${JSON.stringify(summary.failures.slice(0, 3))}`);
    results.push({
      kind,
      round,
      logos: summary.rows,
      meanKiB: Math.round(corpus.meanBytes / 102.4) / 10,
      seconds: summary.seconds,
      rate: summary.rowsPerSecond,
      importerCpu: Math.round(((ownCpuMs() - cpu0) / summary.rows) * 10) / 10,
      workerdCpu: Math.round(((workerdAtEnd - workerd0) / summary.rows) * 10) / 10,
    });
    rmSync(state, { recursive: true, force: true });
  }
  log(`Converting the ${kind} corpus alone, nothing written…`);
  conversion.push({ kind, ...(await conversionRate(corpus.dir, corpus.manifest)) });
}

console.log(`\nBulk import on ${availableParallelism()} cores (local D1 and R2 under Miniflare)\n`);
console.log("| corpus | logos | mean file | seconds | logos/s | importer CPU ms/logo | workerd CPU ms/logo |");
console.log("|---|---|---|---|---|---|---|");
for (const r of results) {
  console.log(`| ${r.kind}${rounds > 1 ? ` (round ${r.round})` : ""} | ${r.logos} | ${r.meanKiB} KiB | ${r.seconds} | ${r.rate} | ${r.importerCpu} | ${r.workerdCpu} |`);
}
console.log("\n| corpus | conversion threads | conversion alone, logos/s |");
console.log("|---|---|---|");
for (const c of conversion) console.log(`| ${c.kind} | ${c.threads} | ${c.rate} |`);
