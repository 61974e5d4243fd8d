import { localhostAllowedHostnames } from "@modelcontextprotocol/server";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context";
import { jsonError } from "./responses";

/**
 * DNS-rebinding protection for a local server. Without PUBLIC_BASE_URL the service names itself
 * after the request, and a plain-http request can only be a local server (Cloudflare serves
 * https): its Host must then be a local name, or a page on another site that pointed its own
 * name at 127.0.0.1 would be served under that name. Routes that name the service (discovery,
 * authorization, /mcp) refuse such requests with 403 before anything else.
 */
export const localHostOnly = createMiddleware<AppEnv>(async (c, next) => {
  const url = new URL(c.req.url);
  if (!c.var.ctx.vars.PUBLIC_BASE_URL && url.protocol === "http:" && !localhostAllowedHostnames().includes(url.hostname)) {
    return jsonError(c, "forbidden", `Invalid Host: ${url.hostname}`);
  }
  await next();
});
