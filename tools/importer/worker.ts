/**
 * The write side of the importer, run by the importer inside workerd (wrangler's local
 * runtime) next to the storage it writes: D1 and R2 calls stay in-process instead of
 * crossing the platform proxy one blocking round trip at a time. Not part of the deployed
 * Worker; it listens on a loopback port for the importer process that started it.
 *
 *   POST /source-hashes  {keys: [{domains, variant, sourceSet}]}  → {hashes: Array<string | null>}
 *   POST /logos          a batch of rows and their images (./wire.ts)
 *                        → per row Result<ImportedLogo>; when a row came without its image and
 *                          turned out to need it, the answer stops there, with
 *                          {ok:false, needsImage:true}: that row and the rows after it are not
 *                          written (the importer sends them again, the row with its image)
 *
 * Only the importer that started it is answered: every request carries its run's token
 * (../toolToken.ts), and anything else gets 401.
 *
 * Objects go to the LOGOS binding, or, when the importer passes R2 S3 credentials
 * (`--remote`), straight to the bucket's S3-compatible API (./s3.ts).
 *
 * Locally another workerd may write the same SQLite files (the dev server beside the first
 * start's seeding, an admin command), and SQLite refuses a write while another process holds
 * the lock. Such a batch is written again, whole and in order, after a short wait: rows that
 * made it are found unchanged, so the result is what one uninterrupted batch would have left.
 */
import { importCompanyLogos, type ObjectStore, type StoredLogoKey, storedSourceHashes } from "../../src/catalogue/importLogo";
import { createDb } from "../../src/lib/db";
import { isTransientDatabaseFailure } from "../../src/lib/dependencies";
import { ok, type Result } from "../../src/lib/errors";
import { type S3Settings, s3ObjectStore } from "./s3";
import { fromTool, NOT_FROM_TOOL } from "../toolToken";
import { decodeLogos } from "./wire";

interface ToolEnv {
  DB: D1Database;
  LOGOS: R2Bucket;
  /** S3Settings as JSON, when the importer was given R2 S3 credentials. */
  R2_S3?: string;
  /** The importer's token for this run (../toolToken.ts). */
  TOOL_TOKEN?: string;
}

function objectStore(env: ToolEnv): ObjectStore {
  return env.R2_S3 ? s3ObjectStore(JSON.parse(env.R2_S3) as S3Settings) : env.LOGOS;
}

/** Thrown by the image of a row that came without one and needs it. */
class ImageNeeded extends Error {
  constructor(readonly index: number) {
    super(`row ${index} needs its image`);
  }
}

const LOCKED_RETRIES = 8;
const LOCKED_WAIT_MS = 100;
// Locally, with no network in between, a transient failure of D1 is another process's lock.
const locked = (result: Result<unknown>) => !result.ok && isTransientDatabaseFailure(result.error.message);

/** Runs a read or write, again after a short wait while another process holds SQLite's lock. */
async function whenUnlocked<T>(job: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await job();
    } catch (error) {
      if (attempt > LOCKED_RETRIES || !isTransientDatabaseFailure(error)) throw error;
      await scheduler.wait(LOCKED_WAIT_MS * attempt);
    }
  }
}

/** The tables an import writes, checked before its first batch. */
const CATALOGUE_TABLES = ["companies", "company_domains", "logos"];

export default {
  async fetch(request: Request, env: ToolEnv): Promise<Response> {
    if (!fromTool(request, env.TOOL_TOKEN)) return NOT_FROM_TOOL();
    const db = createDb(env.DB);
    const { pathname } = new URL(request.url);
    if (request.method === "POST" && pathname === "/schema") {
      // The catalogue's tables that are not there: a database the migrations have not reached.
      const found = await env.DB.prepare(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${CATALOGUE_TABLES.map(() => "?").join(", ")})`,
      )
        .bind(...CATALOGUE_TABLES)
        .all<{ name: string }>();
      const present = new Set(found.results.map((row) => row.name));
      return Response.json({ missing: CATALOGUE_TABLES.filter((table) => !present.has(table)) });
    }
    if (request.method === "POST" && pathname === "/source-hashes") {
      const { keys } = (await request.json()) as { keys: StoredLogoKey[] };
      return Response.json({ hashes: await whenUnlocked(() => storedSourceHashes(db, keys)) });
    }
    if (request.method === "POST" && pathname === "/logos") {
      const rows = decodeLogos(new Uint8Array(await request.arrayBuffer()));
      // Rows are decided in order, so the first row that needs its image is met before any is
      // written: the batch is then written only up to it.
      let needing = rows.length;
      const items = rows.map(({ input, image }, index) => ({
        input,
        image: async () => {
          if (image) return ok(image);
          throw new ImageNeeded(index);
        },
      }));
      const write = async () => {
        for (;;) {
          try {
            return await importCompanyLogos(db, objectStore(env), items.slice(0, needing));
          } catch (error) {
            if (!(error instanceof ImageNeeded)) throw error;
            needing = error.index;
          }
        }
      };
      let results = await whenUnlocked(write);
      for (let attempt = 1; attempt <= LOCKED_RETRIES && results.some(locked); attempt++) {
        await scheduler.wait(LOCKED_WAIT_MS * attempt);
        // The first outcome of a row that made it counts (a second write finds it unchanged).
        // Over the retry's answer, which may stop earlier (a row before the end needing its image now).
        const again = await whenUnlocked(write);
        results = again.map((result, index) => (results[index]?.ok ? results[index]! : result));
      }
      return Response.json(needing < rows.length ? [...results, { ok: false, needsImage: true }] : results);
    }
    return new Response("Not found", { status: 404 });
  },
};
