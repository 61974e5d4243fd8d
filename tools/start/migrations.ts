import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * `wrangler d1 migrations apply DB --local`, done on a database binding this process already
 * holds. wrangler starts a runtime of its own for each migration it applies, about 1.2 s each:
 * on a first start, some twenty seconds before anything else could begin. The result is the
 * same as wrangler's, so either may apply the next migration: each pending file of the folder,
 * in name order, split into statements as wrangler splits them, run in one batch (all or
 * nothing) with its row in wrangler's `d1_migrations` table.
 *
 * Returns the names applied, none when the database is up to date. A migration that fails
 * throws, naming it; those before it stay applied, as with wrangler.
 */
export const MIGRATIONS_TABLE = "d1_migrations";

export async function applyMigrations(d1: D1Database, dir: string): Promise<string[]> {
  await d1
    .prepare(
      `CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}"(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)`,
    )
    .run();
  const { results } = await d1.prepare(`SELECT name FROM "${MIGRATIONS_TABLE}"`).all<{ name: string }>();
  const applied = new Set(results.map((row) => row.name));
  const pending = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".sql") && !applied.has(entry.name))
    .map((entry) => entry.name)
    .sort();
  // Loaded only when there is something to split: wrangler takes a second or two to load.
  const { unstable_splitSqlQuery: splitSqlQuery } = pending.length > 0 ? await import("wrangler") : { unstable_splitSqlQuery: () => [] };
  for (const name of pending) {
    const statements = splitSqlQuery(readFileSync(join(dir, name), "utf8")).map((sql) => d1.prepare(sql));
    statements.push(d1.prepare(`INSERT INTO "${MIGRATIONS_TABLE}" (name) VALUES (?)`).bind(name));
    try {
      await d1.batch(statements);
    } catch (error) {
      throw new Error(`migration ${name} failed: ${(error as Error).message}`);
    }
  }
  return pending;
}
