import { and, eq, isNull } from "drizzle-orm";
import { accountDiscoveriesPerDay } from "../limits/discoveryLimits";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type Stripe from "stripe";
import { z } from "zod";
import { accounts, apiKeys, billingAccounts, checkoutSessions } from "../../schema";
import { publicBase, readVars } from "../env";
import type { AppEnv } from "../lib/context";
import { createKey, MAX_LISTED_KEYS } from "../keys/apiKeys";
import { unknownKeysRefusal } from "../keys/unknownKeys";
import type { Db } from "../lib/db";
import { MISCONFIGURED } from "../lib/errors";
import { firstMessage } from "../lib/params";
import { jsonError, jsonErrorHandler, retryLater } from "../lib/responses";
import { accountLookupUsage, keyMinuteUsage } from "../limits/lookupLimits";
import { accountUsage } from "../limits/usage";
import { sameSiteOnly } from "../accounts/browserSessions";
import { type BillingCaller, billingCaller } from "./caller";
import { type Applied, applyEvent, MalformedEvent } from "./events";
import { planLimits } from "../limits/plans";
import { checkoutState, createCheckoutSession } from "./checkouts";
import { paidPlans, STRIPE_UNAVAILABLE, stripeSdk } from "./stripe";
import { log } from "../lib/log";

/**
 * Billing (spec section 4): status, Checkout, the post-checkout token exchange, and Stripe's
 * webhooks. Answers are JSON; errors are `{"error": "<message>", "code": "<code>"}` like the portal's.
 */
/** Mounted at `/apiaas/billing` (src/app.ts): `/status`, `/checkout-session`, `/token-exchange`, `/webhook`. */
export const billing = new Hono<AppEnv>();
billing.onError(jsonErrorHandler("Billing failed. Try again later"));

const NOT_SIGNED_IN = "Sign in to the portal or send a secret key as Authorization: Bearer sk_…";

async function jsonBody(c: Context<AppEnv>): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    return undefined;
  }
}

/** GET /apiaas/billing/status: plan, subscription, current period, and usage against limits. */
billing.get("/status", async (c) => {
  const db = c.var.ctx.db;
  const caller = await billingCaller(c, db);
  if (caller === "refused") return unknownKeysRefused(c);
  if (!caller) return jsonError(c, "unauthorized", NOT_SIGNED_IN);
  const [account, subscription] = await Promise.all([
    db.query.accounts.findFirst({ where: eq(accounts.id, caller.accountId), columns: { plan: true, emailConfirmedAt: true } }),
    db.query.billingAccounts.findFirst({ where: eq(billingAccounts.accountId, caller.accountId) }),
  ]);
  if (!account) return jsonError(c, "unauthorized", NOT_SIGNED_IN);
  const plan = account.plan;
  const limits = planLimits[plan];
  const keys = await db
    .select({ id: apiKeys.id, prefix: apiKeys.prefix, type: apiKeys.type, perMinuteOverride: apiKeys.perMinuteOverride })
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, caller.accountId), isNull(apiKeys.revokedAt)))
    // Every live key: an account holds at most MAX_LISTED_KEYS of them.
    .orderBy(apiKeys.createdAt, apiKeys.id)
    .limit(MAX_LISTED_KEYS);
  const [usage, month, minutes] = await Promise.all([
    accountUsage(
      c.env,
      caller.accountId,
      plan,
      accountDiscoveriesPerDay({ plan, emailConfirmed: account.emailConfirmedAt !== null }, readVars(c.env)),
    ),
    // The month is the account's, every key's together; the minute is each key's own.
    accountLookupUsage(c.env, caller.accountId, plan),
    Promise.all(keys.map((key) => keyMinuteUsage(c.env, { ...key, plan }))),
  ]);
  c.header("Cache-Control", "no-store");
  return c.json({
    plan,
    subscription: subscription
      ? {
          status: subscription.status,
          currentPeriod:
            subscription.currentPeriodStart && subscription.currentPeriodEnd
              ? { start: subscription.currentPeriodStart.toISOString(), end: subscription.currentPeriodEnd.toISOString() }
              : null,
          cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
        }
      : null,
    limits,
    usage: {
      lookups: { month, keys: keys.map((key, i) => ({ keyPrefix: key.prefix, type: key.type, minute: minutes[i]! })) },
      ...usage,
    },
  });
});

const checkoutInput = z.object(
  { plan: z.enum(paidPlans, { message: `plan must be one of ${paidPlans.join(", ")}` }) },
  { message: 'Send a JSON body such as {"plan": "launch"}' },
);

/** An address past the limit on unknown keys (src/keys/unknownKeys.ts). */
const unknownKeysRefused = (c: Context<AppEnv>) => jsonError(c, "rate_limited", "Rate limit exceeded", unknownKeysRefusal());

/** The caller of a billing POST and its JSON body, validated; or the answer refusing them. */
async function callerWith<T>(c: Context<AppEnv>, schema: z.ZodType<T>): Promise<{ db: Db; caller: BillingCaller; input: T } | Response> {
  const db = c.var.ctx.db;
  const caller = await billingCaller(c, db);
  if (caller === "refused") return unknownKeysRefused(c);
  if (!caller) return jsonError(c, "unauthorized", NOT_SIGNED_IN);
  const input = schema.safeParse(await jsonBody(c));
  if (!input.success) return jsonError(c, "invalid_argument", firstMessage(input.error));
  return { db, caller, input: input.data };
}

/** POST /apiaas/billing/checkout-session: a Stripe Checkout Session for a plan; answers its URL. */
billing.post("/checkout-session", sameSiteOnly, async (c) => {
  const asked = await callerWith(c, checkoutInput);
  if (asked instanceof Response) return asked;
  const { db, caller, input } = asked;
  const session = await createCheckoutSession(c.env, db, caller.accountId, input.plan, publicBase(c.env, c.req.url));
  if (!session.ok) return jsonError(c, session.error.code, session.error.message, session.error.code === "unavailable" ? retryLater : {});
  c.header("Cache-Control", "no-store");
  return c.json(session.value);
});

const exchangeInput = z.object(
  { sessionId: z.string({ message: "sessionId is required" }).regex(/^cs_\w{1,250}$/, "sessionId must be a Checkout Session id (cs_…)") },
  { message: 'Send a JSON body such as {"sessionId": "cs_…"}' },
);

/**
 * POST /apiaas/billing/token-exchange: once a Checkout Session is complete, its account
 * collects a new secret key, once. Completion is taken from the webhook or, if that has not
 * arrived yet, from Stripe itself.
 */
billing.post("/token-exchange", sameSiteOnly, async (c) => {
  const asked = await callerWith(c, exchangeInput);
  if (asked instanceof Response) return asked;
  const { db, caller } = asked;
  const { sessionId } = asked.input;

  const row = await db.query.checkoutSessions.findFirst({
    where: and(eq(checkoutSessions.id, sessionId), eq(checkoutSessions.accountId, caller.accountId)),
  });
  // Another account's session is indistinguishable from an unknown one.
  if (!row) return jsonError(c, "not_found", "No checkout session with this id for your account");
  if (row.exchangedAt) return jsonError(c, "conflict", "The credentials of this checkout were already issued");
  const { state } = await checkoutState(c.env, row);
  // Stripe not answering is an outage to wait out, as for checkout: 503 with Retry-After;
  // Stripe refusing the key is the deployment's fault, which no retry mends: 500.
  if (state === "unavailable") return jsonError(c, "unavailable", STRIPE_UNAVAILABLE, retryLater);
  if (state === "misconfigured") return jsonError(c, "internal", MISCONFIGURED);
  if (state === "open") return jsonError(c, "conflict", "This checkout is not complete yet");

  // Claimed before the key exists: of two concurrent exchanges, one gets a key.
  const claimed = await db
    .update(checkoutSessions)
    // completedAt stays the webhook's: until it has come, another checkout asks Stripe about this one.
    .set({ exchangedAt: new Date() })
    .where(and(eq(checkoutSessions.id, sessionId), isNull(checkoutSessions.exchangedAt)))
    .returning({ id: checkoutSessions.id });
  if (claimed.length === 0) return jsonError(c, "conflict", "The credentials of this checkout were already issued");
  // Without a key the claim is given back, whether createKey failed or threw (D1 refusing the
  // insert): otherwise every retry would be told the credentials were already issued.
  const unclaim = () => db.update(checkoutSessions).set({ exchangedAt: null }).where(eq(checkoutSessions.id, sessionId));
  const key = await createKey(db, { accountId: caller.accountId, type: "secret" }).catch(async (error: unknown) => {
    await unclaim();
    throw error;
  });
  if (!key.ok) {
    await unclaim();
    // An account at its most live keys is told so; the checkout stays collectable once one is revoked.
    if (key.error.code === "conflict") return jsonError(c, "conflict", key.error.message);
    return jsonError(c, "internal", "Could not issue credentials. Try again");
  }
  const account = await db.query.accounts.findFirst({ where: eq(accounts.id, caller.accountId), columns: { plan: true } });
  c.header("Cache-Control", "no-store");
  return c.json({ secretKey: key.value.key, keyPrefix: key.value.prefix, plan: account?.plan ?? row.plan });
});

/**
 * Stripe webhooks. `/apiaas/billing/webhook` is Stripe's endpoint; `/api/billing/webhook` is
 * the same behind an API gateway that verifies signatures before forwarding. The gateway
 * guarantees only that the request came through it, so the signature is checked here too,
 * against the raw body, with the SDK's asynchronous check over WebCrypto.
 */
async function webhook(c: Context<AppEnv>) {
  const secret = c.env.STRIPE_WEBHOOK_SECRET;
  if (!secret) {
    log.error("billing.webhook_secret_not_set");
    return jsonError(c, "internal", "Webhook not configured");
  }
  const signature = c.req.header("stripe-signature");
  if (!signature) return jsonError(c, "invalid_argument", "Missing Stripe-Signature header");
  const payload = await c.req.text();
  let event: Stripe.Event;
  try {
    const Stripe = await stripeSdk();
    event = await Stripe.webhooks.constructEventAsync(payload, signature, secret, undefined, Stripe.createSubtleCryptoProvider());
  } catch {
    return jsonError(c, "invalid_argument", "Invalid signature");
  }
  let outcome: Applied;
  try {
    outcome = await applyEvent(c.var.ctx.db, c.env, event);
  } catch (error) {
    if (!(error instanceof MalformedEvent)) throw error;
    // Signed by Stripe but not the shape this service reads (an API version change?): nothing is applied.
    log.error("billing.event_malformed", { eventId: event.id, detail: error.message });
    return jsonError(c, "invalid_argument", `Malformed event ${event.id}: its object lacks fields this service reads`);
  }
  return c.json({ received: true, outcome });
}

// Stripe's events are a few kilobytes; nothing larger is read.
const limited = bodyLimit({ maxSize: 1024 * 1024, onError: (c) => jsonError(c, "payload_too_large", "Payload too large") });
billing.post("/webhook", limited, webhook);

/** The spec's second webhook path, `/api/billing/webhook`: the webhook alone, mounted at `/api/billing`. */
export const billingWebhook = new Hono<AppEnv>()
  .onError(jsonErrorHandler("Billing failed. Try again later"))
  .post("/webhook", limited, webhook);
