import type Stripe from "stripe";
import type { Plan } from "../../schema";
import { readVars } from "../env";
import { BoundedCache } from "../lib/boundedCache";

/**
 * The Stripe SDK as a Worker uses it: fetch for HTTP, WebCrypto for webhook signatures, and
 * the API address from STRIPE_API_BASE (a test points it at a local stand-in). The SDK is
 * loaded on first use: only billing requests pay for evaluating it, never a lookup.
 */
const clients = new BoundedCache<string, Stripe>(4);

export async function stripeSdk(): Promise<typeof Stripe> {
  return (await import("stripe")).default;
}

export async function stripeClient(env: Env): Promise<Stripe | null> {
  if (!env.STRIPE_SECRET_KEY) return null;
  const Stripe = await stripeSdk();
  const base = new URL(readVars(env).STRIPE_API_BASE);
  const secretKey = env.STRIPE_SECRET_KEY;
  return clients.remember(
    `${secretKey}\n${base}`,
    () =>
      new Stripe(secretKey, {
        httpClient: Stripe.createFetchHttpClient(),
        host: base.hostname,
        port: base.port || (base.protocol === "http:" ? 80 : 443),
        protocol: base.protocol === "http:" ? "http" : "https",
        maxNetworkRetries: 1,
        timeout: 15_000,
      }),
  );
}

/** Plans sold through Checkout, each with the recurring Price configured for it. */
/**
 * One call to Stripe's API: its answer, or null when Stripe is not configured or the call
 * failed (the reason goes to the logs, never to the caller).
 */
export async function callStripe<T>(env: Env, what: string, call: (stripe: Stripe) => Promise<T>): Promise<T | null> {
  const stripe = await stripeClient(env);
  if (!stripe) {
    console.error(`billing: ${what}: STRIPE_SECRET_KEY is not set`);
    return null;
  }
  try {
    return await call(stripe);
  } catch (cause) {
    console.error(`billing: ${what} failed`, cause instanceof Error ? cause.message : cause);
    return null;
  }
}

export const paidPlans = ["launch", "growth", "enterprise"] as const satisfies readonly Plan[];
export type PaidPlan = (typeof paidPlans)[number];

export function priceOf(env: Env, plan: PaidPlan): string | null {
  const vars = readVars(env);
  const price = { launch: vars.STRIPE_PRICE_LAUNCH, growth: vars.STRIPE_PRICE_GROWTH, enterprise: vars.STRIPE_PRICE_ENTERPRISE }[plan];
  return price === "" ? null : price;
}

export function planOfPrice(env: Env, priceId: string | undefined): PaidPlan | null {
  if (!priceId) return null;
  return paidPlans.find((plan) => priceOf(env, plan) === priceId) ?? null;
}
