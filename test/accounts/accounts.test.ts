import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts, apiClients, apiKeys, billingAccounts, checkoutSessions, companyDomains, sessions } from "../../schema";
import { createAccount, deleteAccount, setPlan } from "../../src/accounts/accounts";
import { stillChargeable } from "../../src/billing/checkouts";
import { startSession } from "../../src/accounts/browserSessions";
import { darkLogo40x20 } from "../fixtures/images";
import { addAccount, addCompany, addKey, createdAccount, insertAccount } from "../helpers/catalogue";
import { DECOY_HASH, hashPassword, PBKDF2_ITERATIONS, verifyPassword } from "../../src/accounts/passwords";
import { createDb } from "../../src/lib/db";

const db = createDb(env.DB);

describe("createAccount", () => {
  it("stores a normalised email, a PBKDF2 hash and a first API client", async () => {
    const created = await createAccount(db, { email: "  Ada@Example.COM ", password: "correct horse battery", plan: "launch" });
    if (!created.ok) throw new Error(created.error.message);
    expect(created.value).toMatchObject({ email: "ada@example.com", plan: "launch" });
    const [account] = await db.select().from(accounts).all();
    expect(account!.passwordHash).toMatch(new RegExp(`^pbkdf2-sha256\\$${PBKDF2_ITERATIONS}\\$`));
    expect(account!.passwordHash).not.toContain("correct horse");
    expect(await verifyPassword("correct horse battery", account!.passwordHash)).toBe(true);
    expect(await verifyPassword("correct horse battery!", account!.passwordHash)).toBe(false);
    expect(await db.select().from(apiClients).all()).toEqual([
      expect.objectContaining({ id: created.value.clientId, accountId: created.value.id }),
    ]);
  });

  it("writes what the tests' insertAccount writes, which hashes the password once per isolate", async () => {
    const made = await createdAccount("made@example.com", "correct horse battery", "growth");
    const inserted = await insertAccount({ email: "inserted@example.com", password: "correct horse battery", plan: "growth" });
    const rowsOf = async (id: string) => {
      const [account] = await db.select().from(accounts).where(eq(accounts.id, id));
      const clients = await db.select().from(apiClients).where(eq(apiClients.accountId, id));
      expect(await verifyPassword("correct horse battery", account!.passwordHash)).toBe(true);
      // What differs between any two accounts: ids, email, times, the hash's salt.
      const { id: _id, email: _email, passwordHash: _hash, createdAt: _created, updatedAt: _updated, emailConfirmedAt, ...rest } = account!;
      return {
        account: { ...rest, confirmed: emailConfirmedAt !== null },
        clients: clients.map(({ id: _client, accountId: _account, createdAt: _at, ...client }) => client),
      };
    };
    const [a, b] = [await rowsOf(made.id), await rowsOf(inserted.id)];
    expect(b.account).toEqual(a.account);
    expect(b.clients).toEqual(a.clients);
    expect(Object.keys(inserted).sort()).toEqual(Object.keys(made).sort());
  });

  it("defaults to the free plan", async () => {
    const created = await createAccount(db, { email: "free@example.com", password: "correct horse battery" });
    expect(created.ok && created.value.plan).toBe("free");
  });

  it("refuses a second account with the same email, in any case", async () => {
    await createAccount(db, { email: "dup@example.com", password: "correct horse battery" });
    const again = await createAccount(db, { email: "DUP@example.com", password: "another password!" });
    expect(again).toEqual({ ok: false, error: { code: "conflict", message: "An account with email dup@example.com already exists" } });
  });

  it("refuses all but one of several concurrent sign-ups with the same email, as a conflict", async () => {
    const created = await Promise.all(
      Array.from({ length: 4 }, () => createAccount(db, { email: "twice@example.com", password: "correct horse battery" })),
    );
    expect(created.filter((result) => result.ok)).toHaveLength(1);
    expect(created.filter((result) => !result.ok)).toEqual(
      Array.from({ length: 3 }, () => ({
        ok: false,
        error: { code: "conflict", message: "An account with email twice@example.com already exists" },
      })),
    );
    expect(await db.select().from(accounts).all()).toHaveLength(1);
  });

  it("takes a password that is long and not among the common ones", async () => {
    expect((await createAccount(db, { email: "strong@example.com", password: "tangerine kettle orbit" })).ok).toBe(true);
  });

  it.each([
    [{ email: "not-an-email", password: "correct horse battery" }, /email/],
    [{ email: "short@example.com", password: "short" }, /at least 10/],
    [{ email: "plan@example.com", password: "correct horse battery", plan: "platinum" }, /plan/],
    // Among the passwords guessed first, or trivially repetitive: refused with the reason.
    [{ email: "common@example.com", password: "password123" }, /one of the most commonly used passwords/],
    [{ email: "repeat@example.com", password: "aaaaaaaaaa" }, /repeats the same characters/],
    [{ email: "again@example.com", password: "abcabcabcabc" }, /repeats the same characters/],
    [{ email: "sequence@example.com", password: "abcdefghijk" }, /simple sequence/],
    [{ email: "added@example.com", password: "letmein!!2024" }, /common password with digits or symbols added/],
  ])("refuses %j and writes nothing", async (input, message) => {
    const created = await createAccount(db, input as never);
    expect(!created.ok && created.error.code).toBe("invalid_argument");
    expect(!created.ok && created.error.message).toMatch(message);
    expect(await db.select().from(accounts).all()).toEqual([]);
  });
});

describe("setPlan", () => {
  it("changes the plan and reports the previous one", async () => {
    const created = await createAccount(db, { email: "plan@example.com", password: "correct horse battery" });
    if (!created.ok) throw new Error(created.error.message);
    expect(await setPlan(db, created.value.id, "enterprise")).toEqual({
      ok: true,
      value: { id: created.value.id, plan: "enterprise", previousPlan: "free" },
    });
  });

  it("refuses unknown plans and accounts", async () => {
    expect((await setPlan(db, "nobody", "growth")).ok).toBe(false);
    const created = await createAccount(db, { email: "p2@example.com", password: "correct horse battery" });
    if (!created.ok) throw new Error(created.error.message);
    expect(await setPlan(db, created.value.id, "gold")).toEqual({
      ok: false,
      error: { code: "invalid_argument", message: "plan must be one of free, launch, growth, enterprise" },
    });
  });
});

describe("passwords", () => {
  it("salts every hash", async () => {
    expect(await hashPassword("same password")).not.toBe(await hashPassword("same password"));
  });

  it("rejects stored values of another scheme", async () => {
    expect(await verifyPassword("x", "md5$abc")).toBe(false);
  });

  it("checks an unknown email against a decoy that costs what a real hash costs and matches nothing", async () => {
    const [scheme, iterations] = DECOY_HASH.split("$");
    expect([scheme, Number(iterations)]).toEqual([(await hashPassword("x")).split("$")[0], PBKDF2_ITERATIONS]);
    for (const password of ["", "password", "correct horse battery"]) expect(await verifyPassword(password, DECOY_HASH)).toBe(false);
  });
});

describe("deleteAccount", () => {
  const domain = `kept-${crypto.randomUUID().slice(0, 8)}.com`;
  const lookup = async (key: string) => {
    if (!(await db.select().from(companyDomains).where(eq(companyDomains.domain, domain)).get()))
      await addCompany({ name: "Kept Co", domains: [domain] }, darkLogo40x20());
    return exports.default.fetch(`https://logos.test/${domain}?token=${key}`, { redirect: "manual" });
  };
  const stripeRow = (accountId: string, status: string) => ({
    accountId,
    stripeCustomerId: `cus_${crypto.randomUUID().slice(0, 8)}`,
    subscriptionId: `sub_${crypto.randomUUID().slice(0, 8)}`,
    status,
    plan: "launch" as const,
    stateAt: 1,
    lastEventId: `evt_${crypto.randomUUID().slice(0, 8)}`,
    updatedAt: new Date(),
  });

  it("deletes the account with its keys and sessions, and frees its email for a new sign-up", async () => {
    const account = await addAccount();
    const key = await addKey(account.id);
    await startSession(db, account.id);
    const deleted = await deleteAccount(db, account.id, stillChargeable(account.id));
    expect(deleted).toEqual({ ok: true, value: { id: account.id, email: account.email, keysDeleted: 1, sessionsEnded: 1 } });
    expect(await db.select().from(accounts).where(eq(accounts.id, account.id)).all()).toEqual([]);
    expect(await db.select().from(apiKeys).where(eq(apiKeys.accountId, account.id)).all()).toEqual([]);
    expect(await db.select().from(sessions).where(eq(sessions.accountId, account.id)).all()).toEqual([]);
    expect((await lookup(key)).status).toBe(401);
    expect((await createAccount(db, { email: account.email, password: "correct horse battery" })).ok).toBe(true);
    expect(await deleteAccount(db, account.id, stillChargeable(account.id))).toMatchObject({ ok: false, error: { code: "not_found" } });
  });

  it("refuses while Stripe may still charge for it, and deletes once the subscription has ended", async () => {
    const account = await addAccount("launch");
    const key = await addKey(account.id);
    await db.insert(billingAccounts).values(stripeRow(account.id, "past_due"));
    const refused = await deleteAccount(db, account.id, stillChargeable(account.id));
    expect(refused).toMatchObject({
      ok: false,
      error: { code: "conflict", message: expect.stringContaining("Stripe subscription that has not ended: cancel it in Stripe first") },
    });
    expect((await lookup(key)).status).toBe(302);
    await db.update(billingAccounts).set({ status: "canceled" }).where(eq(billingAccounts.accountId, account.id));
    expect(await deleteAccount(db, account.id, stillChargeable(account.id))).toMatchObject({ ok: true, value: { keysDeleted: 1 } });
    expect(await db.select().from(billingAccounts).where(eq(billingAccounts.accountId, account.id)).all()).toEqual([]);
  });

  it("refuses while a checkout started in the last day may still complete", async () => {
    const account = await addAccount();
    const hours = (n: number) => new Date(Date.now() - n * 3_600_000);
    await db
      .insert(checkoutSessions)
      .values({ id: `cs_${crypto.randomUUID()}`, accountId: account.id, plan: "launch", createdAt: hours(23) });
    expect(await deleteAccount(db, account.id, stillChargeable(account.id))).toMatchObject({
      ok: false,
      error: { code: "conflict", message: expect.stringContaining("checkout in the last 24 hours") },
    });
    expect(await db.select().from(accounts).where(eq(accounts.id, account.id)).all()).toHaveLength(1);
    // Completed, or older than a Checkout Session lives: nothing more can be charged through it.
    await db.update(checkoutSessions).set({ completedAt: new Date() }).where(eq(checkoutSessions.accountId, account.id));
    await db
      .insert(checkoutSessions)
      .values({ id: `cs_${crypto.randomUUID()}`, accountId: account.id, plan: "launch", createdAt: hours(25) });
    expect(await deleteAccount(db, account.id, stillChargeable(account.id))).toMatchObject({ ok: true });
  });
});
