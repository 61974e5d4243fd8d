import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts, apiKeys, checkoutSessions, stripeEvents } from "../../schema";
import { deleteAccount, setPlan } from "../../src/accounts/accounts";
import { stillChargeable } from "../../src/billing/checkouts";
import { addAccount, addKey, db } from "../helpers/catalogue";
import { fetchWith } from "../lookup/helpers";
import { Browser, mcpAccount, PASSWORD } from "../oauth/helpers";
import { api, completeAtStripe, completedCheckout, deliver, event, outcomeOf, signatureFor, subscription } from "./helpers";

const planOf = async (id: string) => (await db.query.accounts.findFirst({ where: eq(accounts.id, id) }))!.plan;
const errorOf = async (response: Response) => {
  const { error, code } = (await response.json()) as { error: string; code: string };
  return { code, message: error };
};

describe("billing endpoints need a portal session or a secret key", () => {
  it.each([
    ["GET", "/apiaas/billing/status", undefined],
    ["POST", "/apiaas/billing/checkout-session", { plan: "launch" }],
    ["POST", "/apiaas/billing/token-exchange", { sessionId: "cs_test_abc" }],
  ] as const)("%s %s: 401 without, or with a publishable or unknown key", async (method, path, body) => {
    const account = await addAccount();
    const publishable = await addKey(account.id, { type: "publishable" });
    for (const key of [undefined, publishable, "sk_live_doesnotexist0000000000000000000"]) {
      const response = await api(path, { method, key, body });
      expect(response.status).toBe(401);
      expect((await errorOf(response)).code).toBe("unauthorized");
    }
  });

  it("a signed-in portal session is enough", async () => {
    const account = await mcpAccount("growth");
    const browser = new Browser();
    const login = await browser.fetch("/apiaas/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: account.email, password: PASSWORD }),
    });
    expect(login.status).toBe(200);
    const status = await browser.fetch("/apiaas/billing/status");
    expect(status.status).toBe(200);
    expect(((await status.json()) as { plan: string }).plan).toBe("growth");
  });
});

describe("checkout input", () => {
  it.each([
    [{ plan: "platinum" }, "plan must be one of launch, growth, enterprise"],
    [{ plan: "free" }, "plan must be one of launch, growth, enterprise"],
    [{}, "plan must be one of launch, growth, enterprise"],
    ["not json", "Send"],
    [{ plan: "enterprise" }, "The enterprise plan is not sold through checkout here; contact us"],
  ])("%j → 400", async (body, message) => {
    const account = await addAccount();
    const response = await api("/apiaas/billing/checkout-session", { key: await addKey(account.id, { type: "secret" }), body });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).message).toContain(message);
  });
});

describe("token exchange", () => {
  it("only the session's own account can collect, and only once even when asked concurrently", async () => {
    const owner = await addAccount();
    const ownerKey = await addKey(owner.id, { type: "secret" });
    const { id } = (await (await api("/apiaas/billing/checkout-session", { key: ownerKey, body: { plan: "launch" } })).json()) as {
      id: string;
    };
    await completeAtStripe(id);

    const stranger = await addAccount();
    const theirs = await api("/apiaas/billing/token-exchange", {
      key: await addKey(stranger.id, { type: "secret" }),
      body: { sessionId: id },
    });
    expect(theirs.status).toBe(404);

    const keysBefore = (await db.select().from(apiKeys).where(eq(apiKeys.accountId, owner.id))).length;
    const attempts = await Promise.all(
      Array.from({ length: 4 }, () => api("/apiaas/billing/token-exchange", { key: ownerKey, body: { sessionId: id } })),
    );
    expect(attempts.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    expect((await db.select().from(apiKeys).where(eq(apiKeys.accountId, owner.id))).length).toBe(keysBefore + 1);
  });

  it("a key that could not be stored leaves the checkout's credentials to collect on the next try", async () => {
    const account = await addAccount();
    const key = await addKey(account.id, { type: "secret" });
    const { id } = (await (await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).json()) as { id: string };
    await completeAtStripe(id);

    // D1 refuses the new key's row, the way it does when a write fails.
    await env.DB.exec("CREATE TRIGGER refuse_keys BEFORE INSERT ON api_keys BEGIN SELECT RAISE(ABORT, 'injected outage'); END");
    const failed = await api("/apiaas/billing/token-exchange", { key, body: { sessionId: id } });
    expect(failed.status).toBe(503);
    expect(failed.headers.get("retry-after")).toBe("5");

    await env.DB.exec("DROP TRIGGER refuse_keys");
    const retried = await api("/apiaas/billing/token-exchange", { key, body: { sessionId: id } });
    expect(retried.status).toBe(200);
    const { secretKey } = (await retried.json()) as { secretKey: string };
    expect((await api("/apiaas/billing/status", { key: secretKey })).status).toBe(200);
  });

  it("an account at its most live keys is told so, and collects the checkout's key once it revoked one", async () => {
    const account = await addAccount();
    const key = await addKey(account.id, { type: "secret" });
    const { id } = (await (await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).json()) as { id: string };
    await completeAtStripe(id);
    for (let i = 1; i < 100; i++) await addKey(account.id, { type: "publishable" });

    const full = await api("/apiaas/billing/token-exchange", { key, body: { sessionId: id } });
    expect(full.status).toBe(409);
    expect(((await full.json()) as { error: string }).error).toMatch(/^This account has 100 live keys/);

    const [spare] = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.type, "publishable")).limit(1);
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, spare!.id));
    expect((await api("/apiaas/billing/token-exchange", { key, body: { sessionId: id } })).status).toBe(200);
  });

  it("a second checkout expires the first, still open, so only one can be paid", async () => {
    const account = await addAccount();
    const key = await addKey(account.id, { type: "secret" });
    const checkout = async () =>
      (await (await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).json()) as { id: string };
    const first = await checkout();
    const second = await checkout();
    expect(second.id).not.toBe(first.id);
    // The customer goes back to the first tab: Stripe no longer takes the payment.
    await expect(completeAtStripe(first.id)).rejects.toThrow("fake stripe: 409");
    await completeAtStripe(second.id);
  });

  it("two checkouts started at once (a double click): exactly one of them can be paid", async () => {
    const account = await addAccount();
    const key = await addKey(account.id, { type: "secret" });
    const checkout = () => api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } });
    const answers = await Promise.all([checkout(), checkout()]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const ids = await Promise.all(answers.map(async (a) => ((await a.json()) as { id: string }).id));
    const paid = await Promise.allSettled(ids.map((id) => completeAtStripe(id)));
    expect(paid.filter((p) => p.status === "fulfilled")).toHaveLength(1);
  });

  it("a checkout paid whose webhook has not arrived yet refuses another, as a paying account would", async () => {
    const account = await addAccount();
    const key = await addKey(account.id, { type: "secret" });
    const { id } = (await (await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).json()) as { id: string };
    await completeAtStripe(id);
    const again = await api("/apiaas/billing/checkout-session", { key, body: { plan: "growth" } });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: string }).error).toMatch(/^This account's last checkout was just paid/);
  });

  it("a checkout paid and its key collected before the webhook still refuses another", async () => {
    const account = await addAccount();
    const key = await addKey(account.id, { type: "secret" });
    const { id } = (await (await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).json()) as { id: string };
    await completeAtStripe(id);
    expect((await api("/apiaas/billing/token-exchange", { key, body: { sessionId: id } })).status).toBe(200);
    expect((await api("/apiaas/billing/checkout-session", { key, body: { plan: "growth" } })).status).toBe(409);
  });

  it("an earlier checkout Stripe does not know is no obstacle, not an outage", async () => {
    const account = await addAccount();
    const key = await addKey(account.id, { type: "secret" });
    // Made under another Stripe account, say (test keys, then live ones).
    await db
      .insert(checkoutSessions)
      .values({ id: "cs_test_unknown_to_stripe", accountId: account.id, plan: "launch", createdAt: new Date() });
    expect((await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).status).toBe(200);
  });

  it("Stripe out of reach is a 503 to retry, as for checkout", async () => {
    const account = await addAccount();
    const key = await addKey(account.id, { type: "secret" });
    const { id } = (await (await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).json()) as { id: string };
    // Nothing listens on port 9 (discard): every call to Stripe fails to connect.
    const unreachable = (path: string, body: unknown) =>
      fetchWith({ STRIPE_API_BASE: "http://127.0.0.1:9" }, `https://logos.test${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
    for (const [path, body] of [
      ["/apiaas/billing/checkout-session", { plan: "growth" }],
      ["/apiaas/billing/token-exchange", { sessionId: id }],
    ] as const) {
      const response = await unreachable(path, body);
      expect(response.status, path).toBe(503);
      expect(response.headers.get("retry-after"), path).toBe("5");
      expect(await errorOf(response)).toEqual({ code: "unavailable", message: "Billing is not available right now. Try again later" });
    }
  });

  it.each([[{}], [{ sessionId: "pi_123" }], [{ sessionId: "cs_test_unknown" }]])("%j is refused", async (body) => {
    const account = await addAccount();
    const response = await api("/apiaas/billing/token-exchange", { key: await addKey(account.id, { type: "secret" }), body });
    expect([400, 404]).toContain(response.status);
  });
});

describe("one subscription per account", () => {
  it("a paying account is sent to Manage billing instead of a second checkout; once it ended, it can buy again", async () => {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    const t = Math.floor(Date.now() / 1000);
    for (const status of ["trialing", "active", "past_due"]) {
      // Within one second, in lifecycle order: each applies.
      await deliver(event("customer.subscription.updated", subscription(account.id, { status }), { created: t }));
      const refused = await api("/apiaas/billing/checkout-session", { key, body: { plan: "growth" } });
      expect(refused.status, status).toBe(409);
      expect(await errorOf(refused)).toEqual({
        code: "conflict",
        message:
          "This account already has a subscription: change its plan with Manage billing on /portal/billing (Stripe's customer portal), not a new checkout",
      });
    }
    expect(await db.select().from(checkoutSessions).where(eq(checkoutSessions.accountId, account.id))).toEqual([]);

    // Not paying but not over: Stripe may still charge for it.
    for (const [status, created] of [
      ["unpaid", t],
      ["paused", t + 1],
    ] as const) {
      await deliver(event("customer.subscription.updated", subscription(account.id, { status }), { created }));
      const refused = await api("/apiaas/billing/checkout-session", { key, body: { plan: "growth" } });
      expect(refused.status, status).toBe(409);
      expect(await errorOf(refused)).toEqual({
        code: "conflict",
        message: `This account's subscription is ${status}: pay or cancel it with Manage billing on /portal/billing (Stripe's customer portal) before starting another checkout`,
      });
    }

    await deliver(event("customer.subscription.deleted", subscription(account.id, { status: "canceled" }), { created: t + 2 }));
    expect((await api("/apiaas/billing/checkout-session", { key, body: { plan: "growth" } })).status).toBe(200);
  });

  it("a redelivered event does not undo a plan an operator set since, for a price the service does not sell", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.created", subscription(account.id), { created: t }));
    const custom = event("customer.subscription.updated", subscription(account.id, { price: "price_custom_enterprise" }), {
      created: t + 1,
    });
    expect(await outcomeOf(deliver(custom))).toBe("applied");
    expect(await planOf(account.id)).toBe("launch");
    expect((await setPlan(db, account.id, "enterprise")).ok).toBe(true);
    // Stripe sends it again (a retry after a slow answer, Resend in its dashboard).
    expect(await outcomeOf(deliver(custom))).toBe("duplicate");
    expect(await planOf(account.id)).toBe("enterprise");
  });

  it("a checkout whose payment is still settling (a bank debit) refuses another, before its webhook and after", async () => {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    const { id } = (await (await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).json()) as { id: string };
    await completeAtStripe(id, "unpaid");
    expect((await api("/apiaas/billing/checkout-session", { key, body: { plan: "growth" } })).status).toBe(409);
    await deliver(event("checkout.session.completed", { ...completedCheckout(account.id, id, "launch"), payment_status: "unpaid" }));
    const refused = await api("/apiaas/billing/checkout-session", { key, body: { plan: "growth" } });
    expect(refused.status).toBe(409);
    expect((await errorOf(refused)).message).toMatch(/^This account's subscription is incomplete: pay or cancel it/);
  });

  it("a new subscription told of before the old one's end: the account is on the new one", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.created", subscription(account.id, { id: "sub_a" }), { created: t }));
    expect(await planOf(account.id)).toBe("launch");
    // Stripe delivers Growth's events first, then Launch's cancellation, which happened before them.
    expect(
      await outcomeOf(
        deliver(
          event("customer.subscription.created", subscription(account.id, { id: "sub_b", price: "price_growth_test" }), { created: t + 2 }),
        ),
      ),
    ).toBe("applied");
    expect(
      await outcomeOf(
        deliver(event("customer.subscription.deleted", subscription(account.id, { id: "sub_a", status: "canceled" }), { created: t + 1 })),
      ),
    ).not.toBe("applied");
    expect(await planOf(account.id)).toBe("growth");
  });

  it("an older subscription still paying never takes the account back, nor does its end leave it on Free", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    // Moved from Launch to Growth in Stripe's dashboard, Launch set to cancel at its period's end.
    await deliver(event("customer.subscription.created", subscription(account.id, { id: "sub_old", created: t }), { created: t }));
    await deliver(
      event("customer.subscription.created", subscription(account.id, { id: "sub_new", price: "price_growth_test", created: t + 10 }), {
        created: t + 10,
      }),
    );
    expect(await planOf(account.id)).toBe("growth");
    const older = [
      event("customer.subscription.updated", subscription(account.id, { id: "sub_old", created: t, cancelAtPeriodEnd: true }), {
        created: t + 20,
      }),
      event("customer.subscription.updated", subscription(account.id, { id: "sub_old", created: t }), { created: t + 25 }),
      event("customer.subscription.deleted", subscription(account.id, { id: "sub_old", created: t, status: "canceled" }), {
        created: t + 30,
      }),
    ];
    for (const body of older) {
      expect(await outcomeOf(deliver(body)), body.type).toBe("other_subscription");
      expect(await planOf(account.id), body.type).toBe("growth");
    }
    const key = await addKey(account.id, { type: "secret" });
    const status = (await (await api("/apiaas/billing/status", { key })).json()) as { plan: string; subscription: { status: string } };
    expect(status).toMatchObject({ plan: "growth", subscription: { status: "active" } });
    // Checkout stays closed: the account pays for Growth.
    expect((await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).status).toBe(409);

    // The newer one's own end still moves it.
    await deliver(
      event(
        "customer.subscription.deleted",
        subscription(account.id, { id: "sub_new", price: "price_growth_test", created: t + 10, status: "canceled" }),
        { created: t + 40 },
      ),
    );
    expect(await planOf(account.id)).toBe("free");
  });

  it("a checkout's subscription counts from the checkout's creation until its own events tell", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.created", subscription(account.id, { id: "sub_before", created: t }), { created: t }));
    const checkout = { ...completedCheckout(account.id, "cs_test_newer", "growth"), subscription: "sub_checkout", created: t + 5 };
    expect(await outcomeOf(deliver(event("checkout.session.completed", checkout, { created: t + 8 })))).toBe("applied");
    expect(await planOf(account.id)).toBe("growth");
    // The subscription before it renews before the checkout's subscription has said anything itself.
    const renewed = event("customer.subscription.updated", subscription(account.id, { id: "sub_before", created: t }), { created: t + 9 });
    expect(await outcomeOf(deliver(renewed))).toBe("other_subscription");
    expect(await planOf(account.id)).toBe("growth");
  });

  it("events that another subscription is not paying never move the account off the one it pays for", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    // Launch stopped paying, and Growth was bought in its place while Stripe kept retrying Launch's invoice.
    await deliver(event("customer.subscription.created", subscription(account.id, { id: "sub_launch" }), { created: t }));
    await deliver(
      event("customer.subscription.updated", subscription(account.id, { id: "sub_launch", status: "unpaid" }), { created: t + 1 }),
    );
    expect(await planOf(account.id)).toBe("free");
    await deliver(
      event("customer.subscription.created", subscription(account.id, { id: "sub_growth", price: "price_growth_test" }), {
        created: t + 2,
      }),
    );
    expect(await planOf(account.id)).toBe("growth");

    // Launch is cancelled at last; a checkout is left unpaid.
    const unpaidCheckout = {
      ...completedCheckout(account.id, "cs_test_unpaid", "launch"),
      subscription: "sub_other",
      payment_status: "unpaid",
    };
    const late = [
      event("customer.subscription.deleted", subscription(account.id, { id: "sub_launch", status: "canceled" }), { created: t + 4 }),
      event("checkout.session.completed", unpaidCheckout, { created: t + 5 }),
    ];
    for (const body of late) {
      expect(await outcomeOf(deliver(body)), body.type).toBe("other_subscription");
      expect(await planOf(account.id), body.type).toBe("growth");
    }
    // Recorded like any event: a redelivery is a duplicate.
    expect(await outcomeOf(deliver(late[0]))).toBe("duplicate");
    const status = (await (await api("/apiaas/billing/status", { key: await addKey(account.id, { type: "secret" }) })).json()) as {
      subscription: { status: string };
    };
    expect(status.subscription.status).toBe("active");

    // The subscription it pays for still moves it.
    await deliver(
      event(
        "customer.subscription.deleted",
        subscription(account.id, { id: "sub_growth", price: "price_growth_test", status: "canceled" }),
        { created: t + 6 },
      ),
    );
    expect(await planOf(account.id)).toBe("free");
  });
});

describe("a checkout that expired at Stripe", () => {
  const expireAtStripe = async (id: string) => {
    const response = await fetch(`${env.STRIPE_API_BASE}/v1/checkout/sessions/${id}/expire`, {
      method: "POST",
      headers: { Authorization: `Bearer ${env.STRIPE_SECRET_KEY}` },
    });
    expect(response.status).toBe(200);
  };
  const startCheckout = async (key: string) =>
    ((await (await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } })).json()) as { id: string }).id;

  it("keeps its account from being deleted only until Stripe says so", async () => {
    const account = await addAccount("free");
    const id = await startCheckout(await addKey(account.id, { type: "secret" }));
    await expireAtStripe(id);
    expect(await deleteAccount(db, account.id, stillChargeable(account.id))).toMatchObject({
      ok: false,
      error: { code: "conflict", message: expect.stringContaining("checkout.session.expired") },
    });
    const expired = event("checkout.session.expired", {
      ...completedCheckout(account.id, id, "launch"),
      status: "expired",
      payment_status: "unpaid",
    });
    expect(await outcomeOf(deliver(expired))).toBe("applied");
    expect(await outcomeOf(deliver(expired))).toBe("duplicate");
    expect(await deleteAccount(db, account.id, stillChargeable(account.id))).toMatchObject({ ok: true });
  });

  it("an expiry of a session none of ours, or of one completed, changes nothing", async () => {
    const account = await addAccount("free");
    expect(await outcomeOf(deliver(event("checkout.session.expired", completedCheckout(account.id, "cs_test_not_ours"))))).toBe("ignored");
    const id = await startCheckout(await addKey(account.id, { type: "secret" }));
    await deliver(event("checkout.session.completed", completedCheckout(account.id, id, "launch")));
    expect(await outcomeOf(deliver(event("checkout.session.expired", completedCheckout(account.id, id, "launch"))))).toBe("stale");
    const [row] = await db.select().from(checkoutSessions).where(eq(checkoutSessions.id, id));
    expect(row).toMatchObject({ expiredAt: null });
    expect(row!.completedAt).not.toBeNull();
  });

  it("is recorded as expired when the next checkout finds it so, without its webhook", async () => {
    const account = await addAccount("free");
    const key = await addKey(account.id, { type: "secret" });
    const first = await startCheckout(key);
    await expireAtStripe(first);
    const second = await startCheckout(key);
    expect(second).not.toBe(first);
    const [row] = await db.select().from(checkoutSessions).where(eq(checkoutSessions.id, first));
    expect(row!.expiredAt).not.toBeNull();
    // The second is open: it still keeps the account, until it too has expired.
    expect((await deleteAccount(db, account.id, stillChargeable(account.id))).ok).toBe(false);
    await expireAtStripe(second);
    await deliver(event("checkout.session.expired", { ...completedCheckout(account.id, second, "launch"), status: "expired" }));
    expect((await deleteAccount(db, account.id, stillChargeable(account.id))).ok).toBe(true);
  });
});

describe("a subscription's own checkout", () => {
  it("completed unpaid after its subscription became active leaves the plan: a subscription never goes back to incomplete", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.created", subscription(account.id, { id: "sub_sepa" }), { created: t }));
    expect(await planOf(account.id)).toBe("launch");
    // A payment method that settles later: Stripe completes the session unpaid, and tells of it last.
    const unpaid = { ...completedCheckout(account.id, "cs_test_sepa", "launch"), subscription: "sub_sepa", payment_status: "unpaid" };
    expect(await outcomeOf(deliver(event("checkout.session.completed", unpaid, { created: t + 2 })))).toBe("stale");
    expect(await planOf(account.id)).toBe("launch");
    // The subscription's own events still move it.
    await deliver(
      event("customer.subscription.updated", subscription(account.id, { id: "sub_sepa", status: "unpaid" }), { created: t + 3 }),
    );
    expect(await planOf(account.id)).toBe("free");
  });

  it("completed unpaid before anything else is known: the account stays on Free until its subscription pays", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    const unpaid = { ...completedCheckout(account.id, "cs_test_later", "growth"), subscription: "sub_later", payment_status: "unpaid" };
    await deliver(event("checkout.session.completed", unpaid, { created: t }));
    expect(await planOf(account.id)).toBe("free");
    await deliver(
      event("customer.subscription.updated", subscription(account.id, { id: "sub_later", price: "price_growth_test" }), { created: t + 1 }),
    );
    expect(await planOf(account.id)).toBe("growth");
  });
});

describe("webhook signatures", () => {
  it.each([
    ["no signature", { header: null }, "Missing Stripe-Signature header"],
    ["a garbage signature", { header: "t=1,v1=deadbeef" }, "Invalid signature"],
    ["another secret", { secret: "whsec_someone_else" }, "Invalid signature"],
  ] as const)("%s → 400 and nothing changes", async (_, options, message) => {
    const account = await addAccount("free");
    const body = event("customer.subscription.created", subscription(account.id, { price: "price_growth_test" }));
    for (const path of ["/apiaas/billing/webhook", "/api/billing/webhook"]) {
      const response = await deliver(body, { ...options, path });
      expect(response.status).toBe(400);
      expect((await errorOf(response)).message).toBe(message);
    }
    expect(await planOf(account.id)).toBe("free");
    expect(await db.select().from(stripeEvents).where(eq(stripeEvents.id, body.id))).toEqual([]);
  });

  it("a payload altered after signing → 400", async () => {
    const account = await addAccount("free");
    const genuine = event("customer.subscription.created", subscription(account.id));
    const signedFor = JSON.stringify(genuine);
    const header = await signatureFor(signedFor);
    const forged = signedFor.replace("price_launch_test", "price_growth_test");
    expect((await deliver(forged, { header })).status).toBe(400);
    expect(await planOf(account.id)).toBe("free");
  });
});

describe("webhook size", () => {
  it("a body over 1 MB is refused unread", async () => {
    const response = await deliver("x".repeat(1024 * 1024 + 1), { header: "t=1,v1=00" });
    expect(response.status).toBe(413);
  });
});

describe("webhook hardening", () => {
  it("row 3: events of the same second follow the subscription's lifecycle, not delivery order", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.updated", subscription(account.id, { status: "active" }), { created: t }));
    expect(await planOf(account.id)).toBe("launch");
    const late = await deliver(event("customer.subscription.created", subscription(account.id, { status: "incomplete" }), { created: t }));
    expect(((await late.json()) as { outcome: string }).outcome).toBe("stale");
    expect(await planOf(account.id)).toBe("launch");
  });

  it("row 3: a subscription Stripe deleted never comes back, whatever arrives after", async () => {
    const account = await addAccount("free");
    const t = Math.floor(Date.now() / 1000);
    await deliver(event("customer.subscription.created", subscription(account.id), { created: t }));
    await deliver(event("customer.subscription.deleted", subscription(account.id, { status: "canceled" }), { created: t + 1 }));
    expect(await planOf(account.id)).toBe("free");
    for (const created of [t + 1, t + 2]) {
      await deliver(event("customer.subscription.updated", subscription(account.id, { status: "active" }), { created }));
      expect(await planOf(account.id)).toBe("free");
    }
    // Another subscription may replace it.
    await deliver(
      event("customer.subscription.created", subscription(account.id, { id: "sub_test_2", price: "price_growth_test" }), {
        created: t + 3,
      }),
    );
    expect(await planOf(account.id)).toBe("growth");
  });

  it.each([
    ["an empty object", "customer.subscription.updated", {}],
    ["no object at all", "checkout.session.completed", undefined],
    ["a subscription without a status", "customer.subscription.created", { id: "sub_x", customer: "cus_x", metadata: {} }],
    [
      "a subscription whose customer is a number",
      "customer.subscription.updated",
      { id: "sub_x", status: "active", customer: 42, metadata: {} },
    ],
  ])("row 6: a validly signed event with %s → 400, nothing applied, nothing recorded", async (_, type, object) => {
    const body = event(type, {});
    (body.data as { object?: unknown }).object = object;
    const response = await deliver(body);
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ code: "invalid_argument" });
    expect(await db.select().from(stripeEvents).where(eq(stripeEvents.id, body.id))).toEqual([]);
  });
});

describe("cross-site posts with the session cookie", () => {
  async function signedInBrowser() {
    const account = await mcpAccount("free");
    const browser = new Browser();
    await browser.fetch("/apiaas/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: account.email, password: PASSWORD }),
    });
    return { account, browser };
  }

  it.each([
    ["/apiaas/billing/checkout-session", { plan: "launch" }, 200, { plan: "launch", id: expect.stringMatching(/^cs_test_/) }],
    [
      "/apiaas/billing/token-exchange",
      { sessionId: "cs_test_forged" },
      404,
      { error: "No checkout session with this id for your account", code: "not_found" },
    ],
  ])("row 9: %s refuses a post from another site, text/plain or JSON, and keeps serving this site", async (path, body, status, answer) => {
    const { account, browser } = await signedInBrowser();
    const forged: Record<string, string>[] = [
      { "Content-Type": "text/plain", Origin: "https://evil.example" },
      { "Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site" },
      { "Content-Type": "text/plain" },
      { "Content-Type": "application/json", Origin: "https://evil.example" },
    ];
    const cookie = `__Host-session=${browser.cookies.get("__Host-session")}`;
    for (const headers of forged) {
      const response = await exports.default.fetch(`https://logos.test${path}`, {
        method: "POST",
        headers: { Cookie: cookie, ...headers },
        body: JSON.stringify(body),
      });
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(await errorOf(response)).toEqual({ code: "forbidden", message: "Cross-site request refused" });
    }
    expect(await db.select().from(checkoutSessions).where(eq(checkoutSessions.accountId, account.id))).toEqual([]);
    const own = await browser.fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin" },
      body: JSON.stringify(body),
    });
    // This site's own post is answered as the route answers it: a checkout made, a session it does not know.
    expect(own.status).toBe(status);
    expect(await own.json()).toMatchObject(answer);
    if (status === 200) expect(await db.select().from(checkoutSessions).where(eq(checkoutSessions.accountId, account.id))).toHaveLength(1);
  });

  it("a server holding a secret key is not asked where it comes from", async () => {
    const account = await addAccount();
    const key = await addKey(account.id, { type: "secret" });
    const response = await api("/apiaas/billing/checkout-session", { key, body: { plan: "launch" } });
    expect(response.status).toBe(200);
  });
});
