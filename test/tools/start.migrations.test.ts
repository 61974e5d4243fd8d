import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyMigrations } from "../../tools/start/migrations";
import { freshState, root, withPlatform } from "./helpers";

/** npm start applies the migrations itself, to the same end as `wrangler d1 migrations apply --local`. */
const migrations = join(root, "migrations");
const scratch: string[] = [];
const emptyDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** Every table, index, trigger and view, as SQLite holds it; wrangler's own bookkeeping aside. */
const schemaOf = (state: string) =>
  withPlatform(state, async ({ d1 }) => {
    const { results } = await d1
      .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .all<{ type: string; name: string; sql: string | null }>();
    // The bookkeeping table's statement as written, its spacing aside.
    const spacing = (sql: string | null) => sql?.replace(/\s+/g, " ").replace(/\( | \)/g, (match) => match.trim());
    return results.map((row) => (row.name === "d1_migrations" ? { ...row, sql: spacing(row.sql) } : row));
  });

const appliedNames = (state: string) =>
  withPlatform(state, async ({ d1 }) => (await d1.prepare("SELECT name FROM d1_migrations ORDER BY id").all<{ name: string }>()).results);

describe("the local database's migrations", () => {
  it("leave the schema and record that wrangler leaves, and wrangler finds nothing left to apply", async () => {
    const state = emptyDir("migrations-ours-");
    const applied = await withPlatform(state, ({ d1 }) => applyMigrations(d1, migrations));
    expect(applied[0]).toBe("0000_catalogue_and_accounts.sql");
    expect(applied).toEqual([...applied].sort());

    const byWrangler = await freshState();
    try {
      expect(await schemaOf(state)).toEqual(await schemaOf(byWrangler.dir));
      expect((await appliedNames(state)).map((row) => row.name)).toEqual(applied);
      expect(await appliedNames(state)).toEqual(await appliedNames(byWrangler.dir));
    } finally {
      byWrangler.cleanup();
    }

    const wrangler = spawnSync(
      join(root, "node_modules", ".bin", "wrangler"),
      ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state],
      { cwd: root, encoding: "utf8", env: { ...process.env, CI: "true", NO_COLOR: "1" } },
    );
    expect(wrangler.status).toBe(0);
    expect(wrangler.stdout).toContain("No migrations to apply");
    // And the next start applies nothing either.
    expect(await withPlatform(state, ({ d1 }) => applyMigrations(d1, migrations))).toEqual([]);
  });

  it("applies only what wrangler has not, and a migration that fails leaves nothing of itself", async () => {
    const dir = emptyDir("migrations-dir-");
    cpSync(migrations, dir, { recursive: true });
    const { dir: state, cleanup } = await freshState();
    try {
      writeFileSync(join(dir, "9000_added.sql"), "CREATE TABLE added_later (id INTEGER PRIMARY KEY);\n");
      writeFileSync(
        join(dir, "9001_broken.sql"),
        "CREATE TABLE half_made (id INTEGER PRIMARY KEY);\n-- a statement that cannot run\nINSERT INTO no_such_table VALUES (1);\n",
      );
      await expect(withPlatform(state, ({ d1 }) => applyMigrations(d1, dir))).rejects.toThrow(/migration 9001_broken\.sql failed/);
      const names = (await appliedNames(state)).map((row) => row.name);
      expect(names.at(-1)).toBe("9000_added.sql");
      const tables = (await schemaOf(state)).map((row) => row.name);
      expect(tables).toContain("added_later");
      expect(tables).not.toContain("half_made");
    } finally {
      cleanup();
    }
  });
});
