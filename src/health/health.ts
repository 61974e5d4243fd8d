import { Hono } from "hono";
import type { AppEnv } from "../env";

/** GET /health: whether the Worker and its database answer. Cheap, uncached, no secrets. */
export const health = new Hono<AppEnv>().get("/health", async (c) => {
  try {
    await c.env.DB.prepare("SELECT 1").first();
    return c.json({ status: "ok", database: "ok" }, 200, { "Cache-Control": "no-store" });
  } catch (error) {
    console.error("health: database check failed", error);
    return c.json({ status: "degraded", database: "unavailable" }, 503, { "Cache-Control": "no-store" });
  }
});
