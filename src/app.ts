import { Hono } from "hono";
import { health } from "./health/health";

export type AppEnv = { Bindings: Env };

/** The HTTP face of the service: every route is mounted here; errors end here. */
export const app = new Hono<AppEnv>();

app.route("/", health);

app.notFound((c) => c.text("Not found", 404));

app.onError((error, c) => {
  // Detail goes to the logs only; the wire gets the spec's generic message.
  console.error(`unhandled error on ${c.req.method} ${new URL(c.req.url).pathname}`, error);
  return c.text("Internal server error", 500);
});
