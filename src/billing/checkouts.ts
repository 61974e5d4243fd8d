import type Stripe from "stripe";
import { and, desc, eq, gt, isNull, notInArray, sql } from "drizzle-orm";
import { accounts, billingAccounts, checkoutSessions } from "../../schema";
import type { AccountKeeper } from "../accounts/accounts";
import type { Db } from "../lib/db";
import { fail, ok, type Result } from "../lib/errors";
import { endedStatuses, payingStatuses, unsettledStatus } from "./events";
import { missingAtStripe, type PaidPlan, priceOf, refusedByStripe, STRIPE_UNAVAILABLE, StripeCalls } from "./stripe";
import { DAY_MS } from "../lib/time";

/**
 * The two Stripe-hosted pages a customer is sent to: Checkout, to buy a plan, and the
 * customer portal, to manage what they bought (card, invoices, cancellation). Shared by the
 * JSON API and the portal's pages, which only differ in how they send the customer there.
 * The Stripe calls of each function share one deadline (StripeCalls); a failure is
 * `unavailable` (Stripe out of reach, 503 to retry) or `internal` (Stripe refusing the
 * service's configuration, answered as the service's misconfiguration).
 */

/** Where Stripe sends the customer back to: the portal's plan page, which reports the outcome. */
export const returnPath = {
  checkoutSuccess: "/portal/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}",
  checkoutCancelled: "/portal/billing?checkout=cancelled",
  billingPortal: "/portal/billing",
};

/** Where a paying customer changes plan: a second checkout would bill a second subscription beside the first. */
const ALREADY_SUBSCRIBED =
  "This account already has a subscription: change its plan with Manage billing on /portal/billing (Stripe's customer portal), not a new checkout";
const unsettled = (status: string) =>
  `This account's subscription is ${status}: pay or cancel it with Manage billing on /portal/billing (Stripe's customer portal) before starting another checkout`;

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
    db.query.billingAccounts.findFirst({
      where: eq(billingAccounts.accountId, accountId),
      columns: { stripeCustomerId: true, status: true },
    }),
    db.query.accounts.findFirst({ where: eq(accounts.id, accountId), columns: { email: true } }),
  ]);
  if (existing && payingStatuses.has(existing.status)) return fail("conflict", ALREADY_SUBSCRIBED);
  // A second subscription would be charged beside one Stripe may still charge for.
  if (existing && unsettledStatus(existing.status)) return fail("conflict", unsettled(existing.status));
  const stripe = new StripeCalls(env);
  const settled = await settleOpenCheckouts(stripe, db, accountId);
  if (!settled.ok) return settled;
  const create = (sdk: Stripe, options: Stripe.RequestOptions, customer: string | null | undefined) =>
    sdk.checkout.sessions.create(
      {
        mode: "subscription",
        line_items: [{ price, quantity: 1 }],
        client_reference_id: accountId,
        ...(customer ? { customer } : { customer_email: account?.email }),
        metadata: { accountId, plan },
        subscription_data: { metadata: { accountId, plan } },
        success_url: `${base}${returnPath.checkoutSuccess}`,
        cancel_url: `${base}${returnPath.checkoutCancelled}`,
      },
      options,
    );
  // A customer deleted in Stripe's dashboard is the account's past, not the service's fault:
  // the checkout starts afresh by email, and Stripe makes a new customer of it.
  const created = await stripe.call("creating a checkout session", (sdk, options) =>
    create(sdk, options, existing?.stripeCustomerId).catch((error: unknown) => {
      if (existing?.stripeCustomerId && missingCustomer(error)) return create(sdk, options, null);
      throw error;
    }),
  );
  if (!created.ok) return created;
  const session = created.value;
  if (!session.url) return fail("unavailable", STRIPE_UNAVAILABLE);
  const [own] = await db
    .insert(checkoutSessions)
    .values({ id: session.id, accountId, plan, createdAt: new Date() })
    .returning({ rowid: sql<number>`rowid` });
  // A checkout started beside this one (a double click) passed the same settling before either
  // was recorded. Whichever is recorded later settles the other as it would an earlier one, so
  // exactly one of them can be paid. "Later" by rowid, the order D1 committed them in (a
  // clock could disagree): the later always finds the earlier recorded.
  const rivals = await settleOpenCheckouts(stripe, db, accountId, {
    after: settled.value.highest,
    before: own!.rowid,
    settled: settled.value.settled,
  });
  if (!rivals.ok) {
    // Within what is left of the deadline; a session not expired here is recorded, so the next checkout expires it.
    const given = await stripe.call("expiring a checkout session given up", (sdk, options) =>
      sdk.checkout.sessions.expire(session.id, {}, options),
    );
    if (given.ok) await recordExpired(db, session.id);
    return rivals;
  }
  return ok({ id: session.id, url: session.url, plan });
}

/** How long Stripe keeps a Checkout Session open unless told otherwise. */
const CHECKOUT_LIFETIME_MS = DAY_MS;

/**
 * What Stripe may still charge an account for, which keeps it from being deleted
 * (deleteAccount): a subscription that has not ended, and a checkout started within a
 * Checkout Session's lifetime that may yet complete. An account deleted past these would be
 * billed with nobody to serve.
 */
export function stillChargeable(accountId: string): AccountKeeper[] {
  return [
    {
      holds: sql`EXISTS (SELECT 1 FROM ${billingAccounts} WHERE ${and(eq(billingAccounts.accountId, accountId), notInArray(billingAccounts.status, [...endedStatuses]))})`,
      reason:
        "This account has a Stripe subscription that has not ended: cancel it in Stripe first, so that nobody is charged for an account that is gone",
    },
    {
      holds: sql`EXISTS (SELECT 1 FROM ${checkoutSessions} WHERE ${and(eq(checkoutSessions.accountId, accountId), mayStillComplete(Date.now()))})`,
      reason:
        "This account started a Stripe checkout in the last 24 hours that may still complete: expire it in Stripe (with checkout.session.expired sent to the webhook), or try again once it has expired",
    },
  ];
}

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
  stripe: StripeCalls,
  db: Db,
  accountId: string,
  only?: { after: number; before: number; settled: ReadonlySet<string> },
): Promise<Result<{ settled: ReadonlySet<string>; highest: number }>> {
  // Any session recorded from now on has a higher rowid: what a second pass looks at.
  const highest = only
    ? 0
    : ((await db.get<{ highest: number | null }>(sql`SELECT max(rowid) AS highest FROM ${checkoutSessions}`))?.highest ?? 0);
  const earlier = await db
    .select({ id: checkoutSessions.id })
    .from(checkoutSessions)
    .where(
      and(
        eq(checkoutSessions.accountId, accountId),
        mayStillComplete(Date.now()),
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
    let state = await checkoutAtStripe(stripe, id);
    if (state.ok && state.value === "open") {
      const expired = await stripe.call("expiring an earlier checkout session", (sdk, options) =>
        sdk.checkout.sessions.expire(id, {}, options).then(
          () => true,
          // Refused (400) when it was paid or expired meanwhile: asked again, it says which.
          (error: unknown) => {
            if (refusedByStripe(error) && (error as { statusCode?: number }).statusCode === 400) return false;
            throw error;
          },
        ),
      );
      if (!expired.ok && expired.error.code !== "unavailable") return expired;
      // Not answered: it may have been expired all the same, which asking again tells.
      state = expired.ok && expired.value ? ok("expired" as const) : await checkoutAtStripe(stripe, id);
    }
    if (!state.ok) return state;
    if (state.value === "open") return fail("unavailable", STRIPE_UNAVAILABLE);
    if (state.value === "complete") return fail("conflict", JUST_PAID);
    await recordExpired(db, id);
  }
  return ok({ settled, highest });
}

/**
 * A checkout of the last day that may still be paid: neither completed nor known to have
 * expired. Those keep the account from being deleted, and are settled before another checkout.
 */
function mayStillComplete(now: number) {
  return and(
    isNull(checkoutSessions.completedAt),
    isNull(checkoutSessions.expiredAt),
    gt(checkoutSessions.createdAt, new Date(now - CHECKOUT_LIFETIME_MS)),
  );
}

/** A checkout Stripe says can no longer be paid (expired, or unknown to it): it keeps nothing waiting from now on. */
async function recordExpired(db: Db, id: string, now = new Date()): Promise<void> {
  await db
    .update(checkoutSessions)
    .set({ expiredAt: now })
    .where(and(eq(checkoutSessions.id, id), isNull(checkoutSessions.completedAt), isNull(checkoutSessions.expiredAt)));
}

/** At most this many of an account's checkouts of the last day are asked about: each is a call to Stripe. */
const EARLIER_CHECKED = 5;

/** A checkout session's state at Stripe: `open`, `complete`, `expired` or `missing`, or the call's failure. */
async function checkoutAtStripe(stripe: StripeCalls, id: string): Promise<Result<"open" | "complete" | "expired" | "missing">> {
  const session = await stripe.call("reading an earlier checkout session", (sdk, options) =>
    sdk.checkout.sessions.retrieve(id, {}, options).catch((error: unknown) => {
      if (missingAtStripe(error)) return "missing" as const;
      throw error;
    }),
  );
  if (!session.ok || session.value === "missing") return session as Result<"missing">;
  if (session.value.status === "open") return ok("open");
  return ok(session.value.status === "complete" ? "complete" : "expired");
}

/** Stripe's refusal of a customer it no longer has (deleted in its dashboard). */
const missingCustomer = (error: unknown) => missingAtStripe(error) && (error as { param?: string }).param === "customer";
const CUSTOMER_GONE = "This account's billing details are no longer at Stripe: upgrade to a paid plan to start again";

const JUST_PAID =
  "This account's last checkout was just paid: its plan changes within a minute (reload /portal/billing); change plans later with Manage billing";

/** The Stripe customer of an account, once a checkout made one. */
export async function stripeCustomerOf(db: Db, accountId: string): Promise<string | null> {
  const row = await db.query.billingAccounts.findFirst({
    where: eq(billingAccounts.accountId, accountId),
    columns: { stripeCustomerId: true },
  });
  return row?.stripeCustomerId ?? null;
}

/** A customer portal session for the account's Stripe customer; accounts that never paid have none. */
export async function createBillingPortalSession(env: Env, db: Db, accountId: string, base: string): Promise<Result<{ url: string }>> {
  const customer = await stripeCustomerOf(db, accountId);
  if (!customer) return fail("not_found", "This account has no billing details yet: upgrade to a paid plan first");
  const session = await new StripeCalls(env).call("creating a billing portal session", (sdk, options) =>
    sdk.billingPortal.sessions.create({ customer, return_url: `${base}${returnPath.billingPortal}` }, options).catch((error: unknown) => {
      if (missingCustomer(error)) return null;
      throw error;
    }),
  );
  if (!session.ok) return session;
  if (!session.value) return fail("not_found", CUSTOMER_GONE);
  return ok({ url: session.value.url });
}

/** `unavailable`: Stripe out of reach; `misconfigured`: Stripe refused the service's configuration (or no key is set). */
export type CheckoutState = "complete" | "open" | "unavailable" | "misconfigured";

/**
 * Whether a checkout of this service's was completed: from the checkout.session.completed
 * webhook when it has arrived, otherwise from Stripe itself (the customer may be back before the
 * webhook). Completed is not paid: a payment method that settles later (SEPA debit) completes
 * the session with `payment_status: "unpaid"`, paid days later. `payment` is Stripe's
 * payment_status when Stripe was asked, which `askStripe` does even after the webhook (if
 * Stripe does not answer then, the webhook's word stands, with `payment` null).
 */
export async function checkoutState(
  env: Env,
  row: { id: string; accountId: string; completedAt: Date | null },
  options: { askStripe?: boolean } = {},
): Promise<{ state: CheckoutState; payment: string | null }> {
  if (row.completedAt && !options.askStripe) return { state: "complete", payment: null };
  const session = await new StripeCalls(env).call("retrieving a checkout session", (sdk, requestOptions) =>
    sdk.checkout.sessions.retrieve(row.id, {}, requestOptions),
  );
  if (!session.ok) {
    if (row.completedAt) return { state: "complete", payment: null };
    return { state: session.error.code === "unavailable" ? "unavailable" : "misconfigured", payment: null };
  }
  const complete = !!row.completedAt || (session.value.status === "complete" && session.value.client_reference_id === row.accountId);
  return { state: complete ? "complete" : "open", payment: session.value.payment_status };
}
