import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { billingAccounts, checkoutSessions } from "../../schema";
import { dependencyDeadline } from "../../src/lib/dependencies";
import { addAccount, addKey, db } from "../helpers/catalogue";
import { BASE, fetchWith } from "../lookup/helpers";
import { signedUp, textOf } from "../web/helpers";
import { api, completeAtStripe, completedCheckout, deliver, event, outcomeOf, sentToStripe } from "./helpers";
import { errorBody } from "../helpers/errors";

/**
 * Billing when Stripe is slow, refuses the service's configuration, or takes a payment that
 * settles later. The fake Stripe misbehaves on variants of its key (test/fakes/stripeApi.ts).
 */
const KEY = env.STRIPE_SECRET_KEY!;
const stripeKey = {
  slow: (ms: number) => `${KEY}_slow${ms}`,
  hanging: `${KEY}_hang`,
  failing: (status: 403 | 429 | 500 | 503) => `${KEY}_status${status}`,
  revoked: "sk_test_revoked_4f9a2c7e1b",
};

const UNAVAILABLE = { error: "Billing is not available right now. Try again later", code: "unavailable" };
const MISCONFIGURED = { error: "Service misconfigured", code: "internal" };

/** A billing POST with a secret key, to the Worker configured with other vars. */
const post = (vars: Partial<Env>, path: string, key: string, body: unknown) =>
  fetchWith(vars, `${BASE}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });

/** A portal page or form for a signed-in browser, the Worker configured with other vars. */
const portal = (vars: Partial<Env>, cookie: string, path: string, fields?: Record<string, string>) =>
  fetchWith(vars, `${BASE}${path}`, {
    method: fields ? "POST" : "GET",
    headers: { Cookie: cookie, Origin: BASE, ...(fields ? { "Content-Type": "application/x-www-form-urlencoded" } : {}) },
    ...(fields ? { body: new URLSearchParams(fields).toString() } : {}),
    redirect: "manual",
  });

/**
 * The waits that ended Stripe calls, in milliseconds, as billing logged them: the SDK's timeout
 * of an attempt, or the request's own deadline. What bounds how long a request is held, read
 * from why it ended rather than from a stopwatch a loaded machine would stretch.
 */
function waitsLogged(errors: { mock: { calls: unknown[][] } }): number[] {
  return errors.mock.calls.map((call) => {
    const line = call.map(String).join(" ");
    const wait = /timeout being reached \((\d+)ms\)|no answer within this request's (\d+) ms/.exec(line);
    if (!wait) throw new Error(`a Stripe call ended otherwise than by a wait: ${line}`);
    return Number(wait[1] ?? wait[2]);
  });
}

/** An account with a secret key and a checkout session of its own, still open. */
async function buyer() {
  const account = await addAccount("free");
  const key = await addKey(account.id, { type: "secret" });
  const created = await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } });
  const { id } = (await created.json()) as { id: string };
  return { account, key, id };
}

const saved = dependencyDeadline.ms;
afterEach(() => {
  dependencyDeadline.ms = saved;
  vi.restoreAllMocks();
});

describe("a slow Stripe holds a request no longer than the dependency deadline", () => {
  it("one that accepts connections and never answers: 503 with Retry-After at the deadline, for checkout and token exchange", async () => {
    const { key, id } = await buyer();
    // Lowered for the test, as test/faults does: the real deadline is 10 s.
    dependencyDeadline.ms = 500;
    for (const [path, body] of [
      ["/apiaas/billing/checkout-session", { plan: "growth" }],
      ["/apiaas/billing/token-exchange", { sessionId: id }],
    ] as const) {
      const errors = vi.spyOn(console, "error").mockImplementation(() => {});
      const response = await post({ STRIPE_SECRET_KEY: stripeKey.hanging }, path, key, body);
      expect(response.status, path).toBe(503);
      expect(response.headers.get("retry-after"), path).toBe("5");
      expect(await errorBody(response)).toEqual(UNAVAILABLE);
      // Stripe never answers: what ended the request was a wait, none longer than the deadline.
      const waits = waitsLogged(errors);
      expect(waits.length, path).toBeGreaterThan(0);
      for (const wait of waits) expect(wait, path).toBeLessThanOrEqual(500);
      errors.mockRestore();
    }
  });

  it("one that answers every call, slowly: the calls of one checkout share the deadline", async () => {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    // Five earlier checkouts to ask about (Stripe knows none of them), then the new one: six calls.
    for (let i = 0; i < 5; i++) {
      await db.insert(checkoutSessions).values({
        id: `cs_test_gone_${i}_${crypto.randomUUID().slice(0, 8)}`,
        accountId: account.id,
        plan: "launch",
        createdAt: new Date(),
      });
    }
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    dependencyDeadline.ms = 600;
    // Each call answers within its own timeout; the six together take twice the deadline.
    const response = await post({ STRIPE_SECRET_KEY: stripeKey.slow(200) }, "/apiaas/billing/checkout-session", key, { plan: "launch" });
    expect(response.status).toBe(503);
    expect(await errorBody(response)).toEqual(UNAVAILABLE);
    // What ended it was the request's one deadline, not any call's own timeout.
    expect(waitsLogged(errors)).toEqual([600]);
    expect(errors.mock.calls.map((call) => call.map(String).join(" "))).toEqual([
      expect.stringContaining("no answer within this request's 600 ms for Stripe"),
    ]);
  });
});

describe("Stripe refusing the service's configuration is the service's misconfiguration, not an outage to retry", () => {
  it.each<[string, Partial<Env>, RegExp]>([
    ["an invalid or revoked key (401)", { STRIPE_SECRET_KEY: stripeKey.revoked }, /StripeAuthenticationError.*Invalid API Key provided/],
    [
      "a restricted key without the permission (403)",
      { STRIPE_SECRET_KEY: stripeKey.failing(403) },
      /StripePermissionError.*does not have the required permissions/,
    ],
    [
      "a Price Stripe does not know (400 resource_missing)",
      { STRIPE_PRICE_LAUNCH: "price_missing_launch" },
      /StripeInvalidRequestError.*resource_missing.*No such price/,
    ],
    ["no STRIPE_SECRET_KEY", { STRIPE_SECRET_KEY: undefined }, /STRIPE_SECRET_KEY is not set/],
  ])("%s: checkout answers 500 Service misconfigured, without Retry-After, and logs why without the key", async (_, vars, logged) => {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await post(vars, "/apiaas/billing/checkout-session", key, { plan: "launch" });
    expect(response.status).toBe(500);
    expect(response.headers.get("retry-after")).toBeNull();
    expect(await errorBody(response)).toEqual(MISCONFIGURED);
    const log = errors.mock.calls.map((call) => call.map(String).join(" ")).join("\n");
    expect(log).toMatch(logged);
    for (const secret of [KEY, stripeKey.revoked, stripeKey.failing(403)]) expect(log).not.toContain(secret);
  });

  it("the token exchange too, for a revoked key or none", async () => {
    const { key, id } = await buyer();
    await completeAtStripe(id);
    vi.spyOn(console, "error").mockImplementation(() => {});
    for (const vars of [{ STRIPE_SECRET_KEY: stripeKey.revoked }, { STRIPE_SECRET_KEY: undefined }]) {
      const response = await post(vars, "/apiaas/billing/token-exchange", key, { sessionId: id });
      expect(response.status).toBe(500);
      expect(await errorBody(response)).toEqual(MISCONFIGURED);
    }
    // With the key back, the checkout's credentials are still there to collect.
    expect((await api("/apiaas/billing/token-exchange", { key, body: { sessionId: id } })).status).toBe(200);
  });

  it.each([429, 500, 503] as const)("Stripe answering %i stays a 503 with Retry-After", async (status) => {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await post({ STRIPE_SECRET_KEY: stripeKey.failing(status) }, "/apiaas/billing/checkout-session", key, {
      plan: "launch",
    });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(await errorBody(response)).toEqual(UNAVAILABLE);
  });

  it("the plan page says which: billing not set up (500), or Stripe briefly out of reach (503, Retry-After)", async () => {
    const { browser } = await signedUp();
    const cookie = `__Host-session=${browser.cookies.get("__Host-session")}`;
    vi.spyOn(console, "error").mockImplementation(() => {});

    const refused = await portal({ STRIPE_SECRET_KEY: stripeKey.revoked }, cookie, "/portal/billing/checkout", { plan: "launch" });
    expect(refused.status).toBe(500);
    const refusedText = await textOf(refused);
    expect(refusedText).toContain("Billing is not set up correctly on this service");
    expect(refusedText).not.toContain("Try again later");

    const limited = await portal({ STRIPE_SECRET_KEY: stripeKey.failing(429) }, cookie, "/portal/billing/checkout", { plan: "launch" });
    expect(limited.status).toBe(503);
    expect(limited.headers.get("retry-after")).toBe("5");
    expect(await textOf(limited)).toContain("Billing is not available right now. Try again later");

    // Back from a checkout while the key is revoked: the page says the checkout could not be confirmed, and why.
    const upgrade = await browser.postForm("/portal/billing/checkout", { plan: "launch" });
    const id = upgrade.headers.get("location")!.split("/").pop()!;
    const back = await portal({ STRIPE_SECRET_KEY: stripeKey.revoked }, cookie, `/portal/billing?checkout=success&session_id=${id}`);
    expect(back.status).toBe(200);
    expect(await textOf(back)).toContain("We could not confirm this checkout: billing is not set up correctly on this service");
  });
});

describe("a checkout completed with a payment that settles later (SEPA debit)", () => {
  it("the plan page says the payment is being processed, before and after the webhook, until Stripe confirms it", async () => {
    const { browser } = await signedUp();
    const upgrade = await browser.postForm("/portal/billing/checkout", { plan: "launch" });
    const id = upgrade.headers.get("location")!.split("/").pop()!;
    await completeAtStripe(id, "unpaid");
    const page = async () => textOf(await browser.fetch(`/portal/billing?checkout=success&session_id=${id}`));

    // Before the webhook: from Stripe's answer.
    const before = await page();
    expect(before).not.toContain("Payment received");
    expect(before).toContain("Your payment is being processed. Your plan changes to Launch once Stripe confirms it");

    // The webhook for it keeps the account on Free with an incomplete subscription, as before.
    const { account } = (await (await browser.fetch("/apiaas/whoami")).json()) as { account: { id: string } };
    const unpaid = { ...completedCheckout(account.id, id), payment_status: "unpaid" };
    expect(await outcomeOf(deliver(event("checkout.session.completed", unpaid)))).toBe("applied");
    const after = await page();
    expect(after).not.toContain("Payment received");
    expect(after).toContain("Your payment is being processed");
    expect(after).toContain("Your plan: Free");
  });

  it("a checkout paid at once still says Payment received", async () => {
    const { browser } = await signedUp();
    const upgrade = await browser.postForm("/portal/billing/checkout", { plan: "launch" });
    const id = upgrade.headers.get("location")!.split("/").pop()!;
    await completeAtStripe(id);
    expect(await textOf(await browser.fetch(`/portal/billing?checkout=success&session_id=${id}`))).toContain(
      "Payment received. Your plan changes to Launch",
    );
  });
});

describe("a customer deleted in Stripe's dashboard", () => {
  async function formerCustomer() {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    const customer = `cus_deleted_${crypto.randomUUID().slice(0, 8)}`;
    await db.insert(billingAccounts).values({
      accountId: account.id,
      stripeCustomerId: customer,
      subscriptionId: "sub_old",
      status: "canceled",
      plan: "free",
      stateAt: 1,
      lastEventId: "evt_old",
      updatedAt: new Date(),
    });
    return { account, key, customer };
  }

  it("does not stop the account buying again: checkout starts afresh by email", async () => {
    const { key } = await formerCustomer();
    const created = await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } });
    expect(created.status).toBe(200);
    const sent = await sentToStripe(((await created.json()) as { id: string }).id);
    expect(sent.customer).toBeUndefined();
    expect(sent.customer_email).toMatch(/@/);
  });

  it("is told as such on Manage billing, not as the service's misconfiguration", async () => {
    const { browser } = await signedUp();
    const accountId = ((await (await browser.fetch("/apiaas/whoami")).json()) as { account: { id: string } }).account.id;
    await db.insert(billingAccounts).values({
      accountId,
      stripeCustomerId: "cus_deleted_portal",
      subscriptionId: "sub_old",
      status: "canceled",
      plan: "free",
      stateAt: 1,
      lastEventId: "evt_old",
      updatedAt: new Date(),
    });
    const response = await portal({}, `__Host-session=${browser.cookies.get("__Host-session")}`, "/portal/billing/manage", {});
    expect(response.status).toBe(404);
    expect(await textOf(response)).toContain("This account's billing details are no longer at Stripe");
  });
});
