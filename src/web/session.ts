import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../lib/context";
import { currentSession, type SessionAccount } from "../accounts/browserSessions";

/** Routers of the portal's pages: the request context, and the signed-in account once `signedIn` ran. */
export type WebEnv = AppEnv<{ account: SessionAccount }>;

/**
 * The portal's pages need a signed-in browser (the session cookie of the JSON sign-in and the
 * OAuth pages). A page asked for without one is sent to sign in and brought back afterwards;
 * a form posted without one gets a page saying the session ended.
 */
export const signedIn = createMiddleware<WebEnv>(async (c, next) => {
  const account = await currentSession(c, c.var.ctx.db);
  if (!account) {
    if (c.req.method === "GET" || c.req.method === "HEAD") {
      const url = new URL(c.req.url);
      return c.redirect(`/portal/login?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
    }
    return c.redirect("/portal/login?ended=1", 303);
  }
  c.set("account", account);
  await next();
});

/** A `next` parameter is followed only to a page of the portal on this origin (no open redirect). */
export function portalPath(next: unknown): string {
  if (typeof next !== "string" || next.length > 500) return "/portal";
  const base = "http://portal.invalid";
  let url: URL;
  try {
    url = new URL(next, base);
  } catch {
    return "/portal";
  }
  if (url.origin !== base || !(url.pathname === "/portal" || url.pathname.startsWith("/portal/"))) return "/portal";
  return url.pathname + url.search;
}

/** A text field of a parsed form body, or "" (absent, or a file where text belongs). */
export function field(form: Record<string, unknown>, name: string): string {
  const value = form[name];
  return typeof value === "string" ? value : "";
}
