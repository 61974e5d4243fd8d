import { and, eq, isNull } from "drizzle-orm";
import { accounts, apiKeys } from "../../../schema";
import { createAccount } from "../../accounts/accounts";
import type { Db } from "../../lib/db";
import { createKey } from "../../keys/apiKeys";

export const DEMO_EMAIL = "demo@example.com";
/** Local development only; `npm start` prints it. Override with DEMO_PASSWORD. */
export const DEFAULT_DEMO_PASSWORD = "logo-lookup-demo";

export interface DemoCredentials {
  accountId: string;
  email: string;
  password: string;
  publishableKey: string;
  secretKey: string;
}

/**
 * Makes sure the local demo account exists and gives it a fresh publishable and secret key.
 * Keys are stored only as hashes, so the ones printed last time cannot be shown again: each
 * start revokes the previous demo keys and issues new ones.
 */
export async function ensureDemoAccount(db: Db, password = process.env.DEMO_PASSWORD || DEFAULT_DEMO_PASSWORD): Promise<DemoCredentials> {
  let account = await db.query.accounts.findFirst({ where: eq(accounts.email, DEMO_EMAIL), columns: { id: true } });
  if (!account) {
    const created = await createAccount(db, { email: DEMO_EMAIL, password, plan: "growth" });
    if (!created.ok) throw new Error(`demo account: ${created.error.message}`);
    account = { id: created.value.id };
  }
  await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.accountId, account.id), isNull(apiKeys.revokedAt)));
  const publishable = await createKey(db, { accountId: account.id, type: "publishable" });
  const secret = await createKey(db, { accountId: account.id, type: "secret" });
  if (!publishable.ok || !secret.ok) throw new Error("demo keys could not be created");
  return { accountId: account.id, email: DEMO_EMAIL, password, publishableKey: publishable.value.key, secretKey: secret.value.key };
}
