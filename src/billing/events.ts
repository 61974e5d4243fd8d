import { eq, type SQL, sql } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import type Stripe from "stripe";
import { z } from "zod";
import { billingAccounts, type Plan, plans } from "../../schema";
import type { Db } from "../lib/db";
import { planOfPrice } from "./stripe";
import { log } from "../lib/log";

/**
 * Applying Stripe webhook events to an account's plan and subscription status.
 *
 * Each event becomes one D1 batch (one transaction) of guarded statements:
 *  - an event for an account that does not exist changes nothing and is not recorded (`ignored`);
 *  - nothing happens if the event id was applied before (redelivery, or a concurrent duplicate:
 *    D1 runs batches one after another, and the first one records the id);
 *  - the billing row changes only if the event is not older than the newest event applied
 *    (`created` against `state_at`), so out-of-order deliveries never move an account back.
 *    Events of the same second (Stripe's `created` has no finer grain) are ordered by the
 *    subscription's lifecycle: the later status wins (incomplete < trialing < active < past_due
 *    < unpaid < canceled). A subscription Stripe has ended never comes back: once `canceled`
 *    (or `incomplete_expired`), later events about it change nothing; only another
 *    subscription can replace it. Nor does one go back to `incomplete`, its first status: a
 *    checkout completed unpaid (a payment method that settles later) says nothing new of a
 *    subscription already past it;
 *  - an account pays for one subscription at a time: while its current one is paying, an event
 *    that another subscription is not paying (an old one ending, a checkout left unpaid)
 *    changes nothing, so a plan left behind never moves the account off the one it bought. A
 *    paying one replaces it if it was created later (Stripe may tell of the new subscription
 *    before the old one's end); an older one that is still paying (renewed, set to cancel at its
 *    period's end, back from unpaid) changes nothing, or its end would then leave the account on
 *    Free while the newer one is charged. Where either creation is unknown, the paying one replaces it;
 *  - `accounts.plan`, which every limiter reads, follows the billing row only when this very
 *    event wrote it.
 *
 * `invoice.payment_failed` is not among them: Stripe tells of the failure through the
 * subscription itself (`customer.subscription.updated` to past_due, later unpaid or canceled),
 * with that subscription's id and status. The invoice says neither, so any state derived from it
 * would be invented: it could mark a subscription that had ended, or the account's new one, as
 * past_due, and its later `created` would make the subscription's own events stale.
 */
export const handledEvents = [
  "checkout.session.completed",
  "checkout.session.expired",
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
] as const;

/** Statuses in which a subscription's plan applies; any other leaves the account on Free. */
export const payingStatuses: ReadonlySet<string> = new Set(["active", "trialing", "past_due"]);

interface Change {
  accountId: string;
  customerId: string | null;
  subscriptionId: string | null;
  status: string;
  /**
   * Null: the subscription pays for a price no STRIPE_PRICE_* names. The account keeps its paid
   * plan; an account on Free (the subscription coming back from unpaid or paused) gets
   * `boughtPlan`, the one its checkout bought, the best the service knows of.
   */
  plan: Plan | null;
  boughtPlan?: Plan | undefined;
  /** When the subscription was created (Unix seconds): Stripe's `created`, or for a completed checkout the session's, which came first. */
  subscriptionCreated: number | null;
  periodStart: number | null;
  periodEnd: number | null;
  cancelAtPeriodEnd: boolean;
  /** Checkout session completed by this event. */
  checkoutSessionId?: string;
}

/**
 * What became of an event: `stale` and `other_subscription` are recorded (a redelivery is a
 * duplicate) without changing the account; `ignored` concerns none of ours and is not recorded.
 */
export type Applied = "applied" | "duplicate" | "stale" | "other_subscription" | "ignored";

/** A subscription status's place in Stripe's lifecycle, as SQL: what breaks ties within a second. */
const LIFECYCLE = (column: SQL) =>
  sql`(CASE ${column} WHEN 'incomplete' THEN 0 WHEN 'trialing' THEN 1 WHEN 'active' THEN 2 WHEN 'past_due' THEN 3 WHEN 'paused' THEN 3 WHEN 'unpaid' THEN 4 ELSE 5 END)`;
/** Statuses Stripe never moves a subscription out of: it never comes back, nor charges again. */
export const endedStatuses = ["canceled", "incomplete_expired"] as const;
/** Not paying, and not over either (a first payment settling, unpaid, paused): Stripe may still charge for it. */
export const unsettledStatus = (status: string) => !payingStatuses.has(status) && !(endedStatuses as readonly string[]).includes(status);
/** `value IN (…)`, the list bound as parameters. */
const among = (value: SQL, list: Iterable<string>) =>
  sql`(${value} IN (${sql.join(
    [...list].map((item) => sql`${item}`),
    sql`, `,
  )}))`;
const ENDED = (status: SQL) => among(status, endedStatuses);
const PAYING = (status: SQL) => among(status, payingStatuses);
/** A column of the table an upsert's ON CONFLICT clause reads (`billing_accounts.x`, `excluded.x`). */
const column = (table: "billing_accounts" | "excluded", name: string) => sql.raw(`${table}.${name}`);
/**
 * The row's current subscription is paying, and the event, of another subscription (or none),
 * may not replace it: it says that one is not paying, or it was created before the row's.
 */
const OTHER_SUBSCRIPTION = (subscriptionId: SQL, status: SQL, created: SQL) => {
  const row = (name: string) => column("billing_accounts", name);
  return sql`(${row("subscription_id")} IS NOT NULL AND ${row("subscription_id")} IS NOT ${subscriptionId} AND ${PAYING(row("status"))}
    AND (NOT ${PAYING(status)}
         OR (${row("subscription_created")} IS NOT NULL AND ${created} IS NOT NULL AND ${created} < ${row("subscription_created")})))`;
};

/**
 * A statement of D1's own from drizzle's `sql`: values written where they go, bound as
 * parameters, for a batch whose results are read as D1 gives them (rows, or what changed).
 */
const dialect = new SQLiteAsyncDialect();
function statement(db: Db, query: SQL): D1PreparedStatement {
  const { sql: text, params } = dialect.sqlToQuery(query);
  return db.$client.prepare(text).bind(...params);
}

const paidPlan = z.enum(plans).exclude(["free"]);

/*
 * The parts of Stripe's objects this service reads, checked before anything is read: a
 * validly signed event whose object lacks them is refused (`malformed`), never half-applied.
 */
const stripeRef = z
  .union([z.string(), z.object({ id: z.string() })])
  .nullish()
  .transform((value) => (typeof value === "string" ? value : (value?.id ?? null)));
const metadata = z
  .record(z.string(), z.string())
  .nullish()
  .transform((value) => value ?? {});

const checkoutSessionSchema = z.object({
  id: z.string(),
  created: z.number().int().nullish(),
  mode: z.string(),
  client_reference_id: z.string().nullish(),
  customer: stripeRef,
  subscription: stripeRef,
  payment_status: z.string(),
  metadata,
});

const subscriptionSchema = z.object({
  id: z.string(),
  created: z.number().int().nullish(),
  status: z.string(),
  customer: stripeRef,
  metadata,
  cancel_at_period_end: z.boolean().nullish(),
  items: z
    .object({
      data: z.array(
        z.object({
          price: z.object({ id: z.string() }).nullish(),
          current_period_start: z.number().int().nullish(),
          current_period_end: z.number().int().nullish(),
        }),
      ),
    })
    .nullish(),
});

/** Event objects that do not have the fields this service reads. */
export class MalformedEvent extends Error {}

function objectOf<T extends z.ZodType>(schema: T, event: Stripe.Event): z.output<T> {
  const parsed = schema.safeParse(event.data?.object);
  if (!parsed.success) throw new MalformedEvent(`${event.type}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

async function accountOfCustomer(db: Db, customerId: string | null): Promise<string | null> {
  if (!customerId) return null;
  const row = await db
    .select({ accountId: billingAccounts.accountId })
    .from(billingAccounts)
    .where(eq(billingAccounts.stripeCustomerId, customerId))
    .get();
  return row?.accountId ?? null;
}

/** What an event means for an account, or null when it concerns none of ours. */
async function changeOf(db: Db, env: Env, event: Stripe.Event): Promise<Change | null> {
  switch (event.type) {
    case "checkout.session.completed": {
      const session = objectOf(checkoutSessionSchema, event);
      const accountId = session.client_reference_id;
      const plan = paidPlan.safeParse(session.metadata.plan);
      if (session.mode !== "subscription" || !accountId || !plan.success) return null;
      return {
        accountId,
        customerId: session.customer,
        subscriptionId: session.subscription,
        status: session.payment_status === "unpaid" ? "incomplete" : "active",
        plan: session.payment_status === "unpaid" ? "free" : plan.data,
        periodStart: null,
        periodEnd: null,
        cancelAtPeriodEnd: false,
        subscriptionCreated: session.created ?? null,
        checkoutSessionId: session.id,
      };
    }
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted": {
      const subscription = objectOf(subscriptionSchema, event);
      const customerId = subscription.customer;
      const accountId = subscription.metadata.accountId || (await accountOfCustomer(db, customerId));
      if (!accountId) return null;
      const item = subscription.items?.data?.[0];
      const status = event.type === "customer.subscription.deleted" ? "canceled" : subscription.status;
      const price = item?.price?.id;
      const sold = planOfPrice(env, price);
      // A price that is not configured (STRIPE_PRICE_* moved to a new price, a price made by hand
      // in Stripe) keeps the account's paid plan. Not metadata.plan first: that is the plan bought
      // at checkout, and Stripe's customer portal changes the price without updating it; only an
      // account on Free, whose subscription pays again, is given it rather than stay on Free.
      if (payingStatuses.has(status) && !sold) {
        log.warn("billing.price_not_configured", {
          subscriptionId: subscription.id,
          accountId,
          price: price ?? null,
          detail: "no STRIPE_PRICE_* names this price: the account keeps its plan",
        });
      }
      return {
        accountId,
        customerId,
        subscriptionId: subscription.id,
        status,
        plan: payingStatuses.has(status) ? sold : "free",
        boughtPlan: paidPlan.safeParse(subscription.metadata.plan).data,
        periodStart: item?.current_period_start ? item.current_period_start * 1000 : null,
        periodEnd: item?.current_period_end ? item.current_period_end * 1000 : null,
        cancelAtPeriodEnd: subscription.cancel_at_period_end ?? false,
        subscriptionCreated: subscription.created ?? null,
      };
    }
    default:
      return null;
  }
}

export async function applyEvent(db: Db, env: Env, event: Stripe.Event, now = Date.now()): Promise<Applied> {
  if (!(handledEvents as readonly string[]).includes(event.type)) return "ignored";
  if (event.type === "checkout.session.expired") return applyExpiry(db, event, now);
  const change = await changeOf(db, env, event);
  if (!change) return "ignored";

  const { accountId, subscriptionId, status, subscriptionCreated } = change;
  const unseen = sql`NOT EXISTS (SELECT 1 FROM stripe_events WHERE id = ${event.id})`;
  const excluded = (name: string) => column("excluded", name);
  const row = (name: string) => column("billing_accounts", name);
  // Read in the same transaction, before the upsert: whether the account exists, and whether
  // its row pays for another subscription, which name the outcome if the upsert changes nothing.
  const read = statement(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM accounts WHERE id = ${accountId}) AS known,
               (SELECT ${OTHER_SUBSCRIPTION(sql`${subscriptionId}`, sql`${status}`, sql`${subscriptionCreated}`)}
                FROM billing_accounts WHERE account_id = ${accountId}) AS other`,
  );
  // Upsert the billing row, unless the event was seen, is older than the row, or says
  // another subscription than the paying one is not paying. A plan kept (null) is the
  // account's paid plan, read here in the same transaction, else the one its checkout bought.
  const upsert = statement(
    db,
    sql`INSERT INTO billing_accounts (account_id, stripe_customer_id, subscription_id, status, plan, current_period_start,
                                      current_period_end, cancel_at_period_end, state_at, last_event_id, updated_at, subscription_created)
        SELECT ${accountId}, ${change.customerId}, ${subscriptionId}, ${status},
               coalesce(${change.plan}, (SELECT nullif(plan, 'free') FROM accounts WHERE id = ${accountId}), ${change.boughtPlan ?? null}, 'free'),
               ${change.periodStart}, ${change.periodEnd}, ${change.cancelAtPeriodEnd ? 1 : 0}, ${event.created}, ${event.id}, ${now},
               ${subscriptionCreated}
        WHERE ${unseen} AND EXISTS (SELECT 1 FROM accounts WHERE id = ${accountId})
        ON CONFLICT (account_id) DO UPDATE SET
          stripe_customer_id = coalesce(excluded.stripe_customer_id, stripe_customer_id),
          subscription_created = CASE WHEN excluded.subscription_id IS NULL OR excluded.subscription_id IS subscription_id
                                      THEN coalesce(excluded.subscription_created, subscription_created)
                                      ELSE excluded.subscription_created END,
          subscription_id = coalesce(excluded.subscription_id, subscription_id),
          status = excluded.status, plan = excluded.plan,
          current_period_start = coalesce(excluded.current_period_start, current_period_start),
          current_period_end = coalesce(excluded.current_period_end, current_period_end),
          cancel_at_period_end = excluded.cancel_at_period_end,
          state_at = excluded.state_at, last_event_id = excluded.last_event_id, updated_at = excluded.updated_at
        WHERE NOT (${ENDED(row("status"))} AND billing_accounts.subscription_id IS excluded.subscription_id)
          AND NOT (excluded.status = 'incomplete' AND billing_accounts.status <> 'incomplete'
                   AND billing_accounts.subscription_id IS excluded.subscription_id)
          AND NOT ${OTHER_SUBSCRIPTION(excluded("subscription_id"), excluded("status"), excluded("subscription_created"))}
          AND (billing_accounts.state_at < excluded.state_at
               OR (billing_accounts.state_at = excluded.state_at
                   AND CASE WHEN billing_accounts.subscription_id IS excluded.subscription_id
                            THEN ${LIFECYCLE(excluded("status"))} >= ${LIFECYCLE(row("status"))}
                            ELSE NOT ${ENDED(excluded("status"))} END))`,
  );
  // The plan limiters read follows the row's, only if this event is the one the row now
  // reflects, and only the first time it comes: a redelivery must not undo a plan an
  // operator set since (`admin account plan`, for a price no STRIPE_PRICE_* names).
  const followPlan = statement(
    db,
    sql`UPDATE accounts SET plan = (SELECT plan FROM billing_accounts WHERE account_id = ${accountId}), updated_at = ${now}
        WHERE id = ${accountId} AND (SELECT last_event_id FROM billing_accounts WHERE account_id = ${accountId}) = ${event.id}
          AND plan <> (SELECT plan FROM billing_accounts WHERE account_id = ${accountId})
          AND ${unseen}`,
  );
  const completed = change.checkoutSessionId
    ? [
        statement(
          db,
          sql`UPDATE checkout_sessions SET completed_at = ${now}
              WHERE id = ${change.checkoutSessionId} AND account_id = ${accountId} AND completed_at IS NULL`,
        ),
      ]
    : [];
  // Recorded only for an account of ours: an event about none concerns us, and is not kept.
  const recorded = statement(
    db,
    sql`INSERT INTO stripe_events (id, type, created, received_at) SELECT ${event.id}, ${event.type}, ${event.created}, ${now}
        WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ${accountId}) ON CONFLICT (id) DO NOTHING`,
  );

  const [known, upserted, ...rest] = await db.$client.batch<{ known: number; other: number }>([
    read,
    upsert,
    followPlan,
    ...completed,
    recorded,
  ]);
  if (!known?.results[0]?.known) return "ignored";
  if (rest.at(-1)?.meta.changes === 0) return "duplicate";
  if (upserted?.meta.changes !== 0) return "applied";
  return known.results[0]?.other ? "other_subscription" : "stale";
}

/**
 * A checkout session of ours that expired at Stripe can no longer be paid: recorded so that it
 * keeps its account from nothing (src/billing/checkouts.ts, stillChargeable). Recorded as an
 * event only for a session of ours; one completed or already known expired changes nothing.
 */
async function applyExpiry(db: Db, event: Stripe.Event, now: number): Promise<Applied> {
  const { id } = objectOf(checkoutSessionSchema.pick({ id: true }), event);
  const [marked, recorded] = await db.$client.batch([
    statement(
      db,
      sql`UPDATE checkout_sessions SET expired_at = ${now} WHERE id = ${id} AND completed_at IS NULL AND expired_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM stripe_events WHERE id = ${event.id})`,
    ),
    statement(
      db,
      sql`INSERT INTO stripe_events (id, type, created, received_at) SELECT ${event.id}, ${event.type}, ${event.created}, ${now}
          WHERE EXISTS (SELECT 1 FROM checkout_sessions WHERE id = ${id}) ON CONFLICT (id) DO NOTHING`,
    ),
  ]);
  if (marked?.meta.changes) return "applied";
  if (recorded?.meta.changes) return "stale";
  return (await db.get(sql`SELECT 1 AS found FROM checkout_sessions WHERE id = ${id}`)) ? "duplicate" : "ignored";
}
