import { and, eq, isNull } from "drizzle-orm";
import { accounts } from "../../schema";
import type { Db } from "../lib/db";
import { canonicalBase64Url, toBase64Url } from "../lib/encoding";
import { fail, ok, type Result } from "../lib/errors";
import { DAY_MS } from "../lib/time";
import { type MailSent, sendMail } from "./mail";

/**
 * Proof that an account's owner reads its email address: sign-up mails a link, and opening it
 * confirms the address (accounts.email_confirmed_at). Until then the account's discoveries are
 * a small budget (src/limits/discoveryLimits.ts), since an account costs nothing to make.
 *
 * The link's token is `<account id>.<expiry, Unix seconds>.<HMAC-SHA-256>`, signed with the
 * service's secret (SIGNED_URL_SECRET, under a purpose of its own) over the id, the expiry and
 * the email address: nothing is stored, and a token is good for that address only.
 */
export const CONFIRMATION_TTL_MS = 7 * DAY_MS;
export const CONFIRM_PATH = "/portal/confirm-email";

const encoder = new TextEncoder();

function signingKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

const signed = (accountId: string, email: string, expires: number) => encoder.encode(`confirm email\n${accountId}\n${email}\n${expires}`);

export async function confirmationToken(secret: string, account: { id: string; email: string }, now = Date.now()): Promise<string> {
  const expires = Math.floor((now + CONFIRMATION_TTL_MS) / 1000);
  const signature = await crypto.subtle.sign("HMAC", await signingKey(secret), signed(account.id, account.email, expires));
  return `${account.id}.${expires}.${toBase64Url(new Uint8Array(signature))}`;
}

/** Mails the account's owner the link that confirms its address (or logs it, without a mail API). */
export async function sendConfirmation(env: Env, account: { id: string; email: string }, base: string): Promise<Result<MailSent>> {
  if (!env.SIGNED_URL_SECRET) return fail("unavailable", "Email confirmation is not set up on this service (no SIGNED_URL_SECRET)");
  const link = `${base}${CONFIRM_PATH}?token=${encodeURIComponent(await confirmationToken(env.SIGNED_URL_SECRET, account))}`;
  return sendMail(env, {
    to: account.email,
    subject: "Confirm your email address",
    text: [
      "Open this link to confirm the email address of your account:",
      "",
      link,
      "",
      `The link works for ${CONFIRMATION_TTL_MS / DAY_MS} days. If you did not create an account, ignore this message.`,
    ].join("\n"),
  });
}

const TOKEN = /^([0-9a-f-]{36})\.(\d{10})\.([\w-]{43})$/;

/**
 * Confirms the address a token names, once: the account's id, or why not. A token for another
 * address than the account's present one, expired or forged, confirms nothing.
 */
export async function confirmEmail(
  db: Db,
  secret: string | undefined,
  token: string,
  now = Date.now(),
): Promise<Result<{ accountId: string; already: boolean }>> {
  const invalid = fail("invalid_argument", "This confirmation link is not valid. Sign in and ask for a new one.");
  if (!secret) return fail("unavailable", "Email confirmation is not set up on this service");
  const match = token.length <= 200 ? TOKEN.exec(token) : null;
  if (!match) return invalid;
  const [, accountId, expiresText, signature] = match;
  const expires = Number(expiresText);
  const account = await db.query.accounts.findFirst({
    where: eq(accounts.id, accountId!),
    columns: { email: true, emailConfirmedAt: true },
  });
  const mac = canonicalBase64Url(signature!);
  if (!account || !mac) return invalid;
  const valid = await crypto.subtle.verify("HMAC", await signingKey(secret), mac, signed(accountId!, account.email, expires));
  if (!valid) return invalid;
  if (account.emailConfirmedAt !== null) return ok({ accountId: accountId!, already: true });
  if (expires * 1000 <= now) return fail("invalid_argument", "This confirmation link has expired. Sign in and ask for a new one.");
  await db
    .update(accounts)
    .set({ emailConfirmedAt: new Date(now), updatedAt: new Date(now) })
    .where(and(eq(accounts.id, accountId!), isNull(accounts.emailConfirmedAt)));
  return ok({ accountId: accountId!, already: false });
}
