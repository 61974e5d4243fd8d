import { drizzle } from "drizzle-orm/d1";
import * as schema from "../../schema";
import { guardedDatabase } from "./dependencies";

const instances = new WeakMap<D1Database, ReturnType<typeof build>>();
const guarded = new WeakMap<D1Database, D1Database>();

function guardedOf(d1: D1Database): D1Database {
  let database = guarded.get(d1);
  if (!database) {
    database = guardedDatabase(d1);
    guarded.set(d1, database);
  }
  return database;
}

function build(d1: D1Database) {
  return drizzle(guardedOf(d1), { schema });
}

/**
 * The one way to reach D1: drizzle over the binding, with the schema's tables, every query
 * failing as `Unavailable` when the database does (src/lib/dependencies.ts). Built once per
 * binding and isolate: building walks the whole schema, too much to repeat on every request.
 * Its queries go to the primary database.
 */
export function createDb(d1: D1Database) {
  let db = instances.get(d1);
  if (!db) {
    db = build(d1);
    instances.set(d1, db);
  }
  return db;
}

export type Db = ReturnType<typeof createDb>;

/**
 * What the catalogue's queries use of drizzle: building statements and running them, alone or
 * in a batch; not the relational `db.query` API, which needs the schema walked. Both `createDb`
 * and the session readers below are one.
 */
export type CatalogueDb = Pick<Db, "select" | "insert" | "update" | "delete" | "batch" | "run" | "all" | "get">;

/**
 * Catalogue reads through D1's Sessions API. With read replication on (docs/catalogue.md,
 * "Global reads"), a session's first query goes to the nearest replica and every later query of
 * the same session to a copy at least as new as anything it has seen, so one request's reads
 * are consistent with each other. `after`, a bookmark from `bookmarkOf` on a writer, makes the
 * session start no earlier than that write: what a request has just written, it reads back.
 * Without replication every query goes to the primary, as with createDb.
 *
 * A session belongs to one request: build it per request (cheap: drizzle without the schema).
 */
export function catalogueReader(d1: D1Database, after?: string | null): CatalogueDb {
  return sessionDb(d1, after ?? "first-unconstrained");
}

/**
 * A session whose first query goes to the primary: for a write path whose reads must see the
 * latest state (importCompanyLogo decides which company a row is about from what it reads)
 * and whose writes others must read back (`bookmarkOf`).
 */
export function catalogueWriter(d1: D1Database): CatalogueDb {
  return sessionDb(d1, "first-primary");
}

function sessionDb(d1: D1Database, constraint: D1SessionConstraint | D1SessionBookmark): CatalogueDb {
  return drizzle(guardedOf(d1).withSession(constraint) as unknown as D1Database);
}

/**
 * The bookmark of everything a session db has read or written so far, for a later reader
 * (`catalogueReader(d1, bookmark)`); null for a db that is not a session.
 */
export function bookmarkOf(db: CatalogueDb): string | null {
  const client = (db as { $client?: Partial<D1DatabaseSession> }).$client;
  return typeof client?.getBookmark === "function" ? client.getBookmark() : null;
}
