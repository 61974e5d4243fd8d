import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { routePath } from "hono/route";
import { readVars, type Vars } from "../env";
import { type CatalogueDb, catalogueReader, catalogueWriter, createDb, type Db } from "./db";
import { type Logger, log, withLogScope } from "./log";

/**
 * What every handler of a request needs, built once per request by `requestContext` (the
 * first middleware of the app) and read as `c.var.ctx`:
 *
 *   requestId   from Cloudflare's `cf-ray` where present, else made here; sent back on every
 *               response as `X-Request-Id`, in every JSON error body, on every log line
 *   db          the primary database (drizzle); `reader()` / `writer()` its D1 sessions
 *   vars        wrangler.toml's vars, validated (throws Misconfigured when they are not)
 *   defer       work that finishes after the answer (waitUntil)
 *   now         the clock: read it once per decision, so a test can set it
 *   log         the structured logger, every line tied to the request id
 *   keyPrefix   the non-secret prefix of the API key the request presented, once known,
 *               for the access log (never the key)
 */
export interface RequestContext {
  readonly requestId: string;
  readonly started: number;
  readonly db: Db;
  reader(after?: string | null): CatalogueDb;
  writer(): CatalogueDb;
  readonly vars: Vars;
  defer(work: Promise<unknown>): void;
  now(): number;
  readonly log: Logger;
  keyPrefix: string | undefined;
}

/** Every router of the Worker: the bindings, the request context, and any variables of its own. */
export type AppEnv<Variables extends object = object> = { Bindings: Env; Variables: { ctx: RequestContext } & Variables };

/**
 * The service's clock. Tests move it (test/helpers) instead of waiting for a minute to turn;
 * everything that decides by time reads it through the request context or directly.
 */
export const clock = { now: (): number => Date.now() };

// Made here when Cloudflare gave none (locally, in tests): unique across isolates by a random
// prefix, cheap within one by a counter. The prefix is drawn at the first request: Workers
// refuse random values in the global scope.
let isolatePrefix: string | undefined;
let counter = 0;

/** The id of a request: Cloudflare's ray id where it has one, so that our lines and Cloudflare's match. */
export function requestIdOf(request: Request): string {
  const ray = request.headers.get("cf-ray");
  if (ray && ray.length <= 64 && /^[\w-]+$/.test(ray)) return ray;
  isolatePrefix ??= Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0")).join("");
  return `${isolatePrefix}-${(++counter).toString(36)}`;
}

export const REQUEST_ID_HEADER = "X-Request-Id";

export function newRequestContext(env: Env, executionCtx: ExecutionContext | undefined, requestId: string): RequestContext {
  let db: Db | undefined;
  let vars: Vars | undefined;
  return {
    requestId,
    started: clock.now(),
    get db() {
      return (db ??= createDb(env.DB));
    },
    reader: (after) => catalogueReader(env.DB, after),
    writer: () => catalogueWriter(env.DB),
    get vars() {
      return (vars ??= readVars(env));
    },
    defer: (work) => {
      const settled = work.catch((error: unknown) => log.error("deferred_work_failed", { error }));
      if (executionCtx) executionCtx.waitUntil(settled);
    },
    now: () => clock.now(),
    log,
    keyPrefix: undefined,
  };
}

/** The context of a request already through `requestContext`; for code handed a Hono context. */
export function contextOf(c: Context): RequestContext {
  return (c.var as { ctx: RequestContext }).ctx;
}

function executionContextOf(c: Context): ExecutionContext | undefined {
  try {
    return c.executionCtx as ExecutionContext;
  } catch {
    // app.request() in a unit test has none.
    return undefined;
  }
}

/**
 * The first middleware: builds the request context, runs the rest of the app within the
 * request's log scope, stamps `X-Request-Id` on the answer and writes one access-log line
 * (method, route pattern, status, duration, key prefix).
 */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const requestId = requestIdOf(c.req.raw);
  const ctx = newRequestContext(c.env, executionContextOf(c), requestId);
  c.set("ctx", ctx);
  await withLogScope({ requestId }, next);
  stampRequestId(c, requestId);
  // The route of the handler that answered: the last one dispatched (Hono leaves its index set).
  accessLog(c.req.method, routePath(c) || "-", c.res.status, ctx);
});

function stampRequestId(c: Context, requestId: string): void {
  try {
    c.res.headers.set(REQUEST_ID_HEADER, requestId);
  } catch {
    // A response whose headers are immutable (one fetched whole from elsewhere): copied once.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(REQUEST_ID_HEADER, requestId);
  }
}

/**
 * The one line per request. Written without the logger's redaction: every field is the
 * service's own (a method, a route pattern, numbers, a key's non-secret prefix), and this line
 * is written for every hotlink the warm path answers.
 */
export function accessLog(
  method: string,
  route: string,
  status: number,
  ctx: Pick<RequestContext, "requestId" | "started" | "keyPrefix">,
): void {
  const line = { level: "info", event: "request", requestId: ctx.requestId, method, route, status, durationMs: clock.now() - ctx.started };
  console.log(JSON.stringify(ctx.keyPrefix ? { ...line, key: ctx.keyPrefix } : line));
}
