/**
 * The Worker the search benchmark (test/bench/search.ts) runs on workerd: the catalogue's own
 * query functions over a D1 binding, with nothing of the service around them (no keys, limits
 * or caches), so the figures are the queries' alone.
 *
 *   GET /search?q=…&limit=5&impl=current    searchCompanies (src), as the MCP search tool calls it
 *   GET /search?q=…&limit=5&impl=previous   the bm25 ranking it replaced (searchPrevious.ts)
 *   GET /domain?d=…                         findCompanyByDomain: an index point read, the baseline
 *   GET /explain?q=…&limit=5&impl=…         the statements a search sends to D1, each with its
 *                                           query plan, SQL time and rows read as D1 reports them
 */
import { drizzle } from "drizzle-orm/d1";
import * as schema from "../../schema";
import { findCompanyByDomain, searchCompanies } from "../../src/catalogue/queries";
import { createDb, type Db } from "../../src/lib/db";
import { searchCompaniesPrevious } from "./searchPrevious";

interface BenchEnv {
  DB: D1Database;
}

const implementations = { current: searchCompanies, previous: searchCompaniesPrevious };

function implementation(url: URL) {
  const name = url.searchParams.get("impl") ?? "current";
  return Object.hasOwn(implementations, name) ? implementations[name as keyof typeof implementations] : null;
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const query = url.searchParams.get("q") ?? "";
    const limit = Number(url.searchParams.get("limit") ?? 5);
    const search = implementation(url);
    switch (url.pathname) {
      case "/search":
        if (!search) return new Response("Unknown impl", { status: 400 });
        return Response.json(await search(createDb(env.DB), query, limit));
      case "/domain":
        return Response.json(await findCompanyByDomain(createDb(env.DB), url.searchParams.get("d") ?? ""));
      case "/explain":
        if (!search) return new Response("Unknown impl", { status: 400 });
        return Response.json(await explain(env.DB, (db) => search(db, query, limit)));
      default:
        return new Response("Not found", { status: 404 });
    }
  },
} satisfies ExportedHandler<BenchEnv>;

interface Statement {
  sql: string;
  params: unknown[];
}

/** Runs `search` over a D1 that records its statements, then runs each again to measure it. */
async function explain(d1: D1Database, search: (db: Db) => Promise<unknown>) {
  const statements: Statement[] = [];
  // drizzle prepares a statement once and binds it per execution: record the SQL at prepare
  // and the parameters at bind. D1's methods use private fields, hence the binding to target.
  const recording = new Proxy(d1, {
    get(target, property) {
      if (property === "prepare") {
        return (query: string) =>
          new Proxy(target.prepare(query), {
            get(statement, name) {
              if (name === "bind") {
                return (...params: unknown[]) => {
                  statements.push({ sql: query, params });
                  return statement.bind(...params);
                };
              }
              const value = Reflect.get(statement, name, statement);
              return typeof value === "function" ? value.bind(statement) : value;
            },
          });
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  // Not createDb: its instance is cached per binding, and this binding is new on every request.
  const hits = await search(drizzle(recording, { schema }));
  const measured = [];
  for (const { sql, params } of statements) {
    const plan = await d1.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...params).all<{ detail: string }>();
    const run = await d1.prepare(sql).bind(...params).all();
    measured.push({
      sql,
      params,
      plan: plan.results.map((row) => row.detail),
      sqlMs: run.meta.timings?.sql_duration_ms ?? null,
      rowsRead: run.meta.rows_read,
    });
  }
  return { hits, statements: measured };
}
