import { log } from "./log";

/**
 * What the service depends on (D1, R2, the Images binding, Durable Objects, KV) can fail or
 * hang. Calls to them go through `dependency()`, which turns either into `Unavailable`: an
 * answer the edge of each route maps to 503 with Retry-After (retrying helps), as opposed to
 * an unexpected error, which is a 500. Nothing here knows about HTTP.
 */
export class Unavailable extends Error {
  constructor(
    readonly dependency: string,
    options?: { cause?: unknown },
  ) {
    super(`${dependency} unavailable`, options);
    this.name = "Unavailable";
  }
}

/**
 * The Unavailable behind an error, if there is one: libraries wrap what they catch (drizzle
 * reports a failed query as its own error, with ours as the cause).
 */
export function unavailableIn(error: unknown): Unavailable | undefined {
  for (const at of causesOf(error)) if (at instanceof Unavailable) return at;
  return undefined;
}

/** An error and the causes under it, outermost first (a few levels: libraries wrap once or twice). */
export function* causesOf(error: unknown): Generator<unknown> {
  for (let at = error, depth = 0; at !== undefined && depth < 5; at = at instanceof Error ? at.cause : undefined, depth++) yield at;
}

/** The innermost message of an error's causes: the database's own, not the query drizzle wraps it in. */
export function rootCause(error: unknown): string {
  return ([...causesOf(error)].findLast((at) => at instanceof Error) as Error | undefined)?.message ?? String(error);
}

/** How long a call may take before it counts as failed; tests lower it to make hangs quick. */
export const dependencyDeadline = { ms: 10_000 };

/** Seconds a client should wait before retrying a request refused with 503. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * `work`, or `Unavailable` if it fails or has not settled within the deadline; `waitsMs` more
 * for work that waits that long by design (a discovery's budget).
 */
export async function dependency<T>(name: string, work: Promise<T> | (() => Promise<T>), waitsMs = 0): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = dependencyDeadline.ms + waitsMs;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Unavailable(name, { cause: new Error(`no answer within ${limit} ms`) })), limit);
  });
  try {
    return await Promise.race([typeof work === "function" ? work() : work, deadline]);
  } catch (error) {
    throw error instanceof Unavailable ? error : new Unavailable(name, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A D1 binding whose every query goes through `dependency("database", …)`: what drizzle and
 * the raw statements of the service are built on (src/lib/db.ts), so no query can fail as a
 * bare exception. Statements are wrapped, never proxied: the binding's own objects do the work.
 */
export function guardedDatabase(d1: D1Database): D1Database {
  const guard = <T>(work: () => Promise<T>) => dependency("database", work);
  // A read that failed with a transient error runs again (within the deadline): it changes nothing.
  const statement = (real: D1PreparedStatement, reads: boolean): D1PreparedStatement => {
    const read = <T>(work: () => Promise<T>) => guard(reads ? () => retryTransient(work) : work);
    const wrapped = {
      [REAL]: real,
      bind: (...values: unknown[]) => statement(real.bind(...values), reads),
      first: (column?: string) => read(() => (column === undefined ? real.first() : real.first(column))),
      run: () => guard(() => real.run()),
      all: () => read(() => real.all()),
      raw: (options?: { columnNames?: boolean }) => read(() => real.raw(options as { columnNames?: false })),
    };
    return wrapped as unknown as D1PreparedStatement;
  };
  const unwrap = (statements: D1PreparedStatement[]) =>
    statements.map((s) => (s as unknown as { [REAL]?: D1PreparedStatement })[REAL] ?? s);
  const database = {
    prepare: (query: string) => statement(d1.prepare(query), readOnly(query)),
    batch: (statements: D1PreparedStatement[]) => guard(() => d1.batch(unwrap(statements))),
    exec: (query: string) => guard(() => d1.exec(query)),
    dump: () => guard(() => d1.dump()),
    withSession: (constraint?: D1SessionBookmark | D1SessionConstraint) => {
      const session = d1.withSession(constraint);
      return {
        prepare: (query: string) => statement(session.prepare(query), readOnly(query)),
        batch: (statements: D1PreparedStatement[]) => guard(() => session.batch(unwrap(statements))),
        getBookmark: () => session.getBookmark(),
      } as unknown as D1DatabaseSession;
    },
  };
  return database as unknown as D1Database;
}

const REAL = Symbol("real statement");

const readOnly = (query: string) => /^\s*(select|with)\b/i.test(query) && !/\b(insert|update|delete|replace|returning)\b/i.test(query);

/** SQLite refusing a query while another process holds its lock, in the words workerd logs it with. */
export const SQLITE_LOCKED = /SQLITE_BUSY|database is locked/i;

/**
 * D1's transient failures: an internal error or a lost connection (D1 itself retries reads on
 * those when deployed), and, locally, SQLite refusing a query while another process holds its
 * write lock (the first start's seeding beside the dev server), which workerd reports to
 * JavaScript as an internal error of the query. `failure` is an error, whose causes are read
 * too (drizzle and `dependency()` wrap what they catch), or a failure's message.
 */
export function isTransientDatabaseFailure(failure: unknown): boolean {
  for (const at of causesOf(failure)) {
    const message = at instanceof Error ? at.message : String(at);
    if (/internal error|network connection lost/i.test(message) || SQLITE_LOCKED.test(message)) return true;
  }
  return false;
}
const READ_RETRY_WAITS_MS = [50, 150, 300];

async function retryTransient<T>(work: () => Promise<T>): Promise<T> {
  for (const wait of READ_RETRY_WAITS_MS) {
    try {
      return await work();
    } catch (error) {
      if (!isTransientDatabaseFailure(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  return work();
}

/**
 * The data centre's Cache API is an optimisation, never a dependency: when it fails, a request
 * goes on as a miss and nothing is stored. `name` is a named cache, or null for the default.
 */
async function openCache(name: string | null): Promise<Cache> {
  return name === null ? caches.default : caches.open(name);
}

export async function cachedResponse(name: string | null, request: Request | string): Promise<Response | undefined> {
  try {
    return await (await openCache(name)).match(request);
  } catch (error) {
    log.warn("cache.read_failed", { cache: name ?? "default", error });
    return undefined;
  }
}

export async function storeResponse(name: string | null, request: Request | string, response: Response): Promise<void> {
  try {
    await (await openCache(name)).put(request, response);
  } catch (error) {
    log.warn("cache.write_failed", { cache: name ?? "default", error });
  }
}

/** Drops a cached answer; like the rest of the Cache API, never a dependency (false when it failed). */
export async function deleteCached(name: string | null, request: Request | string): Promise<boolean> {
  try {
    return await (await openCache(name)).delete(request);
  } catch (error) {
    log.warn("cache.delete_failed", { cache: name ?? "default", error });
    return false;
  }
}
