import { eq } from "drizzle-orm";
import { z } from "zod";
import { accounts } from "../../schema";
import type { Db } from "../lib/db";
import { fail, ok, type Result } from "../lib/errors";
import { emailSchema } from "./accounts";
import type { LimitWindow } from "../limits/rateLimiter";
import { askLimiter, limiterNames } from "../limits/rateLimiterClient";
import { type DeviceAccount, knownDevice } from "./devices";
import { DECOY_HASH, verifyPassword } from "./passwords";

/**
 * Signing in with email and password, shared by the portal's JSON login and the OAuth sign-in
 * page: the same validation, the same rate limits, the same timing for unknown emails.
 */
export const credentialsSchema = z.object({
  email: emailSchema,
  password: z.string().min(1, "password is required").max(256),
});

/**
 * Sign-in attempts per minute: per client address; per account from one address, so that
 * guesses from one place cannot lock the owner out elsewhere; and per account from everywhere,
 * a ceiling against guessing spread over many addresses. An attempt from a browser that signed
 * in to the account before (a device token, src/accounts/devices.ts) counts per browser
 * instead of the two per-account limits, so that filling the ceiling locks out no such browser;
 * a token also has a day's limit, so that one stolen with a browser guesses slowly for good.
 */
export const SIGN_IN_LIMITS = { perAddress: 20, perAccountAndAddress: 10, perAccount: 100, perDevice: 10, perDevicePerDay: 100 };

/** Who attempts: the address per-address limits count (clientAddress), and its device token. */
export interface SignInClient {
  address: string;
  device: string | undefined;
}

export interface SignedIn {
  id: string;
  email: string;
  plan: (typeof accounts.$inferSelect)["plan"];
  /**
   * The password the attempt was checked against: its session starts only while that is still
   * the account's (replaceSession), and its device token is signed for it.
   */
  checked: DeviceAccount;
}

/** What a sign-in with a wrong email or password is told, either way. */
export const INVALID_CREDENTIALS = "Invalid email or password";

/**
 * Checks the credentials of one attempt. Failures are `invalid_argument` (malformed),
 * `rate_limited` (with the seconds to wait in the message's `retryAfter`) or `unauthorized`,
 * which never says whether the email exists.
 */
export async function signIn(env: Env, db: Db, raw: unknown, client: SignInClient): Promise<Result<SignedIn> & { retryAfter?: number }> {
  const parsed = credentialsSchema.safeParse(raw);
  if (!parsed.success) return fail("invalid_argument", z.prettifyError(parsed.error));
  const { email, password } = parsed.data;

  // Read before the limits, which it names no count of: a device token is checked against it.
  const account = await db.query.accounts.findFirst({ where: eq(accounts.email, email) });
  const device = await knownDevice(env.SIGNED_URL_SECRET, account, client.device);
  const limit = await signInAllowed(env, client.address, email, device);
  if (!limit.allowed) return { ...fail("rate_limited", "Too many sign-in attempts. Try again later."), retryAfter: limit.retryAfter };

  // An unknown email is checked against a decoy, so that a miss takes as long as a wrong password.
  const valid = await verifyPassword(password, account?.passwordHash ?? DECOY_HASH);
  if (!account || !valid) return fail("unauthorized", INVALID_CREDENTIALS);
  return ok({
    id: account.id,
    email: account.email,
    plan: account.plan,
    checked: { email: account.email, passwordHash: account.passwordHash },
  });
}

/**
 * The limits in order, each asked only when the one before admitted the attempt: an address
 * that is refused touches nothing about the accounts it names, so guessing at many emails
 * from one address writes nothing per email. `device`: the id of a valid device token for the
 * email, whose own limit stands in for the per-account ones.
 */
export function signInAllowed(
  env: Env,
  address: string,
  email: string,
  device: string | null = null,
): Promise<{ allowed: boolean; retryAfter: number }> {
  return allowedBy(env, [
    [limiterNames.signInAddress(address), SIGN_IN_LIMITS.perAddress],
    ...(device !== null
      ? [[limiterNames.signInDevice(device), SIGN_IN_LIMITS.perDevice, SIGN_IN_LIMITS.perDevicePerDay] as const]
      : ([
          [limiterNames.signInAccountAtAddress(email, address), SIGN_IN_LIMITS.perAccountAndAddress],
          [limiterNames.signInAccount(email), SIGN_IN_LIMITS.perAccount],
        ] as const)),
  ]);
}

/**
 * Sign-up counts against its address's sign-in limit: it tells whether an email has an account
 * (409), which the address may ask only so often. Not against the account's: it guesses no
 * password, and counting it there would let anyone fill an account's ceiling for free.
 */
export function signUpAllowed(env: Env, address: string): Promise<{ allowed: boolean; retryAfter: number }> {
  return allowedBy(env, [[limiterNames.signInAddress(address), SIGN_IN_LIMITS.perAddress]]);
}

/**
 * The OAuth authorization step from one address: /authorize pages, sign-in and consent, and
 * the client metadata document fetched for each. Generous for a person connecting clients,
 * tight for a script making the Worker fetch strangers' documents.
 */
export const AUTHORIZE_PER_ADDRESS_PER_MINUTE = 30;
export function authorizeAllowed(env: Env, address: string): Promise<{ allowed: boolean; retryAfter: number }> {
  return allowedBy(env, [[limiterNames.authorizeAddress(address), AUTHORIZE_PER_ADDRESS_PER_MINUTE]]);
}

/** Confirmation mails an account may ask for: each one is a mail to an address nobody confirmed. */
export const CONFIRMATION_MAILS_PER_DAY = 5;
export function confirmationMailAllowed(env: Env, accountId: string): Promise<{ allowed: boolean; retryAfter: number }> {
  return allowedBy(env, [[limiterNames.confirmationMail(accountId), CONFIRMATION_MAILS_PER_DAY, CONFIRMATION_MAILS_PER_DAY]]);
}

/** Each limiter in turn: its minute's limit, and a day's where one is given. */
async function allowedBy(
  env: Env,
  limits: ReadonlyArray<readonly [name: string, perMinute: number, perDay?: number]>,
): Promise<{ allowed: boolean; retryAfter: number }> {
  const now = Date.now();
  for (const [name, perMinute, perDay] of limits) {
    const windows: LimitWindow[] = [{ name: "sign-in", period: "minute", limit: perMinute }];
    if (perDay !== undefined) windows.push({ name: "sign-in-day", period: "day", limit: perDay });
    const decision = await askLimiter(env, name, (limiter) => limiter.consume(windows, 1, now));
    if (!decision.allowed) return { allowed: false, retryAfter: Math.max(1, Math.ceil((decision.resetAt - now) / 1000)) };
  }
  return { allowed: true, retryAfter: 0 };
}
