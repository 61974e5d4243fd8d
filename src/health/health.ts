import { Hono } from "hono";
import { type AppEnv, configurationProblems } from "../env";

/**
 * GET /health: whether the Worker and its database answer, and what the deployment's
 * configuration lacks (names only, never values). Cheap, uncached. 503 only when the database
 * does not answer; configuration problems leave the lookup working, so they are `degraded`.
 */
export const health = new Hono<AppEnv>().get("/health", async (c) => {
  const problems = configurationProblems(c.env);
  const configuration = problems.length === 0 ? { configuration: "ok" } : { configuration: "incomplete", problems };
  try {
    await c.env.DB.prepare("SELECT 1").first();
    return c.json({ status: problems.length === 0 ? "ok" : "degraded", database: "ok", ...configuration }, 200, { "Cache-Control": "no-store" });
  } catch (error) {
    console.error("health: database check failed", error);
    return c.json({ status: "degraded", database: "unavailable", ...configuration }, 503, { "Cache-Control": "no-store", "Retry-After": "30" });
  }
});
