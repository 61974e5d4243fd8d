import { eq } from "drizzle-orm";
import { z } from "zod";
import { accounts } from "../../schema";
import type { Db } from "../lib/db";
import { fail, ok, type Result } from "../lib/errors";
import { emailSchema } from "./accounts";
import { limiterNames, rateLimiterFor } from "../limits/rateLimiterClient";
import { hashPassword, verifyPassword } from "./passwords";

/**
 * Signing in with email and password, shared by the portal's JSON login and the OAuth sign-in
 * page: the same validation, the same rate limits, the same timing for unknown emails.
 */
export const credentialsSchema = z.object({
  email: emailSchema,
  password: z.string().min(1, "password is required").max(256),
});

/** Sign-in attempts per minute, per client address and per account. */
export const SIGN_IN_LIMITS = { perAddress: 20, perAccount: 10 };

export interface SignedIn {
  id: string;
  email: string;
  plan: (typeof accounts.$inferSelect)["plan"];
}

// Checked against when the email is unknown, so that a miss takes as long as a wrong password.
let decoyHash: Promise<string> | undefined;

/**
 * Checks the credentials of one attempt. Failures are `invalid_argument` (malformed),
 * `rate_limited` (with the seconds to wait in the message's `retryAfter`) or `unauthorized`,
 * which never says whether the email exists.
 */
export async function signIn(
  env: Env,
  db: Db,
  raw: unknown,
  address: string,
): Promise<Result<SignedIn> & { retryAfter?: number }> {
  const parsed = credentialsSchema.safeParse(raw);
  if (!parsed.success) return fail("invalid_argument", z.prettifyError(parsed.error));
  const { email, password } = parsed.data;

  const limit = await signInAllowed(env, address, email);
  if (!limit.allowed) return { ...fail("rate_limited", "Too many sign-in attempts. Try again later."), retryAfter: limit.retryAfter };

  const account = await db.query.accounts.findFirst({ where: eq(accounts.email, email) });
  decoyHash ??= hashPassword(crypto.randomUUID());
  const valid = await verifyPassword(password, account?.passwordHash ?? (await decoyHash));
  if (!account || !valid) return fail("unauthorized", "Invalid email or password");
  return ok({ id: account.id, email: account.email, plan: account.plan });
}

/**
 * Counts one attempt against the sign-in limits of an address and an account (email). Sign-up
 * counts against the same limits: it is a guess at an account just as a sign-in is.
 */
export async function signInAllowed(env: Env, address: string, email: string): Promise<{ allowed: boolean; retryAfter: number }> {
  const now = Date.now();
  const check = (name: string, limit: number) =>
    rateLimiterFor(env, name).consume([{ name: "sign-in", period: "minute", limit }], 1, now);
  const [byAddress, byAccount] = await Promise.all([
    check(limiterNames.signInAddress(address), SIGN_IN_LIMITS.perAddress),
    check(limiterNames.signInAccount(email), SIGN_IN_LIMITS.perAccount),
  ]);
  const refused = [byAddress, byAccount].find((d) => !d.allowed);
  return { allowed: !refused, retryAfter: refused ? Math.max(1, Math.ceil((refused.resetAt - now) / 1000)) : 0 };
}
