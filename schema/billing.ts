import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts, plans } from "./accounts";

/**
 * Billing state mirrored from Stripe. The plan itself lives on `accounts.plan`, which every
 * limiter reads; these tables say why it is what it is and keep webhook processing
 * idempotent and ordered.
 */
export const billingAccounts = sqliteTable("billing_accounts", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  stripeCustomerId: text("stripe_customer_id").unique(),
  subscriptionId: text("subscription_id"),
  /**
   * When that subscription was created (Stripe's `created`, Unix seconds; a checkout's own
   * creation until the subscription's events tell): of two paying subscriptions, the later one
   * is the account's (src/billing/events.ts). Null when no event has said.
   */
  subscriptionCreated: integer("subscription_created"),
  /** Stripe's subscription status (`active`, `past_due`, `canceled`, …). */
  status: text("status").notNull(),
  plan: text("plan", { enum: plans }).notNull(),
  currentPeriodStart: integer("current_period_start", { mode: "timestamp_ms" }),
  currentPeriodEnd: integer("current_period_end", { mode: "timestamp_ms" }),
  cancelAtPeriodEnd: integer("cancel_at_period_end", { mode: "boolean" }).notNull().default(false),
  /** `created` (Unix seconds) of the newest event applied: older ones never overwrite it. */
  stateAt: integer("state_at").notNull(),
  /** Id of the event that last changed this row. */
  lastEventId: text("last_event_id").notNull(),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
});

/** Checkout Sessions this service created, and whether their credentials were collected. */
export const checkoutSessions = sqliteTable("checkout_sessions", {
  id: text("id").primaryKey(),
  accountId: text("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  plan: text("plan", { enum: plans }).notNull(),
  createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  /** Set by the checkout.session.completed webhook. */
  completedAt: integer("completed_at", { mode: "timestamp_ms" }),
  /** Set once by the token exchange: a session's credentials are handed out one time. */
  exchangedAt: integer("exchanged_at", { mode: "timestamp_ms" }),
  /**
   * Set when it can no longer be paid: expired at Stripe (the checkout.session.expired webhook,
   * or this service expiring it, or finding it expired or gone). It then keeps nothing waiting.
   */
  expiredAt: integer("expired_at", { mode: "timestamp_ms" }),
});

/** Every Stripe event applied, by id: a redelivery or a concurrent duplicate changes nothing. */
export const stripeEvents = sqliteTable("stripe_events", {
  id: text("id").primaryKey(),
  type: text("type").notNull(),
  /** The event's `created`, Unix seconds. */
  created: integer("created").notNull(),
  receivedAt: integer("received_at", { mode: "timestamp_ms" }).notNull(),
});

export type BillingAccount = typeof billingAccounts.$inferSelect;
