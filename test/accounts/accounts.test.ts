import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { accounts, apiClients } from "../../schema";
import { createAccount, setPlan } from "../../src/accounts/accounts";
import { hashPassword, PBKDF2_ITERATIONS, verifyPassword } from "../../src/accounts/passwords";
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
    expect(await db.select().from(apiClients).all()).toEqual([expect.objectContaining({ id: created.value.clientId, accountId: created.value.id })]);
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
    const created = await Promise.all(Array.from({ length: 4 }, () => createAccount(db, { email: "twice@example.com", password: "correct horse battery" })));
    expect(created.filter((result) => result.ok)).toHaveLength(1);
    expect(created.filter((result) => !result.ok)).toEqual(
      Array.from({ length: 3 }, () => ({ ok: false, error: { code: "conflict", message: "An account with email twice@example.com already exists" } })),
    );
    expect(await db.select().from(accounts).all()).toHaveLength(1);
  });

  it.each([
    [{ email: "not-an-email", password: "correct horse battery" }, /email/],
    [{ email: "short@example.com", password: "short" }, /at least 10/],
    [{ email: "plan@example.com", password: "correct horse battery", plan: "platinum" }, /plan/],
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
});
