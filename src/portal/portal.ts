import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { accounts, apiClients } from "../../schema";
import { emailSchema } from "../accounts/accounts";
import { hashPassword, verifyPassword } from "../accounts/passwords";
import type { AppEnv } from "../app";
import { createDb } from "../lib/db";
import type { ErrorCode } from "../lib/errors";
import { statusOf } from "../lib/errors";
import { endSession, SESSION_COOKIE, SESSION_TTL_MS, sessionAccount, startSession } from "./sessions";

/**
 * Portal sign-in (spec section 4): one login under three paths, whoami under two, logout.
 * Bodies are JSON or forms; answers are JSON; errors are {error: {code, message}}.
 * The session cookie is HttpOnly, SameSite=Lax, Secure except on localhost, and carries an
 * opaque id that is replaced at every sign-in (no session fixation).
 */
const credentials = z.object({
  email: emailSchema,
  password: z.string().min(1, "password is required").max(256),
});

/** Sign-in attempts per minute, per client address and per account. */
export const SIGN_IN_LIMITS = { perAddress: 20, perAccount: 10 };

const error = (c: Context<AppEnv>, code: ErrorCode, message: string, headers: Record<string, string> = {}) =>
  c.json({ error: { code, message } }, statusOf(code), { "Cache-Control": "no-store", ...headers });

async function readCredentials(c: Context<AppEnv>): Promise<unknown> {
  const type = c.req.header("content-type") ?? "";
  if (type.includes("application/json")) return c.req.json();
  if (type.includes("application/x-www-form-urlencoded") || type.includes("multipart/form-data")) return c.req.parseBody();
  throw new Error("unsupported content type");
}

// Checked against when the email is unknown, so that a miss takes as long as a wrong password.
let decoyHash: Promise<string> | undefined;

async function signInAllowed(env: Env, address: string, email: string): Promise<{ allowed: boolean; retryAfter: number }> {
  const now = Date.now();
  const check = (name: string, limit: number) =>
    env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name)).consume([{ name: "sign-in", period: "minute", limit }], 1, now);
  const [byAddress, byAccount] = await Promise.all([
    check(`sign-in:address:${address}`, SIGN_IN_LIMITS.perAddress),
    check(`sign-in:account:${email}`, SIGN_IN_LIMITS.perAccount),
  ]);
  const refused = [byAddress, byAccount].find((d) => !d.allowed);
  return { allowed: !refused, retryAfter: refused ? Math.max(1, Math.ceil((refused.resetAt - now) / 1000)) : 0 };
}

async function login(c: Context<AppEnv>) {
  let body: unknown;
  try {
    body = await readCredentials(c);
  } catch {
    return error(c, "invalid_argument", "Send email and password as JSON or as a form");
  }
  const parsed = credentials.safeParse(body);
  if (!parsed.success) return error(c, "invalid_argument", z.prettifyError(parsed.error));
  const { email, password } = parsed.data;

  const address = c.req.header("cf-connecting-ip") ?? "unknown";
  const limit = await signInAllowed(c.env, address, email);
  if (!limit.allowed) return error(c, "rate_limited", "Too many sign-in attempts. Try again later.", { "Retry-After": String(limit.retryAfter) });

  const db = createDb(c.env.DB);
  const account = await db.query.accounts.findFirst({ where: eq(accounts.email, email) });
  decoyHash ??= hashPassword(crypto.randomUUID());
  const valid = await verifyPassword(password, account?.passwordHash ?? (await decoyHash));
  if (!account || !valid) return error(c, "unauthorized", "Invalid email or password");

  // A new id at every sign-in; any session the browser brought along is ended.
  await endSession(db, getCookie(c, SESSION_COOKIE));
  const session = await startSession(db, account.id);
  setCookie(c, SESSION_COOKIE, session.id, {
    httpOnly: true,
    sameSite: "Lax",
    secure: !isLocalhost(new URL(c.req.url).hostname),
    path: "/",
    maxAge: SESSION_TTL_MS / 1000,
  });
  c.header("Cache-Control", "no-store");
  return c.json({ account: { id: account.id, email: account.email, plan: account.plan } });
}

async function whoami(c: Context<AppEnv>) {
  const db = createDb(c.env.DB);
  const account = await sessionAccount(db, getCookie(c, SESSION_COOKIE));
  if (!account) return error(c, "unauthorized", "Not signed in");
  const clients = await db.select({ id: apiClients.id, name: apiClients.name }).from(apiClients).where(eq(apiClients.accountId, account.id)).all();
  c.header("Cache-Control", "no-store");
  return c.json({ account, clients });
}

async function logout(c: Context<AppEnv>) {
  await endSession(createDb(c.env.DB), getCookie(c, SESSION_COOKIE));
  deleteCookie(c, SESSION_COOKIE, { path: "/" });
  return c.body(null, 204);
}

function isLocalhost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "127.0.0.1" || hostname === "[::1]" || hostname.endsWith(".localhost");
}

export const portal = new Hono<AppEnv>();
for (const path of ["/apiaas/login", "/api/v1/auth/login", "/api/v1/login"]) portal.post(path, login);
for (const path of ["/apiaas/whoami", "/api/v1/auth/whoami"]) portal.get(path, whoami);
for (const path of ["/apiaas/logout", "/api/v1/auth/logout"]) portal.post(path, logout);
