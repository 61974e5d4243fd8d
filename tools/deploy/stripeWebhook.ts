import type Stripe from "stripe";
import { handledEvents } from "../../src/billing/events";

/** Where Stripe sends the events the service handles: its own endpoint, or the gateway path. */
export const webhookPaths = ["/apiaas/billing/webhook", "/api/billing/webhook"];

/**
 * Problems of the Stripe account's webhook endpoints for a deployment at `base`: no enabled
 * endpoint sends to it, or the ones that do leave out events the service handles (a plan
 * bought would never apply, or a cancelled one never end). Asked with the operator's
 * STRIPE_SECRET_KEY, the Stripe account (live or test) the deployment's own key is for.
 */
export async function webhookProblems(stripe: Stripe, base: string): Promise<string[]> {
  let endpoints: Stripe.WebhookEndpoint[];
  try {
    endpoints = await stripe.webhookEndpoints.list({ limit: 100 }).autoPagingToArray({ limit: 10_000 });
  } catch (error) {
    return [`[stripe] the webhook endpoints could not be read with STRIPE_SECRET_KEY: ${(error as Error).message}`];
  }
  const targets = webhookPaths.map((path) => `${base.replace(/\/+$/, "")}${path}`);
  const ours = endpoints.filter((endpoint) => targets.includes(endpoint.url.replace(/\/+$/, "")));
  const sending = ours.filter((endpoint) => endpoint.status === "enabled");
  const events = handledEvents.join(", ");
  if (sending.length === 0) {
    const disabled = ours.length > 0;
    return [
      `[stripe] no enabled webhook endpoint sends events to ${targets[0]}${disabled ? " (one there is disabled)" : ""}: plans bought would never apply. Add one (Stripe dashboard, Developers → Webhooks) with the events ${events}, and set its signing secret as STRIPE_WEBHOOK_SECRET`,
    ];
  }
  const missing = handledEvents.filter(
    (event) => !sending.some((endpoint) => endpoint.enabled_events.includes("*") || endpoint.enabled_events.includes(event)),
  );
  if (missing.length === 0) return [];
  return [
    `[stripe] the webhook endpoint for ${targets[0]} is not sent ${missing.join(", ")}: add ${missing.length === 1 ? "it" : "them"} to its events (the service handles ${events})`,
  ];
}
