import { Hono } from "hono";
import { checkedVars, configurationProblems, optionalSecretsMissing } from "../env";
import type { AppEnv } from "../lib/context";
import { dependency } from "../lib/dependencies";
import { log } from "../lib/log";

/**
 * GET /health: whether the Worker, its database and its object storage answer, and what the
 * deployment's configuration lacks (names only, never values). Cheap, uncached. 503 when the
 * database or the bucket does not answer (within the deadline every call to them has): lookups
 * need the one to find a logo and the other to serve it. 503 too when vars do not validate,
 * which fails every lookup ("Service misconfigured"); missing secrets leave the lookup working,
 * so they are `degraded` with 200; optional ones (`optional`) leave the status as it is.
 */
export const health = new Hono<AppEnv>().get("/", async (c) => {
  const problems = configurationProblems(c.env);
  const invalid = !checkedVars(c.env).ok;
  const configuration = problems.length === 0 ? { configuration: "ok" } : { configuration: invalid ? "invalid" : "incomplete", problems };
  const answers = async (name: string, check: () => Promise<unknown>) => {
    try {
      await dependency(name, check);
      return "ok";
    } catch (error) {
      log.error("health.check_failed", { check: name, error });
      return "unavailable";
    }
  };
  // A HEAD of a key no logo uses: R2 answers it (null) without reading an object.
  const [database, storage] = await Promise.all([
    answers("database", () => c.env.DB.prepare("SELECT 1").first()),
    answers("object storage", () => c.env.LOGOS.head(HEALTH_PROBE_KEY)),
  ]);
  if (database !== "ok" || storage !== "ok") {
    return c.json({ status: "degraded", database, storage, ...configuration }, 503, { "Cache-Control": "no-store", "Retry-After": "30" });
  }
  // An optional secret left out (ANTHROPIC_API_KEY) is a choice: said, and the status stays.
  const unset = optionalSecretsMissing(c.env);
  const optional = unset.length === 0 ? {} : { optional: unset };
  return c.json(
    { status: problems.length === 0 ? "ok" : "degraded", database, storage, ...configuration, ...optional },
    invalid ? 503 : 200,
    { "Cache-Control": "no-store" },
  );
});

/** Outside `logos/`, the only prefix objects are written under: never an object. */
const HEALTH_PROBE_KEY = "health/probe";
