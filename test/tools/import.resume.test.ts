import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { companies } from "../../schema";
import { logosInIdOrder } from "../../src/catalogue/logos";
import { checkpointFor } from "../../tools/importer/checkpoint";
import { importCommand } from "../../tools/importer/command";
import { type ConvertPool, startConvertPool } from "../../tools/importer/convertPool";
import { type ImportWriter, startImportWriter } from "../../tools/importer/writer";
import { flatPngManifest, freshState, inProcess, npmScript, openSharedPlatform, root } from "./helpers";
import { writtenObjectKeys } from "../helpers/objects";

/** A bulk load killed part way (SIGKILL: no chance to tidy up) picks up where it stopped. */
const ROWS = 60;
let state: { dir: string; cleanup: () => void };
let manifest: string;
let platform: Awaited<ReturnType<typeof openSharedPlatform>>;
let writer: ImportWriter;
let pool: ConvertPool;

beforeAll(async () => {
  state = await freshState();
  manifest = await flatPngManifest(join(state.dir, "bulk"), ROWS, (i) => ({ name: `Company ${i}`, domain: `company-${i}.com` }));
  platform = await openSharedPlatform(state.dir);
});
afterAll(async () => {
  await Promise.all([platform?.dispose(), writer?.stop(), pool?.close()]);
  state.cleanup();
});

/** Starts `npm run import` as a process and kills it, with everything it started, once a few batches are in. */
async function interruptedImport(): Promise<number> {
  const checkpoint = checkpointFor(manifest, { persistTo: state.dir });
  const [command, ...scriptArgs] = npmScript("import");
  const child = spawn(command, [...scriptArgs, manifest, "--batch-size", "1", "--persist-to", state.dir], {
    cwd: root,
    detached: true,
    stdio: "ignore",
    env: { ...process.env, CI: "true" },
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  let line = 0;
  while (line < 5) {
    if (child.exitCode !== null) throw new Error("the import finished before it could be interrupted");
    line = checkpoint.read()?.line ?? 0;
    await new Promise((r) => setTimeout(r, 10));
  }
  process.kill(-child.pid!, "SIGKILL");
  await exited;
  return checkpoint.read()!.line;
}

describe("an interrupted bulk load", () => {
  it("resumes after the last committed batch and ends with the whole manifest, nothing orphaned", async () => {
    const stoppedAfter = await interruptedImport();
    const written = (await logosInIdOrder(platform.db)).length;
    expect(written).toBeGreaterThanOrEqual(stoppedAfter);
    expect(written).toBeLessThan(ROWS);

    [writer, pool] = [await startImportWriter({ persistTo: state.dir }), startConvertPool()];
    const resumed = await inProcess((io) =>
      importCommand([manifest, "--batch-size", "10", "--persist-to", state.dir], io, { writer, pool }),
    );
    expect(resumed.status).toBe(0);
    expect(resumed.stderr).toContain(`Resuming an interrupted import after line ${stoppedAfter}.`);
    const report = resumed.json();
    // The report covers the whole manifest: rows written before the interruption count as
    // created (by the first run) or unchanged (committed just before the kill, found again).
    expect(report).toMatchObject({ rows: ROWS, failed: 0, updated: 0, resumedAfterLine: stoppedAfter });
    expect(report.created + report.unchanged).toBe(ROWS);
    expect(report.created).toBeGreaterThanOrEqual(ROWS - (written - stoppedAfter));

    expect((await platform.db.select().from(companies).all()).map((c) => c.name).sort()).toEqual(
      Array.from({ length: ROWS }, (_, i) => `Company ${i}`).sort(),
    );
    const rows = await logosInIdOrder(platform.db);
    const referenced = rows.flatMap((l) => writtenObjectKeys(l)).sort();
    const stored = (await platform.bucket.list({ prefix: "logos/", limit: 1000 })).objects.map((o) => o.key).sort();
    expect(stored).toEqual(referenced);
    expect(existsSync(checkpointFor(manifest, { persistTo: state.dir }).path)).toBe(false);

    // A finished import leaves no checkpoint: the next one checks every row again.
    const again = await inProcess((io) => importCommand([manifest, "--persist-to", state.dir], io, { writer, pool }));
    expect(again.json()).toMatchObject({ rows: ROWS, created: 0, updated: 0, unchanged: ROWS, failed: 0 });
    expect(again.json().resumedAfterLine).toBeUndefined();
  });

  it("starts over when the manifest changed since the interruption", async () => {
    const checkpoint = checkpointFor(manifest, { persistTo: state.dir });
    checkpoint.write({ line: 30, report: { rows: 30, created: 30, updated: 0, unchanged: 0, failed: 0, failures: [] } });
    writeFileSync(manifest, `${readFileSync(manifest, "utf8")}\n`);
    const result = await inProcess((io) => importCommand([manifest, "--persist-to", state.dir], io, { writer, pool }));
    expect(result.stderr).not.toContain("Resuming");
    expect(result.json()).toMatchObject({ rows: ROWS, unchanged: ROWS, failed: 0 });
  });

  it("carries the failures over in a file of their own, only those of the batches the checkpoint covers", async () => {
    const report = (failures: Array<{ line: number; error: string }>, rows: number) => ({
      rows,
      created: rows - failures.length,
      updated: 0,
      unchanged: 0,
      failed: failures.length,
      failures,
    });
    const first = checkpointFor(manifest, { persistTo: state.dir });
    first.clear();
    const one = { line: 3, error: "image: not found" };
    const two = { line: 12, error: "image: not found" };
    first.write({ line: 10, report: report([one], 10) });
    first.write({ line: 20, report: report([one, two], 20) });
    // Each write adds its batch's failures: the checkpoint itself holds none.
    expect(readFileSync(first.path, "utf8")).not.toContain("image: not found");
    expect(checkpointFor(manifest, { persistTo: state.dir }).read()).toEqual({ line: 20, report: report([one, two], 20) });

    // A batch whose failures were added but whose checkpoint was never written (the process died between).
    const resumed = checkpointFor(manifest, { persistTo: state.dir });
    resumed.read();
    writeFileSync(
      first.path.replace(/\.json$/, ".failures.jsonl"),
      `${JSON.stringify(one)}\n${JSON.stringify(two)}\n${JSON.stringify({ line: 25, error: "x" })}\n`,
    );
    expect(checkpointFor(manifest, { persistTo: state.dir }).read()?.report.failures).toEqual([one, two]);

    // An import that starts over starts the failures over too.
    const fresh = checkpointFor(manifest, { persistTo: state.dir });
    fresh.write({ line: 10, report: report([], 10) });
    expect(checkpointFor(manifest, { persistTo: state.dir }).read()?.report.failures).toEqual([]);
    fresh.clear();
  });

  it("does not resume a --remote import into another deployment than the one it was for", () => {
    const staging = checkpointFor(manifest, { persistTo: state.dir }, "db-staging/logos-staging");
    staging.write({ line: 30, report: { rows: 30, created: 30, updated: 0, unchanged: 0, failed: 0, failures: [] } });
    expect(checkpointFor(manifest, { persistTo: state.dir }, "db-production/logos").read()).toBeUndefined();
    expect(checkpointFor(manifest, { persistTo: state.dir }, "db-staging/logos-staging").read()?.line).toBe(30);
    staging.clear();
  });
});
