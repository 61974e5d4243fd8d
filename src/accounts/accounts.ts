import { and, count, eq, not, type SQL } from "drizzle-orm";
import { z } from "zod";
import { accounts, apiClients, apiKeys, type Plan, plans, sessions } from "../../schema";
import type { Db } from "../lib/db";
import { fail, ok, type Result } from "../lib/errors";
import { hashPassword } from "./passwords";
import { weakPasswordReason } from "./passwordStrength";

export const emailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email({ message: "must be an email address" }).max(254));

/**
 * Long enough to resist guessing, short enough that PBKDF2 input stays cheap, and none of the
 * passwords guessed first (./passwordStrength.ts). Its check is asynchronous: parse it with
 * safeParseAsync.
 */
export const passwordSchema = z
  .string()
  .min(10, "must be at least 10 characters")
  .max(256, "must be at most 256 characters")
  .superRefine(async (password, ctx) => {
    if (password.length < 10 || password.length > 256) return;
    const weak = await weakPasswordReason(password);
    if (weak) ctx.addIssue({ code: "custom", message: weak });
  });

export const createAccountInput = z.object({
  email: emailSchema,
  password: passwordSchema,
  plan: z.enum(plans).default("free"),
  /** The address is known to be the owner's (an operator made the account): nothing to confirm. */
  emailConfirmed: z.boolean().default(false),
});

export interface AccountSummary {
  id: string;
  email: string;
  plan: Plan;
  clientId: string;
  createdAt: string;
}

/** Creates an account with its first API client, the one MCP access and feedback belong to. */
export async function createAccount(db: Db, raw: z.input<typeof createAccountInput>): Promise<Result<AccountSummary>> {
  const parsed = await createAccountInput.safeParseAsync(raw);
  if (!parsed.success) return fail("invalid_argument", z.prettifyError(parsed.error));
  const { email, password, plan, emailConfirmed } = parsed.data;

  const emailTaken = async () =>
    (await db.query.accounts.findFirst({ where: eq(accounts.email, email), columns: { id: true } })) !== undefined;
  const taken = fail("conflict", `An account with email ${email} already exists`);
  if (await emailTaken()) return taken;

  const now = new Date();
  const id = crypto.randomUUID();
  const clientId = crypto.randomUUID();
  const passwordHash = await hashPassword(password);
  // One batch is one transaction in D1: never an account without its client.
  try {
    await db.batch([
      db
        .insert(accounts)
        .values({ id, email, passwordHash, plan, emailConfirmedAt: emailConfirmed ? now : null, createdAt: now, updatedAt: now }),
      db.insert(apiClients).values({ id: clientId, accountId: id, name: "Default", createdAt: now }),
    ]);
  } catch (error) {
    // A concurrent sign-up with the same email (a double-submitted form) got in while the
    // password was hashed: UNIQUE on accounts.email refused this one, which is no outage.
    if (await emailTaken()) return taken;
    throw error;
  }
  return ok({ id, email, plan, clientId, createdAt: now.toISOString() });
}

export async function setPlan(db: Db, accountId: string, plan: string): Promise<Result<{ id: string; plan: Plan; previousPlan: Plan }>> {
  const parsedPlan = z.enum(plans).safeParse(plan);
  if (!parsedPlan.success) return fail("invalid_argument", `plan must be one of ${plans.join(", ")}`);
  const existing = await db.query.accounts.findFirst({ where: eq(accounts.id, accountId), columns: { plan: true } });
  if (!existing) return fail("not_found", `No account with id ${accountId}`);
  await db.update(accounts).set({ plan: parsedPlan.data, updatedAt: new Date() }).where(eq(accounts.id, accountId));
  return ok({ id: accountId, plan: parsedPlan.data, previousPlan: existing.plan });
}

/**
 * Gives an account a new password and ends every session it has: the way back for an owner
 * whose password or signed-in browser is someone else's too. Its keys and OAuth grants stay
 * (revoke those in the portal or with `key revoke`).
 */
export async function setPassword(db: Db, accountId: string, password: string): Promise<Result<{ id: string; sessionsEnded: number }>> {
  const parsed = await passwordSchema.safeParseAsync(password);
  if (!parsed.success) return fail("invalid_argument", `password ${parsed.error.issues[0]!.message}`);
  const existing = await db.query.accounts.findFirst({ where: eq(accounts.id, accountId), columns: { id: true } });
  if (!existing) return fail("not_found", `No account with id ${accountId}`);
  const passwordHash = await hashPassword(parsed.data);
  const [, ended] = await db.batch([
    db.update(accounts).set({ passwordHash, updatedAt: new Date() }).where(eq(accounts.id, accountId)),
    db.delete(sessions).where(eq(sessions.accountId, accountId)),
  ]);
  return ok({ id: accountId, sessionsEnded: ended.meta.changes });
}

/** Switches MCP access of one account off (abuse) or back on; its plan is left alone. */
export async function setMcpAccess(db: Db, accountId: string, enabled: boolean): Promise<Result<{ id: string; mcpAccess: boolean }>> {
  const existing = await db.query.accounts.findFirst({ where: eq(accounts.id, accountId), columns: { id: true } });
  if (!existing) return fail("not_found", `No account with id ${accountId}`);
  await db.update(accounts).set({ mcpAccess: enabled, updatedAt: new Date() }).where(eq(accounts.id, accountId));
  return ok({ id: accountId, mcpAccess: enabled });
}

/** What keeps an account from being deleted: a condition on its rows, and what the operator is told. */
export interface AccountKeeper {
  holds: SQL;
  reason: string;
}

/**
 * Deletes an account and everything that is only its own: its keys (lookups with them stop
 * within the 10 s an isolate trusts a key), sessions, API clients and billing rows; its OAuth
 * grants are refused from then on (a token outliving its account is as good as revoked), and
 * its feedback stays without it. The way out for an account someone registered under another
 * person's address, or for an owner who asks to be forgotten. Refused while any of `keepers`
 * holds (billing's stillChargeable: Stripe may still charge for it), decided in the delete
 * itself, so that a webhook between a check and the delete cannot slip through.
 */
export async function deleteAccount(
  db: Db,
  accountId: string,
  keepers: AccountKeeper[],
): Promise<Result<{ id: string; email: string; keysDeleted: number; sessionsEnded: number }>> {
  const existing = await db.query.accounts.findFirst({ where: eq(accounts.id, accountId), columns: { email: true } });
  if (!existing) return fail("not_found", `No account with id ${accountId}`);
  const [keys, ended, deleted] = await db.batch([
    db.select({ count: count() }).from(apiKeys).where(eq(apiKeys.accountId, accountId)),
    db.select({ count: count() }).from(sessions).where(eq(sessions.accountId, accountId)),
    db
      .delete(accounts)
      .where(and(eq(accounts.id, accountId), ...keepers.map((keeper) => not(keeper.holds))))
      .returning({ id: accounts.id }),
  ]);
  if (deleted.length === 0) {
    for (const keeper of keepers) {
      if (
        await db
          .select({ id: accounts.id })
          .from(accounts)
          .where(and(eq(accounts.id, accountId), keeper.holds))
          .get()
      )
        return fail("conflict", keeper.reason);
    }
    // What kept it has let go since, or another deletion came first.
    const still = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).get();
    return still
      ? fail("conflict", "The account changed while it was being deleted: try again")
      : fail("not_found", `No account with id ${accountId}`);
  }
  return ok({ id: accountId, email: existing.email, keysDeleted: keys[0]!.count, sessionsEnded: ended[0]!.count });
}
