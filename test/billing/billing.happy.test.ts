import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts } from "../../schema";
import { addAccount, addKey, db } from "../helpers/catalogue";
import { insertedKeys } from "../web/helpers";
import { api, completeAtStripe, completedCheckout, deliver, event, outcomeOf, sentToStripe, subscription } from "./helpers";

const planOf = async (id: string) => (await db.query.accounts.findFirst({ where: eq(accounts.id, id) }))!.plan;

describe("checkout, webhook, token exchange: buying a plan", () => {
  it("creates a subscription Checkout Session for the plan's price, then hands the account a secret key once it is paid", async () => {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });

    const created = await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } });
    expect(created.status).toBe(200);
    const session = (await created.json()) as { id: string; url: string; plan: string };
    expect(session.url).toBe(`https://checkout.stripe.com/c/pay/${session.id}`);
    expect(session.plan).toBe("launch");
    const sent = await sentToStripe(session.id);
    expect(sent).toMatchObject({
      mode: "subscription",
      "line_items[0][price]": "price_launch_test",
      "line_items[0][quantity]": "1",
      client_reference_id: account.id,
      customer_email: account.email,
      "metadata[plan]": "launch",
      "subscription_data[metadata][accountId]": account.id,
    });

    // Not paid yet: nothing to collect.
    const early = await api("/apiaas/billing/token-exchange", { key, body: { sessionId: session.id } });
    expect(early.status).toBe(409);

    await completeAtStripe(session.id);
    const completed = await deliver(event("checkout.session.completed", completedCheckout(account.id, session.id)));
    expect(completed.status).toBe(200);
    expect(await planOf(account.id)).toBe("launch");

    const exchanged = await api("/apiaas/billing/token-exchange", { key, body: { sessionId: session.id } });
    expect(exchanged.status).toBe(200);
    const credentials = (await exchanged.json()) as { secretKey: string; plan: string };
    expect(credentials.secretKey).toMatch(/^sk_/);
    expect(credentials.plan).toBe("launch");
    // The new key works, and the session is spent.
    expect((await api("/apiaas/billing/status", { key: credentials.secretKey })).status).toBe(200);
    const again = await api("/apiaas/billing/token-exchange", { key, body: { sessionId: session.id } });
    expect(again.status).toBe(409);
  });

  it("the exchange also works before the webhook arrives, by asking Stripe", async () => {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    const { id } = (await (await api("/apiaas/billing/checkout-session", { key, body: { plan: "growth" } })).json()) as { id: string };
    expect((await sentToStripe(id))["line_items[0][price]"]).toBe("price_growth_test");
    await completeAtStripe(id);
    const exchanged = await api("/apiaas/billing/token-exchange", { key, body: { sessionId: id } });
    expect(exchanged.status).toBe(200);
  });

  it("status shows plan, subscription, period and usage against the plan's limits", async () => {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    const before = (await (await api("/apiaas/billing/status", { key })).json()) as Record<string, unknown>;
    expect(before).toMatchObject({
      plan: "free",
      subscription: null,
      limits: { companiesPerDay: 30, discoveriesPerDay: 500, mcp: { perDay: 50 } },
      usage: {
        companiesToday: { current: 0, limit: 30 },
        discoveriesToday: { used: 0, limit: 500 },
        mcpRequests: [
          { window: "day", toolset: "seven", used: 0, limit: 50 },
          { window: "day", toolset: "three", used: 0, limit: 20 },
        ],
        lookups: {
          month: { used: 0, limit: 500_000 },
          keys: [{ keyPrefix: key.slice(0, 9), type: "secret", minute: { used: 0, limit: 600 } }],
        },
      },
    });

    const periodEnd = Math.floor(Date.now() / 1000) + 30 * 86400;
    await deliver(event("customer.subscription.created", subscription(account.id, { price: "price_growth_test", periodEnd })));
    const after = (await (await api("/apiaas/billing/status", { key })).json()) as Record<string, any>;
    expect(after.plan).toBe("growth");
    expect(after.subscription).toMatchObject({
      status: "active",
      cancelAtPeriodEnd: false,
      currentPeriod: { end: new Date(periodEnd * 1000).toISOString() },
    });
    expect(after.limits.mcp.perMinute).toBe(10_000);
    expect(after.usage.companiesToday).toEqual({ current: 0, limit: 10_000 });
    expect(after.usage.lookups.month).toMatchObject({ used: 0, limit: 25_000_000 });
  });
});

describe("webhooks move the plan", () => {
  it("created → updated (upgrade) → payment failed (plan kept, past_due) → deleted (Free)", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.created", subscription(account.id), { created: t }));
    expect(await planOf(account.id)).toBe("launch");
    await deliver(event("customer.subscription.updated", subscription(account.id, { price: "price_growth_test" }), { created: t + 1 }));
    expect(await planOf(account.id)).toBe("growth");
    // Stripe tells of a failed renewal through the subscription: past_due while it retries.
    await deliver(
      event("customer.subscription.updated", subscription(account.id, { price: "price_growth_test", status: "past_due" }), {
        created: t + 2,
      }),
    );
    expect(await planOf(account.id)).toBe("growth");
    const status = (await (await api("/apiaas/billing/status", { key: await addKey(account.id, { type: "secret" }) })).json()) as {
      subscription: { status: string };
    };
    expect(status.subscription.status).toBe("past_due");
    await deliver(
      event("customer.subscription.deleted", subscription(account.id, { price: "price_growth_test", status: "canceled" }), {
        created: t + 3,
      }),
    );
    expect(await planOf(account.id)).toBe("free");
  });

  it("status reports the account's lookups this month, and every live key's minute, oldest first", async () => {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    const others = await insertedKeys(account.id, 60);
    type Window = { used: number; limit: number };
    const status = (await (await api("/apiaas/billing/status", { key })).json()) as {
      usage: { lookups: { month: Window; keys: Array<{ keyPrefix: string; minute: Window }> } };
    };
    expect(status.usage.lookups.month).toMatchObject({ used: 0, limit: 500_000 });
    expect(status.usage.lookups.keys).toHaveLength(61);
    expect(status.usage.lookups.keys.at(-1)).toMatchObject({ keyPrefix: key.slice(0, 9), minute: { used: 0, limit: 600 } });
    expect(others).toHaveLength(60);
  });

  it("the gateway path applies events the same way", async () => {
    const account = await addAccount("free");
    const response = await deliver(event("customer.subscription.created", subscription(account.id)), { path: "/api/billing/webhook" });
    expect(response.status).toBe(200);
    expect(await planOf(account.id)).toBe("launch");
  });

  it("a replayed event changes nothing; concurrent deliveries of one event apply once", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    const upgrade = event("customer.subscription.created", subscription(account.id, { price: "price_growth_test" }), { created: t });
    const downgrade = event("customer.subscription.updated", subscription(account.id), { created: t + 5 });
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => deliver(upgrade).then((r) => r.json() as Promise<{ outcome: string }>)),
    );
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(["applied", "duplicate", "duplicate", "duplicate", "duplicate"]);
    await deliver(downgrade);
    expect(await planOf(account.id)).toBe("launch");
    // The first event again, after a newer one: still launch.
    expect(await outcomeOf(deliver(upgrade))).toBe("duplicate");
    expect(await planOf(account.id)).toBe("launch");
  });

  it("out-of-order deliveries never move an account to an older state", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.deleted", subscription(account.id, { status: "canceled" }), { created: t + 10 }));
    const older = await deliver(
      event("customer.subscription.updated", subscription(account.id, { price: "price_growth_test" }), { created: t }),
    );
    expect(await outcomeOf(older)).toBe("stale");
    expect(await planOf(account.id)).toBe("free");
  });

  it("unknown event types are acknowledged and ignored", async () => {
    const response = await deliver(event("customer.created", { id: "cus_x", object: "customer" }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true, outcome: "ignored" });
  });
});
