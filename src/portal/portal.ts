import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { eq } from "drizzle-orm";
import { apiClients } from "../../schema";
import type { AppEnv } from "../lib/context";
import { MAX_FORM_BYTES } from "../lib/params";
import { jsonError, jsonErrorHandler } from "../lib/responses";
import { currentSession, endBrowserSession, sameSiteOnly, signInBrowser } from "../accounts/browserSessions";

/**
 * Portal sign-in (spec section 4): one login under three paths, whoami under two, logout.
 * Bodies are JSON or forms; answers are JSON; errors are `{"error": "<message>", "code": "<code>"}`.
 * The session cookie is HttpOnly, SameSite=Lax, Secure except on localhost, and carries an
 * opaque id that is replaced at every sign-in (no session fixation).
 */

async function readCredentials(c: Context<AppEnv>): Promise<unknown> {
  const type = c.req.header("content-type") ?? "";
  if (type.includes("application/json")) return c.req.json();
  if (type.includes("application/x-www-form-urlencoded") || type.includes("multipart/form-data")) return c.req.parseBody();
  throw new Error("unsupported content type");
}

async function login(c: Context<AppEnv>) {
  let body: unknown;
  try {
    body = await readCredentials(c);
  } catch {
    return jsonError(c, "invalid_argument", "Send email and password as JSON or as a form");
  }
  const db = c.var.ctx.db;
  const result = await signInBrowser(c, db, body);
  if (!result.ok) {
    const headers: Record<string, string> = result.retryAfter ? { "Retry-After": String(result.retryAfter) } : {};
    return jsonError(c, result.error.code, result.error.message, headers);
  }
  const account = result.value;
  c.header("Cache-Control", "no-store");
  return c.json({ account: { id: account.id, email: account.email, plan: account.plan } });
}

async function whoami(c: Context<AppEnv>) {
  const db = c.var.ctx.db;
  const account = await currentSession(c, db);
  if (!account) return jsonError(c, "unauthorized", "Not signed in");
  const clients = await db
    .select({ id: apiClients.id, name: apiClients.name })
    .from(apiClients)
    .where(eq(apiClients.accountId, account.id))
    .all();
  c.header("Cache-Control", "no-store");
  // The identity, as the sign-in answers it (docs/portal.md): not what the portal's pages use it for.
  return c.json({ account: { id: account.id, email: account.email, plan: account.plan }, clients });
}

async function logout(c: Context<AppEnv>) {
  await endBrowserSession(c, c.var.ctx.db);
  return c.body(null, 204);
}

// A post from another site must not sign a browser in or out (login CSRF): sameSiteOnly.
// Attached per route: an app-wide middleware pattern cost every lookup 14 µs (npm run bench).
const credentialsLimit = bodyLimit({ maxSize: MAX_FORM_BYTES, onError: (c) => jsonError(c, "payload_too_large", "Payload too large") });

/** `/login`, `/whoami`, `/logout`: mounted under `/apiaas` and `/api/v1/auth` (src/app.ts). */
export const portal = new Hono<AppEnv>()
  .onError(jsonErrorHandler("Something went wrong. Try again later"))
  .post("/login", sameSiteOnly, credentialsLimit, login)
  .get("/whoami", whoami)
  .post("/logout", sameSiteOnly, logout);

/** The spec's third sign-in path, `/api/v1/login`: the login alone, mounted under `/api/v1`. */
export const loginOnly = new Hono<AppEnv>()
  .onError(jsonErrorHandler("Something went wrong. Try again later"))
  .post("/login", sameSiteOnly, credentialsLimit, login);
