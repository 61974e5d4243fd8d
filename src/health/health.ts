import { Hono } from "hono";
import { type AppEnv, checkedVars, configurationProblems, optionalSecretsMissing } from "../env";
import { dependency } from "../lib/dependencies";

/**
 * GET /health: whether the Worker and its database answer, and what the deployment's
 * configuration lacks (names only, never values). Cheap, uncached. 503 when the database does
 * not answer (within the deadline every D1 call has), or when vars do not validate, which
 * fails every lookup ("Service misconfigured"); missing secrets leave the lookup working, so
 * they are `degraded` with 200; optional ones (`optional`) leave the status as it is.
 */
export const health = new Hono<AppEnv>().get("/health", async (c) => {
  const problems = configurationProblems(c.env);
  const invalid = !checkedVars(c.env).ok;
  const configuration = problems.length === 0 ? { configuration: "ok" } : { configuration: invalid ? "invalid" : "incomplete", problems };
  try {
    await dependency("database", () => c.env.DB.prepare("SELECT 1").first());
  } catch (error) {
    console.error("health: database check failed", error);
    return c.json({ status: "degraded", database: "unavailable", ...configuration }, 503, { "Cache-Control": "no-store", "Retry-After": "30" });
  }
  // An optional secret left out (ANTHROPIC_API_KEY) is a choice: said, and the status stays.
  const unset = optionalSecretsMissing(c.env);
  const optional = unset.length === 0 ? {} : { optional: unset };
  return c.json({ status: problems.length === 0 ? "ok" : "degraded", database: "ok", ...configuration, ...optional }, invalid ? 503 : 200, { "Cache-Control": "no-store" });
});
