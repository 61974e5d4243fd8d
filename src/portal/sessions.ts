import { and, eq, gt } from "drizzle-orm";
import { accounts, sessions } from "../../schema";
import type { Db } from "../lib/db";
import { sha256Hex, toBase64Url } from "../lib/encoding";

export const SESSION_COOKIE = "session";
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** Starts a session: a fresh opaque id for the cookie, stored only as its hash. */
export async function startSession(db: Db, accountId: string, now = new Date()): Promise<{ id: string; expiresAt: Date }> {
  const id = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await db.insert(sessions).values({ idHash: await sha256Hex(id), accountId, createdAt: now, expiresAt });
  return { id, expiresAt };
}

export interface SessionAccount {
  id: string;
  email: string;
  plan: (typeof accounts.$inferSelect)["plan"];
}

/** The account behind a cookie value, or null for an unknown, expired or ended session. */
export async function sessionAccount(db: Db, id: string | undefined, now = new Date()): Promise<SessionAccount | null> {
  if (!id || id.length > 100) return null;
  const row = await db
    .select({ id: accounts.id, email: accounts.email, plan: accounts.plan })
    .from(sessions)
    .innerJoin(accounts, eq(accounts.id, sessions.accountId))
    .where(and(eq(sessions.idHash, await sha256Hex(id)), gt(sessions.expiresAt, now)))
    .get();
  return row ?? null;
}

export async function endSession(db: Db, id: string | undefined): Promise<void> {
  if (!id || id.length > 100) return;
  await db.delete(sessions).where(eq(sessions.idHash, await sha256Hex(id)));
}
