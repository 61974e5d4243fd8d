import type Stripe from "stripe";
import type { Plan } from "../../schema";
import { readVars } from "../env";
import { isolateCache } from "../lib/isolateCaches";
import { dependencyDeadline } from "../lib/dependencies";
import { type AppError, fail, MISCONFIGURED, ok, type Result } from "../lib/errors";
import { log } from "../lib/log";

/**
 * The Stripe SDK as a Worker uses it: fetch for HTTP, WebCrypto for webhook signatures, and
 * the API address from STRIPE_API_BASE (a test points it at a local stand-in). The SDK is
 * loaded on first use: only billing requests pay for evaluating it, never a lookup.
 */
const clients = isolateCache<string, Stripe>({
  name: "billing.stripeClients",
  holds: "a Stripe configuration (key and API address) and the client built for it",
  capacity: 4,
  entryBytes: 128 * 1024,
});

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
        // Defaults only: every call through StripeCalls sets its own, from what its request has left.
        maxNetworkRetries: 0,
        timeout: dependencyDeadline.ms,
      }),
  );
}

/** Stripe out of reach (no connection, no answer in time, rate limited, its own outage): retrying helps. */
export const STRIPE_UNAVAILABLE = "Billing is not available right now. Try again later";

/** Each attempt of a call may take this share of the deadline, so that a retry fits beside it. */
const ATTEMPT_SHARE = 0.4;
/** The SDK's pause before a retry (its initialNetworkRetryDelay). */
const RETRY_PAUSE_MS = 500;

/**
 * The Stripe calls of one request. They share one deadline, the service's dependency deadline
 * (10 s, src/lib/dependencies.ts), counted from the request's first call to Stripe however many
 * it makes (a checkout asks about earlier ones, expires them, then creates its own). Each
 * attempt times out at 40% of the deadline and is retried once only while the retry fits in
 * what is left; a call not answered when the deadline passes is given up.
 *
 * A call answers its value, or a failure for the caller to pass on, its reason logged (never the
 * key): `unavailable` (STRIPE_UNAVAILABLE, a 503 to retry) when Stripe could not be reached, did
 * not answer in time, was rate limiting (429) or failed itself (5xx); `internal` (MISCONFIGURED,
 * the service's answer to a misconfigured deployment) when no STRIPE_SECRET_KEY is set or Stripe
 * refused the call itself: a key it does not accept (401: invalid, revoked, expired) or that may
 * not do this (403: a restricted key), or a request it rejects (400/404: a Price or customer this
 * Stripe account does not have, the customer portal not set up). Those stay wrong until the
 * operator changes something, so telling clients to retry would be telling them to wait forever.
 * A call expecting one of Stripe's refusals (a session already expired, say) catches it itself.
 */
export class StripeCalls {
  #deadline: number | undefined;

  constructor(private readonly env: Env) {}

  async call<T>(what: string, call: (stripe: Stripe, options: Stripe.RequestOptions) => Promise<T>): Promise<Result<T>> {
    const stripe = await stripeClient(this.env);
    if (!stripe) {
      log.error("billing.stripe_key_not_set", { call: what, detail: "STRIPE_SECRET_KEY is not set" });
      return fail("internal", MISCONFIGURED);
    }
    const budget = dependencyDeadline.ms;
    this.#deadline ??= Date.now() + budget;
    const left = this.#deadline - Date.now();
    if (left <= 0) {
      log.error("billing.stripe_not_tried", { call: what, detail: `this request's ${budget} ms for Stripe have passed` });
      return fail("unavailable", STRIPE_UNAVAILABLE);
    }
    const attempt = Math.min(left, Math.ceil(budget * ATTEMPT_SHARE));
    const options = { timeout: attempt, maxNetworkRetries: left >= 2 * attempt + RETRY_PAUSE_MS ? 1 : 0 };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within this request's ${budget} ms for Stripe`)), left);
    });
    try {
      return ok(await Promise.race([call(stripe, options), late]));
    } catch (cause) {
      return this.failure(what, cause);
    } finally {
      clearTimeout(timer);
    }
  }

  private failure(what: string, cause: unknown): { ok: false; error: AppError } {
    const error = (cause ?? {}) as StripeErrorFields;
    const refused = refusedByStripe(cause);
    const kind = [
      error.type,
      [error.statusCode, error.rawType, error.code].filter(Boolean).join(" "),
      error.param && `param ${error.param}`,
    ]
      .filter(Boolean)
      .join(", ");
    const detail = `${kind ? `${kind}: ` : ""}${this.redacted(cause instanceof Error ? cause.message : String(cause))}`;
    if (refused) {
      log.error("billing.stripe_refused_configuration", {
        call: what,
        detail,
        check: "STRIPE_SECRET_KEY, STRIPE_PRICE_* and the Stripe account's settings",
      });
      return fail("internal", MISCONFIGURED);
    }
    log.error("billing.stripe_unavailable", { call: what, detail });
    return fail("unavailable", STRIPE_UNAVAILABLE);
  }

  /** Stripe masks most of a key it names; any trace of ours is removed all the same. */
  private redacted(message: string): string {
    const key = this.env.STRIPE_SECRET_KEY;
    return (key ? message.split(key).join("[STRIPE_SECRET_KEY]") : message).replace(/\b([sr]k_(?:live|test)_)[\w*]+/g, "$1…");
  }
}

/** What the SDK's errors carry (stripe/esm/Error.js): `type` names its class, `rawType` is Stripe's own. */
interface StripeErrorFields {
  type?: string;
  rawType?: string;
  statusCode?: number;
  code?: string;
  param?: string;
}

/**
 * Whether Stripe refused a call for what it was asked, not for the moment it was asked at: 401,
 * 403, and 400/404 except a rate limit (400 `rate_limit`) and an idempotency conflict. Read from
 * the status and Stripe's own type, not the SDK's class names, which a minifier may rename.
 */
export function refusedByStripe(cause: unknown): boolean {
  const { statusCode, rawType, code } = (cause ?? {}) as StripeErrorFields;
  if (statusCode === 401 || statusCode === 403) return true;
  return (statusCode === 400 || statusCode === 404) && code !== "rate_limit" && rawType !== "idempotency_error";
}

/** Stripe's answer that what was asked for does not exist (`resource_missing`, 404 or 400). */
export function missingAtStripe(cause: unknown): boolean {
  return (cause as StripeErrorFields | undefined)?.code === "resource_missing";
}

/** Plans sold through Checkout, each with the recurring Price configured for it. */
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
