import { and, eq, gt, lte, sql } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { accounts, sessions } from "../../schema";
import type { AppEnv } from "../lib/context";
import { limitedAddress } from "../lib/address";
import type { Db } from "../lib/db";
import { DEVICE_COOKIE, DEVICE_TTL_SECONDS, type DeviceAccount, deviceToken } from "./devices";
import { INVALID_CREDENTIALS, type SignedIn, type SignInClient, signIn } from "./signIn";
import { fail, type Result } from "../lib/errors";
import { sha256Hex, toBase64Url } from "../lib/encoding";
import { bearerToken, jsonError } from "../lib/responses";
import { DAY_MS } from "../lib/time";

export const SESSION_COOKIE = "session";
export const SESSION_TTL_MS = 30 * DAY_MS;

/**
 * Starts a session: a fresh opaque id for the cookie, stored only as its hash. The account's
 * expired sessions go in the same batch: nothing else ever deletes a session its browser
 * dropped (a script signing in without keeping the cookie leaves one a call).
 */
export async function startSession(db: Db, accountId: string, now = new Date()): Promise<{ id: string; expiresAt: Date }> {
  return (await openSession(db, accountId, now))!;
}

/**
 * startSession for a sign-in: only while `passwordHash`, the one its password was checked
 * against, is still the account's, or null. A password change commits its new hash and ends
 * every session in one batch; a sign-in with the old password that was checked before it and
 * wrote its session after it would otherwise outlive the change.
 */
export async function openSession(
  db: Db,
  accountId: string,
  now: Date,
  passwordHash?: string,
): Promise<{ id: string; expiresAt: Date } | null> {
  const id = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  const row = { idHash: await sha256Hex(id), accountId, createdAt: now, expiresAt };
  const insert =
    passwordHash === undefined
      ? db.insert(sessions).values(row)
      : db.insert(sessions).select(
          db
            .select({
              idHash: sql<string>`${row.idHash}`.as("id_hash"),
              accountId: accounts.id,
              createdAt: sql<Date>`${now.getTime()}`.as("created_at"),
              expiresAt: sql<Date>`${expiresAt.getTime()}`.as("expires_at"),
            })
            .from(accounts)
            .where(and(eq(accounts.id, accountId), eq(accounts.passwordHash, passwordHash))),
        );
  const [, inserted] = await db.batch([
    db.delete(sessions).where(and(eq(sessions.accountId, accountId), lte(sessions.expiresAt, now))),
    insert,
  ]);
  return inserted.meta.changes > 0 ? { id, expiresAt } : null;
}

export interface SessionAccount {
  id: string;
  email: string;
  plan: (typeof accounts.$inferSelect)["plan"];
  /** Whether the owner confirmed the address (emailConfirmation.ts). */
  emailConfirmed: boolean;
}

/** The account behind a cookie value, or null for an unknown, expired or ended session. */
export async function sessionAccount(db: Db, id: string | undefined, now = new Date()): Promise<SessionAccount | null> {
  if (!id || id.length > 100) return null;
  const row = await db
    .select({ id: accounts.id, email: accounts.email, plan: accounts.plan, emailConfirmedAt: accounts.emailConfirmedAt })
    .from(sessions)
    .innerJoin(accounts, eq(accounts.id, sessions.accountId))
    .where(and(eq(sessions.idHash, await sha256Hex(id)), gt(sessions.expiresAt, now)))
    .get();
  if (!row) return null;
  const { emailConfirmedAt, ...account } = row;
  return { ...account, emailConfirmed: emailConfirmedAt !== null };
}

export async function endSession(db: Db, id: string | undefined): Promise<void> {
  if (!id || id.length > 100) return;
  await db.delete(sessions).where(eq(sessions.idHash, await sha256Hex(id)));
}

/*
 * The browser side: one cookie, `__Host-session` (plain `session` on a local server), HttpOnly,
 * SameSite=Lax, Secure except on localhost, holding the opaque id. Used by the portal and by the
 * OAuth sign-in page alike.
 */

/** Cookies are Secure except on a local server, which is plain http. */
const secureOn = <E extends AppEnv>(c: Context<E>) => !isLocalhost(new URL(c.req.url).hostname);

/**
 * A cookie's name on this host: `__Host-` before it wherever it is Secure, which browsers then
 * accept only from this very host (Secure, Path=/, no Domain), so a sibling host under the same
 * parent domain can neither plant nor overwrite it. A local server keeps the bare name: a
 * `__Host-` cookie cannot be set without Secure.
 */
function cookieName<E extends AppEnv>(c: Context<E>, name: string): string {
  return secureOn(c) ? `__Host-${name}` : name;
}

/**
 * A browser signing in with email and password (the portal's JSON login and sign-in page, the
 * OAuth sign-in page): the credentials checked as signIn checks them, then the session started.
 * The password is checked and the session written apart, so one changed in between makes the
 * attempt a wrong password's (replaceSession).
 */
export async function signInBrowser<E extends AppEnv>(
  c: Context<E>,
  db: Db,
  credentials: unknown,
): Promise<Result<SignedIn> & { retryAfter?: number }> {
  const result = await signIn(c.env as Env, db, credentials, signInClient(c));
  if (!result.ok) return result;
  return (await replaceSession(c, db, result.value)) ? result : fail("unauthorized", INVALID_CREDENTIALS);
}

/**
 * Signs the browser in: a fresh id every time, and any session it brought along is ended (no
 * fixation). The browser also keeps a device token for the account (src/accounts/devices.ts).
 * After a sign-in, `checked` is the password it was checked against (SignedIn): the session
 * starts only while that is still the account's password, and false says it no longer is (the
 * password changed meanwhile). Without it (sign-up, the browser that just changed the password)
 * the account's present password counts.
 */
export async function replaceSession<E extends AppEnv>(
  c: Context<E>,
  db: Db,
  account: { id: string; checked?: DeviceAccount },
): Promise<boolean> {
  const { checked } = account;
  await endSession(db, getCookie(c, cookieName(c, SESSION_COOKIE)));
  const session = await openSession(db, account.id, new Date(), checked?.passwordHash);
  if (!session) return false;
  const attributes = { httpOnly: true, sameSite: "Lax", secure: secureOn(c), path: "/" } as const;
  setCookie(c, cookieName(c, SESSION_COOKIE), session.id, { ...attributes, maxAge: SESSION_TTL_MS / 1000 });
  const secret = (c.env as Env).SIGNED_URL_SECRET;
  const credentials = secret
    ? (checked ?? (await db.query.accounts.findFirst({ where: eq(accounts.id, account.id), columns: { email: true, passwordHash: true } })))
    : undefined;
  if (secret && credentials)
    setCookie(c, cookieName(c, DEVICE_COOKIE), await deviceToken(secret, credentials), { ...attributes, maxAge: DEVICE_TTL_SECONDS });
  return true;
}

/** Who is making a sign-in attempt: the address limits count, and the device token it brings. */
export function signInClient<E extends AppEnv>(c: Context<E>): SignInClient {
  return { address: clientAddress(c), device: getCookie(c, cookieName(c, DEVICE_COOKIE)) };
}

export function currentSession<E extends AppEnv>(c: Context<E>, db: Db): Promise<SessionAccount | null> {
  return sessionAccount(db, getCookie(c, cookieName(c, SESSION_COOKIE)));
}

export async function endBrowserSession<E extends AppEnv>(c: Context<E>, db: Db): Promise<void> {
  const name = cookieName(c, SESSION_COOKIE);
  await endSession(db, getCookie(c, name));
  deleteCookie(c, name, { path: "/", secure: secureOn(c) });
}

/**
 * Cross-site request forgery, refused for every POST a session cookie may authenticate: the
 * browser must say the request comes from this site (`Sec-Fetch-Site: same-origin`, or failing
 * that a same-origin `Origin`), whatever the body's type. SameSite=Lax alone is not enough: a
 * text/plain body carrying JSON needs no preflight. Requests authenticated by a bearer key do
 * not ride on the cookie and pass. A request naming neither header passes only with a body no
 * page can send cross-site without a CORS preflight (JSON); a form or plain text does not.
 */
export const sameSiteOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (bearerToken(c.req.header("authorization")) === undefined && !fromThisSite(c))
    return jsonError(c, "forbidden", "Cross-site request refused");
  await next();
});

/** Bodies a page on any site may post without a CORS preflight (the Fetch standard's safelist). */
const SIMPLE_BODY = /^\s*(application\/x-www-form-urlencoded|multipart\/form-data|text\/plain)\b/i;

function fromThisSite(c: Context<AppEnv>): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined) return site === "same-origin";
  const origin = c.req.header("origin");
  if (origin !== undefined) return origin === new URL(c.req.url).origin;
  return !SIMPLE_BODY.test(c.req.header("content-type") ?? "text/plain");
}

/** The address per-address limits (sign-in, the landing page's playground) count a client by (limitedAddress). */
export function clientAddress<E extends AppEnv>(c: Context<E>): string {
  return limitedAddress(c.req.header("cf-connecting-ip") ?? "unknown");
}

function isLocalhost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "127.0.0.1" || hostname === "[::1]" || hostname.endsWith(".localhost");
}
