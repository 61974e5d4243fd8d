import { drizzle } from "drizzle-orm/d1";
import * as schema from "../../schema";
import { guardedDatabase } from "./dependencies";

const instances = new WeakMap<D1Database, ReturnType<typeof build>>();

function build(d1: D1Database) {
  return drizzle(guardedDatabase(d1), { schema });
}

/**
 * The one way to reach D1: drizzle over the binding, with the schema's tables, every query
 * failing as `Unavailable` when the database does (src/lib/dependencies.ts). Built once per
 * binding and isolate: building walks the whole schema, too much to repeat on every request.
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
