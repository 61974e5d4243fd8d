/**
 * npm run bench:search: company search over a million companies, on workerd itself, in two
 * implementations measured in the same run against an index point read (findCompanyByDomain):
 *
 *   current   searchCompanies (src/catalogue/queries.ts): the name-key prefix range and at most
 *             500 FTS candidates, ranked by closeness and prominence, in one D1 batch
 *   previous  the one it replaced (searchPrevious.ts): every FTS match ranked by closeness,
 *             then bm25
 *
 * The catalogue is synthetic (searchDataset.ts: seeded, so every run searches the same
 * companies) and loaded once into a local D1 under .wrangler/bench-search/, keyed by the
 * dataset version, the company count, and the contents of migrations/ and the generator:
 * later runs reuse it, and a change to any of them builds it anew. The load goes through the
 * D1 binding of a Miniflare instance: multi-row INSERTs of under 100 kB (D1's statement limit,
 * which Miniflare enforces, as it does the 100 bound parameters) in batches, each batch one
 * transaction. The search triggers are dropped for the load and the FTS index filled in one
 * pass afterwards, then the triggers are put back from the migration: the same index content
 * the triggers write row by row (checked once on 200,000 companies: identical rows), built in
 * about 60 % of the time.
 *
 * A small Worker (searchWorker.ts) bundled by wrangler answers GET /search and GET /domain
 * from the catalogue's own functions; Miniflare runs it on a direct socket. Each query class
 * is a fixed pool of queries taken from the catalogue:
 *
 *   latency     sequential requests from one client, p50 and p99 over the pool
 *   throughput  autocannon with BENCH_CONNECTIONS connections cycling through the pool
 *
 * Reported per class and implementation: p50, p99 and req/s; each as a multiple of the
 * baseline's (p50 ×base: how many point reads' time a search takes; req/s ×base: the share of
 * the baseline's throughput); and the speed-up of current over previous (previous p50 ÷
 * current p50, current req/s ÷ previous req/s: above 1, current is faster).
 *
 * Then, for the first query of each class: how many companies the FTS query matches, what
 * counting them and scoring them by bm25 cost, and the statements each implementation sent to
 * D1 with their SQL time, rows read and query plans, as D1 reports them; and, over the pools,
 * how often current's answers agree with previous's (first hit, set of five).
 *
 * Local D1 costs 2–3 ms of workerd CPU per statement on this kind of machine, whatever the
 * statement: the baseline pays it twice. SQL time is the part that grows with the catalogue.
 *
 * A shared two-core machine drifts from one run to the next: classes are measured in rounds,
 * taking turns, and the median round counts. Figures depend on the machine: compare ratios.
 *
 * Options (environment): BENCH_SEARCH_COMPANIES (1000000), BENCH_SECONDS per class and round
 * (2), BENCH_ROUNDS (3), BENCH_CONNECTIONS (8).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { projectRoot } from "../../src/cli/platform";
import { syntheticCompanies } from "./syntheticCatalogue";

const companyCount = Number(process.env.BENCH_SEARCH_COMPANIES ?? 1_000_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 8);
/** Raise when the catalogue should be rebuilt for a reason the cache key cannot see. */
const DATASET_VERSION = "1";
const SEED = 20_261_102;

const benchRoot = join(projectRoot, ".wrangler", "bench-search");
const wrangler = join(projectRoot, "node_modules", ".bin", "wrangler");
const migrationsDir = join(projectRoot, "migrations");
const log = (message: string) => process.stderr.write(`${message}\n`);

function run(command: string, args: string[]) {
  const result = spawnSync(command, args, { cwd: projectRoot, encoding: "utf8", env: { ...process.env, CI: "true" } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed:\n${result.stderr}`);
}

const config = unstable_readConfig({ config: join(projectRoot, "wrangler.toml") });
const databaseId = (config.d1_databases as { binding: string; database_id?: string }[]).find((d) => d.binding === "DB")?.database_id;
if (!databaseId) throw new Error("wrangler.toml must bind a D1 database as DB");

/** A Miniflare with one Worker that has the catalogue's D1 database of `state`. */
function miniflare(state: string, worker: { scriptPath: string } | { script: string }) {
  return new Miniflare({
    ...convertV4MiniflareOptions({
      workers: [
        {
          name: "search",
          modules: true,
          compatibilityDate: config.compatibility_date,
          compatibilityFlags: ["nodejs_compat"],
          d1Databases: { DB: databaseId },
          unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
          ...worker,
        },
      ],
    } as never),
    // Where `wrangler d1 migrations apply --persist-to` wrote the database.
    resourcePersistencePath: join(state, "v3"),
  });
}

// ---------------------------------------------------------------------------------------------
// The catalogue

interface BuildReport {
  companies: number;
  domains: number;
  tickers: number;
  withAliases: number;
  /** Milliseconds. */
  migrate: number;
  tables: number;
  searchIndex: number;
  total: number;
  databaseBytes: number;
}

function cacheKey(): string {
  const hash = createHash("sha256");
  for (const file of readdirSync(migrationsDir).filter((name) => name.endsWith(".sql")).sort()) {
    hash.update(file).update(readFileSync(join(migrationsDir, file)));
  }
  hash.update(readFileSync(join(import.meta.dirname, "searchDataset.ts")));
  return `catalogue-v${DATASET_VERSION}-${companyCount}-${hash.digest("hex").slice(0, 12)}`;
}

/** The state directory of the catalogue, built now unless an earlier run left it. */
async function ensureCatalogue(): Promise<{ state: string; build: BuildReport; reused: boolean }> {
  const key = cacheKey();
  const dir = join(benchRoot, key);
  if (existsSync(join(dir, "build.json"))) {
    return { state: join(dir, "state"), build: JSON.parse(readFileSync(join(dir, "build.json"), "utf8")), reused: true };
  }
  // Other versions of a catalogue of this size are of no further use (a million companies take
  // 300 MB), nor are builds that were interrupted.
  mkdirSync(benchRoot, { recursive: true });
  const sameSize = new RegExp(`^catalogue-v[^-]+-${companyCount}-`);
  for (const name of readdirSync(benchRoot).filter((name) => sameSize.test(name) || name.includes(".partial-"))) {
    rmSync(join(benchRoot, name), { recursive: true, force: true });
  }
  // Built beside its final place and renamed when complete, so an interrupted build is never reused.
  const partial = `${dir}.partial-${process.pid}`;
  const state = join(partial, "state");
  log(`Building the catalogue: ${companyCount.toLocaleString("en")} companies (${key})…`);
  const started = performance.now();
  run(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state]);
  const migrated = performance.now();
  const mf = miniflare(state, { script: "export default { fetch() { return new Response(null, { status: 404 }); } };" });
  try {
    const d1 = await mf.getD1Database("DB", "search");
    const counts = await loadCompanies(d1);
    const loaded = performance.now();
    await fillSearchIndex(d1);
    const done = performance.now();
    const size = (await d1.prepare("SELECT 1").run()).meta.size_after;
    const build: BuildReport = {
      ...counts,
      migrate: migrated - started,
      tables: loaded - migrated,
      searchIndex: done - loaded,
      total: done - started,
      databaseBytes: size,
    };
    writeFileSync(join(partial, "build.json"), `${JSON.stringify(build, null, 2)}\n`);
  } finally {
    await mf.dispose();
  }
  renameSync(partial, dir);
  return { state: join(dir, "state"), build: JSON.parse(readFileSync(join(dir, "build.json"), "utf8")), reused: false };
}

/** D1 refuses statements over 100 kB; this leaves room for the longest row. */
const STATEMENT_BYTES = 98_000;
const COMPANIES_PER_BATCH = 25_000;

/** Rows of one table, cut into multi-row INSERT statements of under STATEMENT_BYTES. */
class InsertStatements {
  readonly statements: string[] = [];
  private rows: string[] = [];
  private bytes = 0;
  constructor(private readonly head: string) {}
  add(row: string) {
    if (this.bytes + row.length + 1 > STATEMENT_BYTES - this.head.length) this.cut();
    this.rows.push(row);
    this.bytes += row.length + 1;
  }
  take(): string[] {
    this.cut();
    return this.statements.splice(0);
  }
  private cut() {
    if (this.rows.length === 0) return;
    this.statements.push(this.head + this.rows.join(","));
    this.rows = [];
    this.bytes = 0;
  }
}

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The search triggers of the migration, to drop for the load and create again after it. */
function searchTriggers(): { name: string; create: string }[] {
  const migration = readFileSync(join(migrationsDir, "0001_catalogue_search.sql"), "utf8");
  return migration
    .split("--> statement-breakpoint")
    .map((statement) => statement.replace(/^\s*--.*$/gm, "").trim())
    .filter((statement) => statement.startsWith("CREATE TRIGGER"))
    .map((create) => ({ name: /^CREATE TRIGGER `([^`]+)`/.exec(create)![1]!, create }));
}

async function loadCompanies(d1: D1Database) {
  await d1.batch(searchTriggers().map((trigger) => d1.prepare(`DROP TRIGGER \`${trigger.name}\``)));
  const companies = new InsertStatements("INSERT INTO companies (id, name, name_key, aliases, prominence, created_at, updated_at) VALUES ");
  const domains = new InsertStatements("INSERT INTO company_domains (domain, company_id, is_primary) VALUES ");
  const tickers = new InsertStatements("INSERT INTO company_tickers (ticker, exchange, company_id) VALUES ");
  const counts = { companies: 0, domains: 0, tickers: 0, withAliases: 0 };
  const now = Date.UTC(2026, 0, 1);
  // One batch in flight while the next is generated: Node and workerd each keep a core busy.
  let inFlight: Promise<unknown> = Promise.resolve();
  for (const company of syntheticCompanies(companyCount, SEED)) {
    counts.companies++;
    if (company.aliases.length > 0) counts.withAliases++;
    companies.add(
      `(${company.id},${literal(company.name)},${literal(company.nameKey)},${literal(JSON.stringify(company.aliases))},${company.prominence},${now},${now})`,
    );
    for (const [index, domain] of company.domains.entries()) {
      counts.domains++;
      domains.add(`(${literal(domain)},${company.id},${index === 0 ? 1 : 0})`);
    }
    if (company.ticker) {
      counts.tickers++;
      tickers.add(`(${literal(company.ticker.symbol)},${literal(company.ticker.exchange)},${company.id})`);
    }
    if (company.id % COMPANIES_PER_BATCH === 0 || company.id === companyCount) {
      // Companies first: the other two tables refer to them.
      const batch = [...companies.take(), ...domains.take(), ...tickers.take()].map((sql) => d1.prepare(sql));
      await inFlight;
      inFlight = d1.batch(batch);
      if (company.id % 200_000 === 0) log(`  ${company.id.toLocaleString("en")} companies`);
    }
  }
  await inFlight;
  return counts;
}

/**
 * What the triggers would have written, row by row, in one pass: the same expressions over the
 * finished tables (aliases NULL when there are none, tickers '' when there are none).
 */
async function fillSearchIndex(d1: D1Database) {
  const step = 100_000;
  for (let first = 1; first <= companyCount; first += step) {
    await d1
      .prepare(
        `INSERT INTO catalogue_search (rowid, name, aliases, domains, tickers)
         SELECT c.id, c.name,
           (SELECT group_concat(value, ' ') FROM json_each(c.aliases)),
           coalesce((SELECT group_concat(domain, ' ') FROM company_domains WHERE company_id = c.id), ''),
           coalesce((SELECT group_concat(ticker, ' ') FROM company_tickers WHERE company_id = c.id), '')
         FROM companies c WHERE c.id BETWEEN ?1 AND ?2 ORDER BY c.id`,
      )
      .bind(first, first + step - 1)
      .run();
  }
  await d1.batch(searchTriggers().map((trigger) => d1.prepare(trigger.create)));
  const { indexed } = (await d1.prepare("SELECT count(*) AS indexed FROM catalogue_search").first<{ indexed: number }>())!;
  if (indexed !== companyCount) throw new Error(`search index holds ${indexed} companies of ${companyCount}`);
}

// ---------------------------------------------------------------------------------------------
// The queries

const queryClasses = [
  "exact name",
  "1-letter prefix",
  "2-letter prefix",
  "4-letter prefix",
  "two-word prefix",
  "domain",
  "ticker",
  "alias",
  "no match",
] as const;
type QueryClass = (typeof queryClasses)[number];

/**
 * Fixed pools of queries per class. Names, domains, tickers and aliases are those of companies
 * spread evenly over the catalogue; prefixes are what someone typing a common name sends.
 */
async function chooseQueries(d1: D1Database): Promise<{ pools: Record<QueryClass, string[]>; domains: string[] }> {
  const poolSize = 16;
  const ids = Array.from({ length: 2000 }, (_, i) => 1 + Math.floor((i * companyCount) / 2000));
  const { results: sample } = await d1
    .prepare(
      `SELECT c.id, c.name, c.aliases, d.domain, t.ticker
       FROM companies c
       JOIN company_domains d ON d.company_id = c.id AND d.is_primary = 1
       LEFT JOIN company_tickers t ON t.company_id = c.id
       WHERE c.id IN (SELECT value FROM json_each(?1)) ORDER BY c.id`,
    )
    .bind(JSON.stringify(ids))
    .all<{ id: number; name: string; aliases: string; domain: string; ticker: string | null }>();
  const spread = <T>(list: T[]) => Array.from({ length: poolSize }, (_, i) => list[Math.floor((i * list.length) / poolSize)]!);
  // Former names ("Ares Consulting"), not the two-letter acronyms: those are short prefixes again.
  const aliases = sample.flatMap((row) => (JSON.parse(row.aliases) as string[]).filter((alias) => alias.includes(" ")));
  const tickers = sample.flatMap((row) => (row.ticker ? [row.ticker] : []));
  return {
    pools: {
      "exact name": spread(sample.map((row) => row.name)),
      "1-letter prefix": ["a", "n", "s", "g", "b", "m", "c", "p", "t", "f", "v", "z", "e", "r", "l", "k"],
      "2-letter prefix": ["no", "ac", "gl", "su", "pa", "co", "ze", "bl", "fi", "am", "st", "ho", "ma", "ve", "ti", "ra"],
      "4-letter prefix": ["nort", "acme", "summ", "glob", "apex", "atla", "hori", "pion", "ever", "firs", "unit", "amer", "nati", "paci", "libe", "prem"],
      "two-word prefix": [
        "acme lo", "northwind f", "global ca", "first na", "summit he", "blue ha", "apex so", "atlas mo",
        "pioneer fo", "united pa", "golden st", "silver la", "horizon me", "american ba", "national in", "evergreen ho",
      ],
      domain: spread(sample.map((row) => row.domain)),
      ticker: spread(tickers),
      alias: spread(aliases),
      // Five letters or more: random tickers of two to four letters can take any shorter word.
      "no match": ["zzqxw", "qwxvbn", "xylophonix", "kqzvj", "jjjjj", "vvqqz zzpqx", "pxqwv", "wqwqw", "zqzqz", "xxyyzz", "qqqqq", "kkzzx", "bbqqx", "zzwwq", "qxzqx", "yyqqy"],
    },
    domains: spread(sample.map((row) => row.domain).reverse()),
  };
}

const implementations = ["current", "previous"] as const;
type Implementation = (typeof implementations)[number];

const searchPath = (query: string, impl: Implementation) => `/search?q=${encodeURIComponent(query)}&limit=5&impl=${impl}`;

interface SearchHit {
  companyId: number;
  companyName: string;
  domain: string;
  matchedBy: string;
}

/**
 * Every query answers, and the classes find what they are named for, in both implementations;
 * returns how often current agrees with previous, per class.
 */
async function checkAnswers(base: URL, pools: Record<QueryClass, string[]>, domains: string[]) {
  const hitsOf = async (query: string, impl: Implementation) => {
    const response = await fetch(new URL(searchPath(query, impl), base));
    if (!response.ok) throw new Error(`search "${query}" (${impl}) answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as SearchHit[];
  };
  const expect = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`check failed: ${what}`);
  };
  const agreement = {} as Record<QueryClass, { firstHit: number; sameSet: number; of: number }>;
  for (const name of queryClasses) {
    agreement[name] = { firstHit: 0, sameSet: 0, of: pools[name].length };
    for (const query of pools[name]) {
      const answers = { current: await hitsOf(query, "current"), previous: await hitsOf(query, "previous") };
      for (const impl of implementations) {
        const hits = answers[impl];
        const what = `${name} "${query}" (${impl}): ${JSON.stringify(hits.map((hit) => hit.companyName))}`;
        if (name === "exact name") expect(hits[0]?.companyName === query, what);
        if (name === "domain") expect(hits[0]?.domain === query && hits[0]?.matchedBy === "domain", what);
        if (name === "ticker") expect(hits[0]?.matchedBy === "ticker", what);
        if (name === "no match") expect(hits.length === 0, what);
        if (name !== "no match") expect(hits.length > 0, what);
      }
      const ids = (hits: SearchHit[]) => hits.map((hit) => hit.companyId);
      if (ids(answers.current)[0] === ids(answers.previous)[0]) agreement[name].firstHit++;
      if (ids(answers.current).sort().join() === ids(answers.previous).sort().join()) agreement[name].sameSet++;
    }
  }
  for (const domain of domains) {
    const response = await fetch(new URL(`/domain?d=${encodeURIComponent(domain)}`, base));
    expect(((await response.json()) as SearchHit | null)?.domain === domain, `/domain ${domain}`);
  }
  return agreement;
}

// ---------------------------------------------------------------------------------------------
// Measuring

interface Figures {
  p50: number;
  p99: number;
  samples: number;
  rps: number;
}

/** One client, one request at a time, cycling through `urls`: latency without queueing. */
async function sequential(urls: string[]): Promise<Omit<Figures, "rps">> {
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  // At least one pass over the pool, however slow, so that every query counts.
  for (let i = 0; performance.now() < end || i < urls.length; i++) {
    const url = urls[i % urls.length]!;
    const started = performance.now();
    const response = await fetch(url);
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  }
  latencies.sort((a, b) => a - b);
  return {
    p50: latencies[Math.floor(latencies.length * 0.5)]!,
    p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]!,
    samples: latencies.length,
  };
}

/** Requests a second with `connections` clients cycling through `paths`. */
async function throughput(base: URL, paths: string[]): Promise<number> {
  const requests = paths.map((path) => ({ method: "GET" as const, path }));
  let client = 0;
  const result = await autocannon({
    url: base.href,
    connections,
    duration: seconds,
    requests,
    // Each connection starts at another query of the pool, not all at the first one at once.
    setupClient: (connection) => {
      const start = Math.floor((client++ * requests.length) / connections) % requests.length;
      connection.setRequests([...requests.slice(start), ...requests.slice(0, start)]);
    },
  });
  const failed = result.errors + result.non2xx;
  if (failed > 0) log(`  ${paths[0]}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  return result.requests.total / seconds;
}

// ---------------------------------------------------------------------------------------------
// Where the time goes

interface Explained {
  statements: { sql: string; plan: string[]; sqlMs: number | null; rowsRead: number }[];
}

interface Breakdown {
  query: string;
  /** Companies the FTS query matches, and the time to count them: finding them. */
  matches: number;
  countMs: number;
  /** The five best by bm25 alone, from the FTS table alone: scoring them. */
  bm25Ms: number;
  explained: Record<Implementation, Explained>;
}

async function sqlMs(d1: D1Database, query: string, ...params: unknown[]) {
  const result = await d1.prepare(query).bind(...params).all<{ n?: number }>();
  return { ms: result.meta.timings?.sql_duration_ms ?? Number.NaN, first: result.results[0] };
}

/** For the first query of each class: the FTS matches, what finding and scoring them costs, and the statements sent. */
async function breakDown(base: URL, d1: D1Database, pools: Record<QueryClass, string[]>): Promise<Record<QueryClass, Breakdown>> {
  const { ftsQuery } = await import("../../src/catalogue/queries");
  const result = {} as Record<QueryClass, Breakdown>;
  for (const name of queryClasses) {
    const query = pools[name][0]!;
    const match = ftsQuery(query);
    const count = match ? await sqlMs(d1, "SELECT count(*) AS n FROM catalogue_search WHERE catalogue_search MATCH ?1", match) : undefined;
    const bm25 = match
      ? await sqlMs(d1, "SELECT rowid FROM catalogue_search WHERE catalogue_search MATCH ?1 ORDER BY bm25(catalogue_search, 10.0, 6.0, 3.0, 3.0) LIMIT 5", match)
      : undefined;
    const explained = {} as Record<Implementation, Explained>;
    for (const impl of implementations) {
      const response = await fetch(new URL(`/explain?q=${encodeURIComponent(query)}&limit=5&impl=${impl}`, base));
      explained[impl] = (await response.json()) as Explained;
    }
    result[name] = { query, matches: count?.first?.n ?? 0, countMs: count?.ms ?? 0, bm25Ms: bm25?.ms ?? 0, explained };
  }
  return result;
}

/** How many companies the FTS query of each pool's queries matches (median): what previous ranks. */
async function countMatches(d1: D1Database, pools: Record<QueryClass, string[]>): Promise<Record<QueryClass, number>> {
  const { ftsQuery } = await import("../../src/catalogue/queries");
  const result = {} as Record<QueryClass, number>;
  for (const name of queryClasses) {
    const counts: number[] = [];
    for (const query of pools[name]) {
      const match = ftsQuery(query);
      counts.push(match ? ((await sqlMs(d1, "SELECT count(*) AS n FROM catalogue_search WHERE catalogue_search MATCH ?1", match)).first?.n ?? 0) : 0);
    }
    counts.sort((a, b) => a - b);
    result[name] = counts[Math.floor(counts.length / 2)]!;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const started = performance.now();
  const { state, build, reused } = await ensureCatalogue();
  log(reused ? `Reusing the catalogue in ${state}` : `Built in ${(build.total / 1000).toFixed(0)} s`);

  log("Bundling the search Worker…");
  const dist = join(benchRoot, "dist");
  const workerConfig = join(benchRoot, "wrangler.json");
  writeFileSync(
    workerConfig,
    JSON.stringify({
      name: "search-bench",
      main: join(import.meta.dirname, "searchWorker.ts"),
      compatibility_date: config.compatibility_date,
      compatibility_flags: ["nodejs_compat"],
    }),
  );
  run(wrangler, ["deploy", "--dry-run", "--config", workerConfig, "--outdir", dist]);

  const mf = miniflare(state, { scriptPath: join(dist, "searchWorker.js") });
  try {
    const base = await mf.unsafeGetDirectURL("search");
    const d1 = await mf.getD1Database("DB", "search");
    const { pools, domains } = await chooseQueries(d1);
    log("Checking the answers…");
    const agreement = await checkAnswers(base, pools, domains);

    const scenarios: [string, string[]][] = [["baseline", domains.map((domain) => `/domain?d=${encodeURIComponent(domain)}`)]];
    for (const impl of implementations) {
      for (const name of queryClasses) scenarios.push([`${impl}:${name}`, pools[name].map((query) => searchPath(query, impl))]);
    }
    log(`Measuring: ${rounds} rounds of ${seconds} s per class and mode, ${connections} connections for throughput…`);
    const samples = new Map<string, Figures[]>(scenarios.map(([name]) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const [name, paths] of scenarios) {
        const latency = await sequential(paths.map((path) => new URL(path, base).href));
        samples.get(name)!.push({ ...latency, rps: await throughput(base, paths) });
        // Requests autocannon left behind are still queued at the database: wait them out.
        await (await fetch(new URL(scenarios[0]![1][0]!, base))).arrayBuffer();
      }
      log(`  round ${round + 1} of ${rounds} done`);
    }
    log("Explaining…");
    const matches = await countMatches(d1, pools);
    const breakdown = await breakDown(base, d1, pools);
    report({ build, reused, samples, matches, pools, agreement, breakdown });
    log(`\nTotal time: ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await mf.dispose();
  }
}

function median(runs: Figures[], by: keyof Figures): number {
  const values = runs.map((run) => run[by]).sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)]!;
}

function report(r: {
  build: BuildReport;
  reused: boolean;
  samples: Map<string, Figures[]>;
  matches: Record<QueryClass, number>;
  pools: Record<QueryClass, string[]>;
  agreement: Awaited<ReturnType<typeof checkAnswers>>;
  breakdown: Record<QueryClass, Breakdown>;
}) {
  const { build } = r;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const n = (value: number) => value.toLocaleString("en");
  console.log(
    `\nCatalogue: ${n(build.companies)} companies, ${n(build.domains)} domains, ${n(build.tickers)} tickers, ${n(build.withAliases)} with aliases; ${(build.databaseBytes / 2 ** 20).toFixed(0)} MiB of D1`,
  );
  console.log(
    `Build${r.reused ? " (by an earlier run, reused)" : ""}: ${s(build.total)} = migrations ${s(build.migrate)} + tables ${s(build.tables)} + search index ${s(build.searchIndex)}`,
  );

  const baseline = r.samples.get("baseline")!;
  const base = { p50: median(baseline, "p50"), rps: median(baseline, "rps") };
  const ms = (value: number) => value.toFixed(1);
  const rps = (value: number) => (value < 10 ? value.toFixed(1) : value.toFixed(0));
  const times = (value: number) => `${value < 10 ? value.toFixed(1) : value.toFixed(0)}×`;
  const share = (value: number) => (value >= 0.01 ? value.toFixed(2) : value.toPrecision(1));
  // A class none of whose requests ends within the window has a throughput under one per window.
  const throughputOf = (runs: Figures[]) => {
    const value = median(runs, "rps");
    return value > 0 ? { value, below: "" } : { value: 1 / seconds, below: "<" };
  };
  console.log(
    `\nBaseline, GET /domain (findCompanyByDomain, two index point reads): p50 ${ms(base.p50)} ms, p99 ${ms(median(baseline, "p99"))} ms, ${rps(base.rps)} req/s`,
  );

  // One block of columns per implementation, then the speed-up of current over previous.
  const block = ["p50 ms".padStart(7), "p99 ms".padStart(7), "req/s".padStart(6), "p50 ×base".padStart(9), "req/s ×base".padStart(11)].join(" ");
  const figures = (runs: Figures[]) => {
    const p50 = median(runs, "p50");
    const { value, below } = throughputOf(runs);
    return [ms(p50).padStart(7), ms(median(runs, "p99")).padStart(7), `${below}${rps(value)}`.padStart(6), times(p50 / base.p50).padStart(9), `${below}${share(value / base.rps)}`.padStart(11)].join(" ");
  };
  const lead = `${"class".padEnd(16)} ${"example".padEnd(20)} ${"FTS matches".padStart(11)}`;
  const speedUp = `${"p50".padStart(6)} ${"req/s".padStart(6)}`;
  const groups = `${" ".repeat(lead.length)} │ ${"current: searchCompanies (src)".padEnd(block.length)} │ ${"previous: bm25 (searchPrevious.ts)".padEnd(block.length)} │ current vs previous`;
  const header = `${lead} │ ${block} │ ${block} │ ${speedUp}`;
  console.log(`\n${groups}\n${header}\n${"-".repeat(groups.length)}`);
  const timed: number[] = [];
  for (const name of queryClasses) {
    const current = r.samples.get(`current:${name}`)!;
    const previous = r.samples.get(`previous:${name}`)!;
    for (const runs of [current, previous]) timed.push(runs.reduce((sum, run) => sum + run.samples, 0));
    const [faster, slower] = [throughputOf(current), throughputOf(previous)];
    const throughputUp = faster.below ? "–" : `${slower.below ? ">" : ""}${times(faster.value / slower.value)}`;
    console.log(
      `${name.padEnd(16)} ${r.pools[name][0]!.slice(0, 20).padEnd(20)} ${n(r.matches[name]).padStart(11)} │ ${figures(current)} │ ${figures(previous)} │ ` +
        `${times(median(previous, "p50") / median(current, "p50")).padStart(6)} ${throughputUp.padStart(6)}`,
    );
  }
  console.log(
    `\np50/p99: one client, sequential, over the class's pool of ${r.pools["exact name"].length} queries (${Math.min(...timed)} to ${Math.max(...timed)} requests timed per class);` +
      ` req/s: ${connections} connections; medians over ${baseline.length} rounds. FTS matches: median over the pool.` +
      `\n×base: p50 as a multiple of the baseline's, req/s as a share of the baseline's. current vs previous: previous p50 ÷ current p50, current req/s ÷ previous req/s (above 1: current is faster).` +
      ` <: no request ended within the ${seconds} s window (median round): under one per window.`,
  );

  console.log(`\nWhere the time goes: the first query of each class. SQL ms and rows read as D1 reports them, summed over the statements sent.`);
  const lead2 = `${"class".padEnd(16)} ${"query".padEnd(20)} ${"FTS matches".padStart(11)} ${"count ms".padStart(8)} ${"bm25 top5".padStart(9)}`;
  const block2 = `${"stmts".padStart(5)} ${"SQL ms".padStart(7)} ${"rows read".padStart(10)}`;
  const agreement = `${"same 1st".padStart(8)} ${"same 5".padStart(6)}`;
  const groups2 = `${" ".repeat(lead2.length)} │ ${"current".padEnd(block2.length)} │ ${"previous".padEnd(block2.length)} │ current vs previous`;
  const header2 = `${lead2} │ ${block2} │ ${block2} │ ${agreement}`;
  console.log(`${groups2}\n${header2}\n${"-".repeat(groups2.length)}`);
  const total = (explained: Explained) => {
    const sqlTime = explained.statements.reduce((sum, statement) => sum + (statement.sqlMs ?? 0), 0);
    const read = explained.statements.reduce((sum, statement) => sum + statement.rowsRead, 0);
    return `${String(explained.statements.length).padStart(5)} ${sqlTime.toFixed(0).padStart(7)} ${n(read).padStart(10)}`;
  };
  for (const name of queryClasses) {
    const x = r.breakdown[name];
    const agree = r.agreement[name];
    console.log(
      `${name.padEnd(16)} ${x.query.slice(0, 20).padEnd(20)} ${n(x.matches).padStart(11)} ${x.countMs.toFixed(0).padStart(8)} ${x.bm25Ms.toFixed(0).padStart(9)} │ ${total(x.explained.current)} │ ${total(x.explained.previous)} │ ${`${agree.firstHit}/${agree.of}`.padStart(8)} ${`${agree.sameSet}/${agree.of}`.padStart(6)}`,
    );
  }
  console.log(
    "count ms: SELECT count(*) of the FTS matches; bm25 top5: the five best by bm25 from the FTS table alone; same 1st / same 5: queries of the pool where current's first hit / set of five equals previous's.",
  );

  for (const impl of implementations) {
    const statements = r.breakdown["1-letter prefix"].explained[impl].statements;
    const slowest = [...statements].sort((a, b) => (b.sqlMs ?? 0) - (a.sqlMs ?? 0));
    console.log(`\nQuery plans, ${impl}, "${r.breakdown["1-letter prefix"].query}":`);
    // The name phase: the statements that read the search index or the names.
    for (const statement of impl === "previous" ? slowest.slice(0, 1) : statements.filter((statement) => /catalogue_search|name_key/.test(statement.sql))) {
      console.log(`  ${statement.sqlMs} ms, ${n(statement.rowsRead)} rows read: ${statement.sql.replace(/\s+/g, " ").slice(0, 160)}…`);
      for (const step of statement.plan) console.log(`    ${step}`);
    }
  }
}

await main();
