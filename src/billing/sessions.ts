import { and, desc, eq, gt, isNull, notInArray, sql } from "drizzle-orm";
import { accounts, billingAccounts, checkoutSessions } from "../../schema";
import type { Db } from "../lib/db";
import { fail, ok, type Result } from "../lib/errors";
import { payingStatuses } from "./events";
import { callStripe, type PaidPlan, priceOf } from "./stripe";

/**
 * The two Stripe-hosted pages a customer is sent to: Checkout, to buy a plan, and the
 * customer portal, to manage what they bought (card, invoices, cancellation). Shared by the
 * JSON API and the portal's pages, which only differ in how they send the customer there.
 */
const STRIPE_UNAVAILABLE = "Billing is not available right now. Try again later";

/** Where Stripe sends the customer back to: the portal's plan page, which reports the outcome. */
export const returnPath = {
  checkoutSuccess: "/portal/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}",
  checkoutCancelled: "/portal/billing?checkout=cancelled",
  billingPortal: "/portal/billing",
};

/** Where a paying customer changes plan: a second checkout would bill a second subscription beside the first. */
const ALREADY_SUBSCRIBED = "This account already has a subscription: change its plan with Manage billing on /portal/billing (Stripe's customer portal), not a new checkout";

/**
 * A Stripe Checkout Session in subscription mode for `plan`, recorded so its credentials can be
 * collected once. Accounts whose subscription is paying are refused: plan changes go through the
 * customer portal, which changes the one subscription instead of adding another.
 */
export async function createCheckoutSession(
  env: Env,
  db: Db,
  accountId: string,
  plan: PaidPlan,
  base: string,
): Promise<Result<{ id: string; url: string; plan: PaidPlan }>> {
  const price = priceOf(env, plan);
  if (!price) return fail("invalid_argument", `The ${plan} plan is not sold through checkout here; contact us`);
  const [existing, account] = await Promise.all([
    db.query.billingAccounts.findFirst({ where: eq(billingAccounts.accountId, accountId), columns: { stripeCustomerId: true, status: true } }),
    db.query.accounts.findFirst({ where: eq(accounts.id, accountId), columns: { email: true } }),
  ]);
  if (existing && payingStatuses.has(existing.status)) return fail("conflict", ALREADY_SUBSCRIBED);
  const settled = await settleOpenCheckouts(env, db, accountId);
  if (!settled.ok) return settled;
  const session = await callStripe(env, "creating a checkout session", (stripe) =>
    stripe.checkout.sessions.create({
      mode: "subscription",
      line_items: [{ price, quantity: 1 }],
      client_reference_id: accountId,
      ...(existing?.stripeCustomerId ? { customer: existing.stripeCustomerId } : { customer_email: account?.email }),
      metadata: { accountId, plan },
      subscription_data: { metadata: { accountId, plan } },
      success_url: `${base}${returnPath.checkoutSuccess}`,
      cancel_url: `${base}${returnPath.checkoutCancelled}`,
    }),
  );
  if (!session?.url) return fail("unavailable", STRIPE_UNAVAILABLE);
  const [own] = await db
    .insert(checkoutSessions)
    .values({ id: session.id, accountId, plan, createdAt: new Date() })
    .returning({ rowid: sql<number>`rowid` });
  // A checkout started beside this one (a double click) passed the same settling before either
  // was recorded. Whichever is recorded later settles the other as it would an earlier one, so
  // exactly one of them can be paid. "Later" by rowid, the order D1 committed them in (a
  // clock could disagree): the later always finds the earlier recorded.
  const rivals = await settleOpenCheckouts(env, db, accountId, { after: settled.value.highest, before: own!.rowid, settled: settled.value.settled });
  if (!rivals.ok) {
    await callStripe(env, "expiring a checkout session given up", (stripe) => stripe.checkout.sessions.expire(session.id));
    return rivals;
  }
  return ok({ id: session.id, url: session.url, plan });
}

/** How long Stripe keeps a Checkout Session open unless told otherwise. */
const CHECKOUT_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * Before another checkout: the account's earlier ones that may still be paid. Two open at once
 * (two tabs, a second click) would each create a subscription if both were paid, so an open
 * one is expired at Stripe. One paid whose webhook has not arrived yet (completedAt is the
 * webhook's, whether or not the key was collected) means the account is subscribing: another
 * checkout is refused, as for a paying account. A session Stripe does not know (another Stripe
 * account's, say) is no obstacle. With `only`, just those recorded (by rowid, commit order)
 * after `only.after` and before `only.before` that this request has not settled yet. Answers
 * the sessions it settled and, for a first pass, the highest rowid recorded before it read.
 */
async function settleOpenCheckouts(
  env: Env,
  db: Db,
  accountId: string,
  only?: { after: number; before: number; settled: ReadonlySet<string> },
): Promise<Result<{ settled: ReadonlySet<string>; highest: number }>> {
  // Any session recorded from now on has a higher rowid: what a second pass looks at.
  const highest = only ? 0 : ((await db.get<{ highest: number | null }>(sql`SELECT max(rowid) AS highest FROM ${checkoutSessions}`))?.highest ?? 0);
  const earlier = await db
    .select({ id: checkoutSessions.id })
    .from(checkoutSessions)
    .where(
      and(
        eq(checkoutSessions.accountId, accountId),
        isNull(checkoutSessions.completedAt),
        gt(checkoutSessions.createdAt, new Date(Date.now() - CHECKOUT_LIFETIME_MS)),
        // Those recorded between this request's first pass and its own session, not settled yet.
        only && notInArray(checkoutSessions.id, [...only.settled]),
        only && sql`rowid > ${only.after} AND rowid < ${only.before}`,
      ),
    )
    .orderBy(desc(checkoutSessions.createdAt))
    .limit(EARLIER_CHECKED);
  const settled = new Set<string>();
  for (const { id } of earlier) {
    settled.add(id);
    let state = await checkoutAtStripe(env, id);
    if (state === "open") {
      const expired = await callStripe(env, "expiring an earlier checkout session", (stripe) => stripe.checkout.sessions.expire(id));
      // Refused when it was paid or expired meanwhile: asked again, it says which.
      state = expired ? "expired" : await checkoutAtStripe(env, id);
    }
    if (state === null || state === "open") return fail("unavailable", STRIPE_UNAVAILABLE);
    if (state === "complete") return fail("conflict", JUST_PAID);
  }
  return ok({ settled, highest });
}

/** At most this many of an account's checkouts of the last day are asked about: each is a call to Stripe. */
const EARLIER_CHECKED = 5;

/** A checkout session's state at Stripe: `open`, `complete`, `expired`, `missing`, or null when Stripe does not answer. */
async function checkoutAtStripe(env: Env, id: string): Promise<"open" | "complete" | "expired" | "missing" | null> {
  const session = await callStripe(env, "reading an earlier checkout session", (stripe) =>
    stripe.checkout.sessions.retrieve(id).catch((error: unknown) => {
      if ((error as { code?: string }).code === "resource_missing") return "missing" as const;
      throw error;
    }),
  );
  if (session === null || session === "missing") return session;
  if (session.status === "open") return "open";
  return session.status === "complete" ? "complete" : "expired";
}

const JUST_PAID = "This account's last checkout was just paid: its plan changes within a minute (reload /portal/billing); change plans later with Manage billing";

/** The Stripe customer of an account, once a checkout made one. */
export async function stripeCustomerOf(db: Db, accountId: string): Promise<string | null> {
  const row = await db.query.billingAccounts.findFirst({ where: eq(billingAccounts.accountId, accountId), columns: { stripeCustomerId: true } });
  return row?.stripeCustomerId ?? null;
}

/** A customer portal session for the account's Stripe customer; accounts that never paid have none. */
export async function createBillingPortalSession(env: Env, db: Db, accountId: string, base: string): Promise<Result<{ url: string }>> {
  const customer = await stripeCustomerOf(db, accountId);
  if (!customer) return fail("not_found", "This account has no billing details yet: upgrade to a paid plan first");
  const session = await callStripe(env, "creating a billing portal session", (stripe) =>
    stripe.billingPortal.sessions.create({ customer, return_url: `${base}${returnPath.billingPortal}` }),
  );
  if (!session) return fail("unavailable", STRIPE_UNAVAILABLE);
  return ok({ url: session.url });
}

export type CheckoutState = "complete" | "open" | "unavailable";

/**
 * Whether a checkout of this service's was paid: from the checkout.session.completed webhook
 * when it has arrived, otherwise from Stripe itself (the customer may be back before the webhook).
 */
export async function checkoutState(env: Env, row: { id: string; accountId: string; completedAt: Date | null }): Promise<CheckoutState> {
  if (row.completedAt) return "complete";
  const session = await callStripe(env, "retrieving a checkout session", (stripe) => stripe.checkout.sessions.retrieve(row.id));
  if (!session) return "unavailable";
  return session.status === "complete" && session.client_reference_id === row.accountId ? "complete" : "open";
}
