/**
 * The Worker the scale benchmark (test/bench/scale.ts) runs on workerd: the catalogue's own
 * query functions over a D1 binding, read through a D1 session as the service reads, with
 * nothing of the service around them (no keys, limits or caches), so the figures are the
 * queries' alone.
 *
 *   GET /search?q=…&limit=5                  searchCompanies (src), as the MCP search tool calls it
 *   GET /search?q=…&limit=5&impl=reference   the same ranking computed exhaustively (searchReference.ts)
 *   GET /domain?d=…                          findCompanyByDomain: an index point read, the baseline
 *   GET /explain?q=…&limit=5 | ?d=…          the statements a search (or the point read) sends to
 *                                            D1, each with its query plan, SQL time and rows read
 *                                            as D1 reports them
 */
import { drizzle } from "drizzle-orm/d1";
import { findCompanyByDomain } from "../../src/catalogue/companies";
import { searchCompanies } from "../../src/catalogue/search";
import { type CatalogueDb, catalogueReader } from "../../src/lib/db";
import { searchCompaniesReference } from "./searchReference";

interface BenchEnv {
  DB: D1Database;
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const query = url.searchParams.get("q");
    const domain = url.searchParams.get("d");
    const limit = Number(url.searchParams.get("limit") ?? 5);
    const search = url.searchParams.get("impl") === "reference" ? searchCompaniesReference : searchCompanies;
    switch (url.pathname) {
      case "/search":
        return Response.json(await search(catalogueReader(env.DB), query ?? "", limit));
      case "/domain":
        return Response.json(await findCompanyByDomain(catalogueReader(env.DB), domain ?? ""));
      case "/explain":
        return Response.json(
          await explain(env.DB, (db) => (domain !== null ? findCompanyByDomain(db, domain) : searchCompanies(db, query ?? "", limit))),
        );
      default:
        return new Response("Not found", { status: 404 });
    }
  },
} satisfies ExportedHandler<BenchEnv>;

interface Statement {
  sql: string;
  params: unknown[];
}

/** Runs `work` over a D1 that records its statements, then runs each again to measure it. */
async function explain(d1: D1Database, work: (db: CatalogueDb) => Promise<unknown>) {
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
  const answer = await work(drizzle(recording));
  const measured = [];
  for (const { sql, params } of statements) {
    const plan = await d1
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .bind(...params)
      .all<{ detail: string }>();
    const run = await d1
      .prepare(sql)
      .bind(...params)
      .all();
    measured.push({
      sql,
      plan: plan.results.map((row) => row.detail),
      sqlMs: run.meta.timings?.sql_duration_ms ?? null,
      rowsRead: run.meta.rows_read,
    });
  }
  return { answer, statements: measured };
}
