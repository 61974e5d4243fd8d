import { applyD1Migrations, reset } from "cloudflare:test";
import { env } from "cloudflare:workers";

/**
 * Empty storage, as every Worker test starts with (setup.ts): `reset()` deletes every Durable
 * Object, and with them D1, KV, R2, the Cache API and the rate-limiting binding's counters
 * (Miniflare keeps each in Durable Objects); D1 then gets back the database migrations/ makes,
 * applied once per runtime and replayed in one batch (17 migrations one after another took
 * ~0.1 s a test, the replay a tenth of that).
 */
export async function emptyStorage(): Promise<void> {
  await reset();
  await emptyDatabase();
}

/** The schema as statements, read once per runtime: it outlives the files (globalThis). */
const SCHEMA = Symbol.for("logo-lookup.test.schema");
const scope = globalThis as typeof globalThis & { [SCHEMA]?: string[] };

/**
 * The database as migrations/ leaves it, as statements: its tables, indexes, views and triggers
 * (not D1's own `_cf_…`, SQLite's `sqlite_…` or FTS5's shadow tables, which come with what made
 * them), then the rows migrations wrote (search_folds, the fold of every code point), then
 * d1_migrations' record of them.
 */
async function readSchema(): Promise<string[]> {
  const { results } = await env.DB.prepare(
    "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY rowid",
  ).all<{ type: string; name: string; sql: string }>();
  const virtual = results.filter((r) => /^CREATE VIRTUAL TABLE/i.test(r.sql)).map((r) => r.name);
  const shadow = (name: string) => virtual.some((v) => new RegExp(`^${v}_(data|idx|content|docsize|config)$`).test(name));
  const order: Record<string, number> = { table: 0, index: 1, view: 2, trigger: 3 };
  const kept = results.filter((r) => !shadow(r.name)).sort((a, b) => (order[a.type] ?? 4) - (order[b.type] ?? 4));
  const rows: string[] = [];
  for (const { name } of kept.filter((r) => r.type === "table" && !virtual.includes(r.name))) rows.push(...(await rowsOf(name)));
  return [...kept.map((r) => r.sql), ...rows];
}

/** A table's rows as INSERT statements of at most ~50 kB each (D1 takes 100 kB a statement). */
async function rowsOf(table: string): Promise<string[]> {
  const quoted = `"${table.replaceAll('"', '""')}"`;
  const columns = (await env.DB.prepare(`SELECT name FROM pragma_table_info('${table.replaceAll("'", "''")}')`).all<{ name: string }>())
    .results;
  const tuple = columns.map((c) => `quote("${c.name.replaceAll('"', '""')}")`).join(" || ',' || ");
  const { results } = await env.DB.prepare(`SELECT '(' || ${tuple} || ')' AS row FROM ${quoted}`).all<{ row: string }>();
  const head = `INSERT INTO ${quoted} (${columns.map((c) => `"${c.name}"`).join(", ")}) VALUES `;
  const statements: string[] = [];
  let values: string[] = [];
  let size = 0;
  for (const { row } of results) {
    if (size + row.length > 50_000 && values.length > 0) {
      statements.push(head + values.join(","));
      values = [];
      size = 0;
    }
    values.push(row);
    size += row.length + 1;
  }
  if (values.length > 0) statements.push(head + values.join(","));
  return statements;
}

/** What a replay must reproduce: the schema and every table's row count. */
async function describeDatabase(): Promise<string> {
  const master = (await env.DB.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE '_cf_%' ORDER BY name").all())
    .results;
  const counts: Record<string, number> = {};
  for (const entry of master as Array<{ type: string; name: string; sql: string | null }>) {
    if (entry.type !== "table" || /^CREATE VIRTUAL TABLE/i.test(entry.sql ?? "")) continue;
    const row = await env.DB.prepare(`SELECT count(*) AS n FROM "${entry.name.replaceAll('"', '""')}"`).first<{ n: number }>();
    counts[entry.name] = row?.n ?? 0;
  }
  return JSON.stringify({ master, counts });
}

/** D1 as migrations/ leaves it, after a `reset()`: the schema and rows read once, replayed. */
export async function emptyDatabase(): Promise<void> {
  const schema = scope[SCHEMA];
  if (schema) {
    for (let attempt = 1; ; attempt++) {
      try {
        await env.DB.batch(schema.map((statement) => env.DB.prepare(statement)));
        return;
      } catch (error) {
        // reset() left the database as it was: its object was busy with a query the test before
        // left running (a waitUntil; seen once or twice a run). A second reset() empties it. (The
        // migrations applied one by one never failed here: CREATE TABLE IF NOT EXISTS kept the
        // old tables, rows and all, for the next test.)
        if (attempt >= 3 || !/already exists/.test(String(error))) throw error;
        await reset();
      }
    }
  }
  await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
  const read = await readSchema();
  // Once: the replay must build what the migrations built.
  const built = await describeDatabase();
  await reset();
  await env.DB.batch(read.map((statement) => env.DB.prepare(statement)));
  if ((await describeDatabase()) !== built) {
    throw new Error("replaying the schema and rows read from the database does not build what migrations/ builds");
  }
  scope[SCHEMA] = read;
}
