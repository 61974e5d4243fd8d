import { env, exports } from "cloudflare:workers";
import Stripe from "stripe";

/** Stripe's side of billing in tests: events signed as Stripe signs them, and the fake API's controls. */
const crypto = Stripe.createSubtleCryptoProvider();
let events = 0;

export function event(type: string, object: Record<string, unknown>, options: { id?: string; created?: number } = {}) {
  return {
    id: options.id ?? `evt_test_${++events}_${Math.random().toString(36).slice(2, 8)}`,
    object: "event",
    api_version: "2026-10-28.clover",
    created: options.created ?? Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

/** The Stripe-Signature header Stripe would send with a payload, made by the SDK's own test helper. */
export function signatureFor(payload: string, secret = env.STRIPE_WEBHOOK_SECRET!) {
  return Stripe.webhooks.generateTestHeaderStringAsync({ payload, secret, cryptoProvider: crypto });
}

export async function deliver(body: unknown, options: { path?: string; secret?: string; header?: string | null } = {}) {
  const payload = typeof body === "string" ? body : JSON.stringify(body);
  const header = options.header !== undefined ? options.header : await signatureFor(payload, options.secret);
  return exports.default.fetch(`https://logos.test${options.path ?? "/apiaas/billing/webhook"}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(header === null ? {} : { "Stripe-Signature": header }) },
    body: payload,
  });
}

/** What the webhook made of a delivered event: `applied`, `duplicate`, `stale`, `other_subscription` or `ignored`. */
export async function outcomeOf(delivered: Response | Promise<Response>): Promise<string> {
  return ((await (await delivered).json()) as { outcome: string }).outcome;
}

export function subscription(
  accountId: string,
  fields: {
    status?: string;
    price?: string;
    id?: string;
    customer?: string;
    periodEnd?: number;
    created?: number;
    cancelAtPeriodEnd?: boolean;
  } = {},
) {
  const start = Math.floor(Date.now() / 1000);
  return {
    id: fields.id ?? "sub_test_1",
    object: "subscription",
    ...(fields.created === undefined ? {} : { created: fields.created }),
    customer: fields.customer ?? "cus_test_1",
    status: fields.status ?? "active",
    cancel_at_period_end: fields.cancelAtPeriodEnd ?? false,
    metadata: { accountId },
    items: {
      object: "list",
      data: [
        {
          id: "si_1",
          object: "subscription_item",
          price: { id: fields.price ?? "price_launch_test", object: "price" },
          current_period_start: start,
          current_period_end: fields.periodEnd ?? start + 30 * 86400,
        },
      ],
    },
  };
}

export function completedCheckout(accountId: string, sessionId: string, plan = "launch") {
  return {
    id: sessionId,
    object: "checkout.session",
    mode: "subscription",
    status: "complete",
    payment_status: "paid",
    client_reference_id: accountId,
    customer: "cus_test_1",
    subscription: "sub_test_1",
    metadata: { accountId, plan },
  };
}

/** The customer pays at the fake Stripe's checkout page (`unpaid`: with a method that settles later, SEPA debit say). */
export async function completeAtStripe(sessionId: string, paymentStatus: "paid" | "unpaid" = "paid") {
  const response = await fetch(`${env.STRIPE_API_BASE}/_complete/${sessionId}?payment_status=${paymentStatus}`, { method: "POST" });
  if (!response.ok) throw new Error(`fake stripe: ${response.status}`);
}

export async function sentToStripe(sessionId: string): Promise<Record<string, string>> {
  return (await (await fetch(`${env.STRIPE_API_BASE}/_sessions/${sessionId}`)).json()) as Record<string, string>;
}

export function api(path: string, init: { key?: string; cookie?: string; body?: unknown; method?: string } = {}) {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (init.key) headers.Authorization = `Bearer ${init.key}`;
  if (init.cookie) headers.Cookie = init.cookie;
  return exports.default.fetch(`https://logos.test${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) }),
  });
}
