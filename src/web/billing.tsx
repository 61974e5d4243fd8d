import { and, eq } from "drizzle-orm";
import { type Context, Hono } from "hono";
import { billingAccounts, checkoutSessions, plans } from "../../schema";
import { payingStatuses, unsettledStatus } from "../billing/events";
import { checkoutState, createBillingPortalSession, createCheckoutSession } from "../billing/checkouts";
import { type PaidPlan, paidPlans, priceOf } from "../billing/stripe";
import { publicBase } from "../env";
import type { Db } from "../lib/db";
import { type ErrorCode, MISCONFIGURED, statusOf } from "../lib/errors";
import { formFields } from "../lib/params";
import { retryLater } from "../lib/responses";
import { planLimits } from "../limits/plans";
import type { SessionAccount } from "../accounts/browserSessions";
import { PlanLimits, planNames, planPrice } from "./plans";
import { dateTime } from "./format";
import { Page, render } from "./layout";
import { field, signedIn, type WebEnv } from "./session";

/**
 * The plan page: every plan with its limits and price (src/limits/plans.ts), "Upgrade"
 * through a Stripe Checkout Session, "Manage billing" through Stripe's customer portal for
 * accounts that have a Stripe customer, and what happened when Stripe sends the customer back.
 * An account whose subscription is paying changes plan in the customer portal ("Change plan"),
 * never through another checkout: that would bill a second subscription beside the first.
 */
export const billingPages = new Hono<WebEnv>();

type Subscription = typeof billingAccounts.$inferSelect;

interface Outcome {
  tone: "notice" | "warning" | "alert";
  message: string;
}

function BillingPage(props: {
  account: SessionAccount;
  subscription: Subscription | undefined;
  purchasable: PaidPlan[];
  outcome?: Outcome | undefined;
}) {
  const current = props.account.plan;
  const rank = (plan: (typeof plans)[number]) => plans.indexOf(plan);
  const hasCustomer = !!props.subscription?.stripeCustomerId;
  // Only a paying subscription renews or ends: one Stripe ended (canceled at once, unpaid after
  // failed payments) keeps its last period's end, with cancel_at_period_end false.
  const subscribed = !!props.subscription && payingStatuses.has(props.subscription.status);
  // Not paying, not over (a payment settling, unpaid, paused): no second subscription beside it.
  const unsettled = !!props.subscription && unsettledStatus(props.subscription.status);
  return (
    <Page title="Plan" account={props.account} section="billing">
      <h1>Plan and billing</h1>
      {props.outcome && (
        <p class={props.outcome.tone} role={props.outcome.tone === "alert" ? "alert" : "status"}>
          {props.outcome.message}
        </p>
      )}
      <section class="card" aria-labelledby="current-heading">
        <h2 id="current-heading">Your plan: {planNames[current]}</h2>
        {props.subscription ? (
          <dl class="facts">
            <dt>Subscription</dt>
            <dd>{props.subscription.status}</dd>
            {subscribed && props.subscription.currentPeriodEnd && (
              <>
                <dt>{props.subscription.cancelAtPeriodEnd ? "Ends" : "Renews"}</dt>
                <dd>{dateTime(props.subscription.currentPeriodEnd)}</dd>
              </>
            )}
          </dl>
        ) : (
          <p class="muted">No subscription: you are on the {planNames[current]} plan at no charge.</p>
        )}
        {hasCustomer && (
          <form method="post" action="/portal/billing/manage">
            <div class="actions">
              <button type="submit">Manage billing</button>
              <span class="hint">Plan changes, card, invoices and cancellation, on Stripe.</span>
            </div>
          </form>
        )}
      </section>
      <h2>Plans</h2>
      <div class="plans">
        {plans.map((plan) => {
          const _limits = planLimits[plan];
          const isCurrent = plan === current;
          const upgrade = (props.purchasable as string[]).includes(plan) && rank(plan) > rank(current);
          const canBuy = upgrade && !subscribed && !unsettled;
          const canChange = upgrade && subscribed && hasCustomer;
          return (
            <section class={isCurrent ? "plan current" : "plan"} aria-labelledby={`plan-${plan}`}>
              <h3 id={`plan-${plan}`}>
                {planNames[plan]}
                {isCurrent && <span class="badge live"> current</span>}
              </h3>
              <p class="price">{planPrice(plan)}</p>
              <PlanLimits plan={plan} />
              {canBuy && (
                <form method="post" action="/portal/billing/checkout">
                  <input type="hidden" name="plan" value={plan} />
                  <button class="primary" type="submit" aria-label={`Upgrade to ${planNames[plan]}`}>
                    Upgrade
                  </button>
                </form>
              )}
              {canChange && (
                <form method="post" action="/portal/billing/manage">
                  <button type="submit" aria-label={`Change plan to ${planNames[plan]} (in Stripe's customer portal)`}>
                    Change plan
                  </button>
                </form>
              )}
              {upgrade && unsettled && (
                <p class="hint">
                  {props.subscription!.status === "incomplete"
                    ? "Waiting for the first payment to settle."
                    : `Pay or cancel the ${props.subscription!.status} subscription with Manage billing first.`}
                </p>
              )}
              {!upgrade && !isCurrent && rank(plan) > rank(current) && <p class="hint">Contact us for this plan.</p>}
            </section>
          );
        })}
      </div>
    </Page>
  );
}

async function billingPage(c: Context<WebEnv>, outcome?: Outcome, status: 200 | 400 | 404 | 409 | 503 | 500 = 200) {
  const account = c.get("account");
  const db = c.var.ctx.db;
  const subscription = await db.query.billingAccounts.findFirst({ where: eq(billingAccounts.accountId, account.id) });
  const purchasable = paidPlans.filter((plan) => priceOf(c.env, plan) !== null);
  // Stripe out of reach: worth another try in a few seconds, as every 503 of the service says.
  if (status === 503) c.header("Retry-After", retryLater["Retry-After"]);
  return render(c, <BillingPage account={account} subscription={subscription} purchasable={purchasable} outcome={outcome} />, status);
}

/**
 * What the page says when Stripe refuses the service's configuration (its key, a Price), which
 * the JSON API answers `500 Service misconfigured`: nothing a customer's retry mends.
 */
const BILLING_MISCONFIGURED =
  "Billing is not set up correctly on this service, so nothing can be bought or managed here for now. Its operator has been told; nothing was charged.";

/** What to tell a customer Stripe just sent back (`?checkout=success&session_id=…` or `?checkout=cancelled`). */
async function returnOutcome(
  env: Env,
  db: Db,
  account: SessionAccount,
  checkout: string | undefined,
  sessionId: string | undefined,
): Promise<Outcome | undefined> {
  if (checkout === "cancelled") return { tone: "warning", message: "Checkout cancelled. Nothing was charged, and your plan is unchanged." };
  if (checkout !== "success" || !sessionId) return undefined;
  const row = /^cs_\w{1,250}$/.test(sessionId)
    ? await db.query.checkoutSessions.findFirst({
        where: and(eq(checkoutSessions.id, sessionId), eq(checkoutSessions.accountId, account.id)),
      })
    : undefined;
  if (!row) return { tone: "alert", message: "That checkout was not started from this account." };
  const paid = { tone: "notice", message: `Payment received: you are on the ${planNames[row.plan]} plan.` } as const;
  // The webhook has come and the plan is the one bought: paid, nothing to ask Stripe.
  if (row.completedAt && account.plan === row.plan) return paid;
  // Completed is not paid: a payment method that settles later (SEPA debit) completes the
  // checkout unpaid, so Stripe is asked for the payment even once the webhook has come.
  const { state, payment } = await checkoutState(env, row, { askStripe: true });
  if (state === "open") return { tone: "warning", message: "This checkout is not complete yet. Nothing was charged." };
  if (state === "unavailable")
    return { tone: "warning", message: "We could not reach Stripe to confirm this checkout. Reload this page in a moment." };
  if (state === "misconfigured") {
    return {
      tone: "alert",
      message:
        "We could not confirm this checkout: billing is not set up correctly on this service. Its operator has been told; reload this page later.",
    };
  }
  if (account.plan === row.plan) return paid;
  const plan = planNames[row.plan];
  if (payment === "unpaid") {
    return {
      tone: "notice",
      message: `Your payment is being processed. Your plan changes to ${plan} once Stripe confirms it, which for a bank debit can take a few days; nothing else is needed from you.`,
    };
  }
  // The webhook says complete, and Stripe could not be asked whether it is paid.
  if (payment === null)
    return {
      tone: "notice",
      message: `Checkout complete. Your plan changes to ${plan} once Stripe confirms the payment: reload this page later.`,
    };
  return {
    tone: "notice",
    message: `Payment received. Your plan changes to ${plan} as soon as Stripe confirms the subscription: reload this page in a moment.`,
  };
}

billingPages.get("/billing", signedIn, async (c) => {
  const outcome = await returnOutcome(c.env, c.var.ctx.db, c.get("account"), c.req.query("checkout"), c.req.query("session_id"));
  return billingPage(c, outcome);
});

const failure = (code: ErrorCode, message: string): [Outcome, 400 | 404 | 409 | 503 | 500] => {
  const status = statusOf(code);
  // The service's misconfiguration (Stripe refusing its key or Price), in words for the customer.
  return [
    { tone: "alert", message: message === MISCONFIGURED ? BILLING_MISCONFIGURED : message },
    status === 400 || status === 404 || status === 409 || status === 503 ? status : 500,
  ];
};

billingPages.post("/billing/checkout", signedIn, async (c) => {
  const plan = field(await formFields(c.req), "plan");
  if (!(paidPlans as readonly string[]).includes(plan))
    return billingPage(c, ...failure("invalid_argument", "Choose one of the plans below."));
  const session = await createCheckoutSession(c.env, c.var.ctx.db, c.get("account").id, plan as PaidPlan, publicBase(c.env, c.req.url));
  if (!session.ok) return billingPage(c, ...failure(session.error.code, session.error.message));
  return c.redirect(session.value.url, 303);
});

billingPages.post("/billing/manage", signedIn, async (c) => {
  const session = await createBillingPortalSession(c.env, c.var.ctx.db, c.get("account").id, publicBase(c.env, c.req.url));
  if (!session.ok) return billingPage(c, ...failure(session.error.code, session.error.message));
  return c.redirect(session.value.url, 303);
});
