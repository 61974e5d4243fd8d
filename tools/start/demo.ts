import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { accounts, apiKeys } from "../../schema";
import { createAccount, passwordSchema } from "../../src/accounts/accounts";
import { hashPassword, verifyPassword } from "../../src/accounts/passwords";
import type { Db } from "../../src/lib/db";
import { fail, ok, type Result } from "../../src/lib/errors";
import { createKey } from "../../src/keys/apiKeys";

export const DEMO_EMAIL = "demo@example.com";
/** Local development only; `npm start` prints it. Override with DEMO_PASSWORD. */
export const DEFAULT_DEMO_PASSWORD = "logo-lookup-demo";

export interface DemoCredentials {
  accountId: string;
  email: string;
  password: string;
  publishableKey: string;
  secretKey: string;
  /** The ids of the two keys, for the next start to revoke. */
  keyIds: string[];
}

/**
 * DEMO_PASSWORD, or the default; held to the rules of any account's password before anything
 * starts. A server with a public address (PUBLIC_BASE_URL, for a tunnel) may be reached from
 * elsewhere, where the default, which the README prints, would sign anyone in to a Growth
 * account: there DEMO_PASSWORD must be set.
 */
export async function demoPassword(env: Record<string, string | undefined> = process.env, reachable = false): Promise<Result<string>> {
  if (reachable && !env.DEMO_PASSWORD) {
    return fail(
      "invalid_argument",
      "PUBLIC_BASE_URL is set, so this server may be reached from elsewhere: set DEMO_PASSWORD to a password of your own (the default one is in the README)",
    );
  }
  const password = env.DEMO_PASSWORD || DEFAULT_DEMO_PASSWORD;
  const checked = await passwordSchema.safeParseAsync(password);
  return checked.success ? ok(password) : fail("invalid_argument", `DEMO_PASSWORD ${checked.error.issues[0]!.message}`);
}

/**
 * Makes sure the local demo account exists with `password` and gives it a fresh publishable
 * and secret key. Keys are stored only as hashes, so the ones printed last time cannot be
 * shown again: each start revokes the keys the previous start printed (`previousKeyIds`) and
 * issues new ones; keys made in the portal as the demo account are left alone. The password
 * is printed too, so it must be the one that signs in: an account made with another one (the
 * default, or an earlier DEMO_PASSWORD) is given this one.
 */
export async function ensureDemoAccount(db: Db, password: string, previousKeyIds: string[] = []): Promise<Result<DemoCredentials>> {
  const account = await db.query.accounts.findFirst({ where: eq(accounts.email, DEMO_EMAIL), columns: { id: true, passwordHash: true } });
  let accountId: string;
  if (!account) {
    const created = await createAccount(db, { email: DEMO_EMAIL, password, plan: "growth", emailConfirmed: true });
    if (!created.ok) return fail(created.error.code, `demo account: ${created.error.message}`);
    accountId = created.value.id;
  } else {
    accountId = account.id;
    if (!(await verifyPassword(password, account.passwordHash))) {
      await db
        .update(accounts)
        .set({ passwordHash: await hashPassword(password), updatedAt: new Date() })
        .where(eq(accounts.id, accountId));
    }
  }
  if (previousKeyIds.length > 0) {
    await db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiKeys.accountId, accountId), inArray(apiKeys.id, previousKeyIds), isNull(apiKeys.revokedAt)));
  }
  const publishable = await createKey(db, { accountId, type: "publishable" });
  const secret = await createKey(db, { accountId, type: "secret" });
  if (!publishable.ok || !secret.ok) return fail("internal", "demo keys could not be created");
  return ok({
    accountId,
    email: DEMO_EMAIL,
    password,
    publishableKey: publishable.value.key,
    secretKey: secret.value.key,
    keyIds: [publishable.value.id, secret.value.id],
  });
}

/** The ids of the keys the last start printed (none when it left no file, or an unreadable one). */
export function printedKeyIds(file: string): string[] {
  try {
    const ids: unknown = JSON.parse(readFileSync(file, "utf8"));
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string") : [];
  } catch {
    return [];
  }
}

export function rememberPrintedKeys(file: string, ids: string[]): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(ids));
}
