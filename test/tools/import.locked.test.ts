import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { companies } from "../../schema";
import { importCommand } from "../../tools/importer/command";
import { type ConvertPool, startConvertPool } from "../../tools/importer/convertPool";
import { type ImportWriter, startImportWriter } from "../../tools/importer/writer";
import { flatPngManifest, freshState, inProcess, openSharedPlatform } from "./helpers";

/**
 * The first start seeds beside the running dev server: two workerd processes on the same
 * SQLite files, and SQLite refuses a write while the other holds the lock. Here another
 * process (this one, through node:sqlite) holds D1's write lock for a while as the import starts.
 */
const ROWS = 6;
let state: { dir: string; cleanup: () => void };
let manifest: string;
let platform: Awaited<ReturnType<typeof openSharedPlatform>>;
let writer: ImportWriter;
let pool: ConvertPool;

beforeAll(async () => {
  state = await freshState();
  manifest = await flatPngManifest(join(state.dir, "locked"), ROWS, (i) => ({ name: `Locked ${i}`, domain: `locked-${i}.com` }), 48);
  // One after the other: two workerd processes opening the same new SQLite file at once can
  // meet its lock while they set it up.
  platform = await openSharedPlatform(state.dir);
  writer = await startImportWriter({ persistTo: state.dir });
  pool = startConvertPool();
});
afterAll(async () => {
  await Promise.all([platform?.dispose(), writer?.stop(), pool?.close()]);
  state.cleanup();
});

describe("an import while another process holds the database's write lock", () => {
  it("writes its batch once the lock is released, every row imported", async () => {
    const d1 = join(state.dir, "v3", "d1", "miniflare-D1DatabaseObject");
    const file = readdirSync(d1).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite")!;
    const holder = new DatabaseSync(join(d1, file));
    holder.exec("BEGIN IMMEDIATE");
    // workerd reports every query SQLite refuses on its standard error, which Miniflare logs.
    const logError = console.error;
    const refused = new Promise<void>((resolve) => {
      const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
        if (args.map(String).join(" ").includes("database is locked: SQLITE_BUSY")) {
          spy.mockRestore();
          resolve();
        }
        logError(...args);
      });
    });
    let finished = false;
    const importing = inProcess((io) => importCommand([manifest, "--persist-to", state.dir], io, { writer, pool })).finally(
      () => (finished = true),
    );

    // The lock refuses the writer's reads as well as its writes; it waits and tries again. Once
    // it has been refused, the lock is let go, and the import goes on.
    await Promise.race([
      refused,
      importing.then(() => {
        throw new Error("the import ended before the lock refused it anything");
      }),
    ]);
    expect(finished).toBe(false);
    holder.exec("ROLLBACK");
    holder.close();

    const result = await importing;
    expect(result.status).toBe(0);
    expect(result.json()).toMatchObject({ rows: ROWS, created: ROWS, failed: 0 });
    expect((await platform.db.select().from(companies).all()).map((c) => c.name).sort()).toEqual(
      Array.from({ length: ROWS }, (_, i) => `Locked ${i}`),
    );
  });
});
