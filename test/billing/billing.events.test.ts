import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { accounts, billingAccounts, stripeEvents } from "../../schema";
import { addAccount, addKey, db } from "../helpers/catalogue";
import { Browser, mcpAccount, PASSWORD } from "../oauth/helpers";
import { api, completedCheckout, deliver, event, outcomeOf, subscription } from "./helpers";

const planOf = async (id: string) => (await db.query.accounts.findFirst({ where: eq(accounts.id, id) }))!.plan;
const rowOf = async (id: string) => (await db.query.billingAccounts.findFirst({ where: eq(billingAccounts.accountId, id) }))!;
const recorded = async (id: string) => db.select().from(stripeEvents).where(eq(stripeEvents.id, id));
const failedInvoice = (fields: { subscription?: string } = {}) => ({
  id: "in_failed",
  object: "invoice",
  customer: "cus_test_1",
  status: "open",
  ...(fields.subscription ? { parent: { type: "subscription_details", subscription_details: { subscription: fields.subscription } } } : {}),
});

afterEach(() => vi.restoreAllMocks());

describe("invoice.payment_failed: the subscription's own events carry its status", () => {
  it("after a subscription went unpaid, a failed invoice does not mark it past_due, and the account settles it before buying again", async () => {
    const account = await mcpAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.created", subscription(account.id), { created: t }));
    await deliver(event("customer.subscription.updated", subscription(account.id, { status: "unpaid" }), { created: t + 1 }));
    expect(await planOf(account.id)).toBe("free");

    const failed = event("invoice.payment_failed", failedInvoice({ subscription: "sub_test_1" }), { created: t + 2 });
    const outcome = await outcomeOf(deliver(failed));
    expect((await rowOf(account.id)).status).toBe("unpaid");

    const status = (await (await api("/apiaas/billing/status", { key })).json()) as { plan: string; subscription: { status: string } };
    expect(status).toMatchObject({ plan: "free", subscription: { status: "unpaid" } });
    // Unpaid is not over: Stripe keeps its invoice open and makes new ones. The plan page sends
    // the account to pay or cancel it, not to a second subscription charged beside it.
    const browser = new Browser();
    await browser.fetch("/apiaas/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: account.email, password: PASSWORD }),
    });
    const page = await (await browser.fetch("/portal/billing")).text();
    expect(page).not.toContain("Renews");
    expect(page).not.toContain("Change plan");
    expect(page).not.toContain("Upgrade to Launch");
    expect(page).toContain("Pay or cancel the unpaid subscription with Manage billing first.");
    expect((await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).status).toBe(409);
    // Nothing of ours changed: the invoice is acknowledged, not recorded.
    expect(outcome).toBe("ignored");
    expect(await recorded(failed.id)).toEqual([]);
  });

  it("a failed invoice delivered first does not make the subscription's earlier unpaid event stale", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.created", subscription(account.id, { price: "price_growth_test" }), { created: t }));
    expect(await planOf(account.id)).toBe("growth");
    await deliver(event("invoice.payment_failed", failedInvoice({ subscription: "sub_test_1" }), { created: t + 11 }));
    const unpaid = event("customer.subscription.updated", subscription(account.id, { price: "price_growth_test", status: "unpaid" }), {
      created: t + 10,
    });
    expect(await outcomeOf(deliver(unpaid))).toBe("applied");
    expect(await planOf(account.id)).toBe("free");
    expect((await rowOf(account.id)).status).toBe("unpaid");
  });

  it("a failed invoice of an old subscription leaves the account's new one as it is", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.created", subscription(account.id, { id: "sub_launch" }), { created: t }));
    await deliver(
      event("customer.subscription.deleted", subscription(account.id, { id: "sub_launch", status: "canceled" }), { created: t + 1 }),
    );
    await deliver(
      event("customer.subscription.created", subscription(account.id, { id: "sub_growth", price: "price_growth_test" }), {
        created: t + 2,
      }),
    );
    await deliver(event("invoice.payment_failed", failedInvoice({ subscription: "sub_launch" }), { created: t + 3 }));
    expect(await rowOf(account.id)).toMatchObject({ subscriptionId: "sub_growth", status: "active", plan: "growth" });
    expect(await planOf(account.id)).toBe("growth");
  });
});

describe("a subscription's price that is not configured", () => {
  it("keeps the account's plan instead of the plan bought at checkout (metadata), and says so in the logs", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    // Bought Launch at checkout (metadata.plan), then switched to Growth in the customer portal.
    const bought = (fields: Parameters<typeof subscription>[1]) => {
      const object = subscription(account.id, fields);
      return { ...object, metadata: { ...object.metadata, plan: "launch" } };
    };
    await deliver(event("customer.subscription.created", bought({}), { created: t }));
    await deliver(event("customer.subscription.updated", bought({ price: "price_growth_test" }), { created: t + 1 }));
    expect(await planOf(account.id)).toBe("growth");

    // The operator then moved STRIPE_PRICE_GROWTH to a new price: this one is no longer configured.
    const renewed = event("customer.subscription.updated", bought({ price: "price_growth_2025" }), { created: t + 2 });
    expect(await outcomeOf(deliver(renewed))).toBe("applied");
    expect(await planOf(account.id)).toBe("growth");
    expect(await rowOf(account.id)).toMatchObject({ plan: "growth", status: "active", lastEventId: renewed.id });
    expect(warn.mock.calls.map((call) => call.join(" ")).join("\n")).toContain("price_growth_2025");

    // It still ends like any other.
    await deliver(event("customer.subscription.updated", bought({ price: "price_growth_2025", status: "unpaid" }), { created: t + 3 }));
    expect(await planOf(account.id)).toBe("free");

    // Paid again, it is not left on Free: the plan its checkout bought is the best known.
    const recovered = event("customer.subscription.updated", bought({ price: "price_growth_2025" }), { created: t + 4 });
    expect(await outcomeOf(deliver(recovered))).toBe("applied");
    expect(await planOf(account.id)).toBe("launch");
    expect(await rowOf(account.id)).toMatchObject({ plan: "launch", status: "active" });
  });

  it("keeps a plan an operator set by hand (a custom Enterprise price)", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const account = await addAccount("enterprise");
    const custom = { ...subscription(account.id, { price: "price_custom_deal" }), metadata: { accountId: account.id, plan: "launch" } };
    expect(await outcomeOf(deliver(event("customer.subscription.created", custom)))).toBe("applied");
    expect(await planOf(account.id)).toBe("enterprise");
    expect((await rowOf(account.id)).plan).toBe("enterprise");
  });
});

describe("events for an account that does not exist", () => {
  it.each([
    ["customer.subscription.created", () => subscription("acc_missing", { customer: "cus_missing" })],
    ["customer.subscription.deleted", () => subscription("acc_missing", { customer: "cus_missing", status: "canceled" })],
    ["checkout.session.completed", () => ({ ...completedCheckout("acc_missing", "cs_test_missing"), customer: "cus_missing" })],
  ])("%s is ignored and not recorded", async (type, object) => {
    const body = event(type, object());
    const response = await deliver(body);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true, outcome: "ignored" });
    expect(await recorded(body.id)).toEqual([]);
    expect(await db.select().from(billingAccounts).where(eq(billingAccounts.accountId, "acc_missing"))).toEqual([]);
  });
});
