import type Stripe from "stripe";
import { handledEvents } from "../../src/billing/events";
import { stripeClient } from "../../src/billing/stripe";
import { varsSchema } from "../../src/env";
import type { DeploymentConfig } from "./checks";

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

/** The Stripe account's webhook endpoints, asked with the key in the operator's environment, if any. */
export async function stripeWebhookProblems(config: DeploymentConfig, log: (line: string) => void = console.log): Promise<string[]> {
  const vars = varsSchema.safeParse(config.vars);
  if (!vars.success || !vars.data.PUBLIC_BASE_URL) return [];
  // The client the Worker's billing makes, with the deployment's vars (STRIPE_API_BASE).
  const stripe = await stripeClient({ ...config.vars, STRIPE_SECRET_KEY: process.env.STRIPE_SECRET_KEY } as unknown as Env);
  if (!stripe) {
    log("Stripe's webhook endpoints not checked (set STRIPE_SECRET_KEY in the environment, the deployment's key, to check them).");
    return [];
  }
  return webhookProblems(stripe, vars.data.PUBLIC_BASE_URL);
}
