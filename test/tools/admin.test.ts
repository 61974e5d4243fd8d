import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts, apiKeys, billingAccounts } from "../../schema";
import { runAdmin } from "../../tools/admin/run";
import { hashKey } from "../../src/keys/format";
import { inProcess, platformForThisFile, tool } from "./helpers";

const file = platformForThisFile();

// In-process, on a platform kept open for the file; the program itself is run once below.
const admin = (...args: string[]) => inProcess((io) => runAdmin([...args, "--persist-to", file.dir], io, file.platform.borrow));
const adminWithInput = (stdin: Parameters<typeof inProcess>[1], ...args: string[]) =>
  inProcess((io) => runAdmin([...args, "--persist-to", file.dir], io, file.platform.borrow), stdin);

describe("npm run admin", () => {
  let accountId: string;

  it("account create prints the account with its id, as a process that exits 0, its password piped in", async () => {
    const result = await tool(
      "admin",
      ["account", "create", "--email", "ops@example.com", "--password-stdin", "--plan", "launch"],
      file.dir,
      "correct horse battery\n",
    );
    expect(result.status).toBe(0);
    const account = result.json();
    expect(account).toMatchObject({ email: "ops@example.com", plan: "launch" });
    expect(account.id).toMatch(/^[0-9a-f-]{36}$/);
    accountId = account.id;
  });

  it("account plan changes the plan", async () => {
    const result = await admin("account", "plan", "--account", accountId, "--plan", "growth");
    expect(result.status).toBe(0);
    expect(result.json()).toEqual({ id: accountId, plan: "growth", previousPlan: "launch" });
  });

  it("account mcp switches MCP access off and on", async () => {
    expect((await admin("account", "mcp", "--account", accountId, "--access", "off")).json()).toEqual({ id: accountId, mcpAccess: false });
    expect((await admin("account", "mcp", "--account", accountId, "--access", "on")).json()).toEqual({ id: accountId, mcpAccess: true });
  });

  it("account password sets a new password and ends every session of the account", async () => {
    const { startSession, sessionAccount } = await import("../../src/accounts/browserSessions");
    const { verifyPassword } = await import("../../src/accounts/passwords");
    const signedIn = await Promise.all([startSession(file.platform.db, accountId), startSession(file.platform.db, accountId)]);
    const result = await adminWithInput(
      { typed: ["another horse battery", "another horse battery"] },
      "account",
      "password",
      "--account",
      accountId,
    );
    expect(result.status).toBe(0);
    expect(result.json()).toEqual({ id: accountId, sessionsEnded: 2 });
    // Asked for twice at the terminal, and never echoed: the output holds only the prompts.
    expect(result.stderr).toBe("Password: \nThe same password again: \n");
    for (const session of signedIn) expect(await sessionAccount(file.platform.db, session.id)).toBeNull();
    const row = await file.platform.db.query.accounts.findFirst({ where: (a, { eq }) => eq(a.id, accountId) });
    expect(await verifyPassword("another horse battery", row!.passwordHash)).toBe(true);
    expect(await verifyPassword("correct horse battery", row!.passwordHash)).toBe(false);
  });

  it("key create prints a publishable key once, with its restrictions", async () => {
    const result = await admin(
      "key",
      "create",
      "--account",
      accountId,
      "--type",
      "publishable",
      "--allowed-origin",
      "https://a.example.com",
      "--allowed-origin",
      "https://b.example.com",
      "--require-attribution",
      "--per-minute",
      "60",
    );
    expect(result.status).toBe(0);
    const key = result.json();
    expect(key).toMatchObject({
      type: "publishable",
      allowedOrigins: ["https://a.example.com", "https://b.example.com"],
      requireAttribution: true,
      perMinuteOverride: 60,
    });
    expect(key.key).toMatch(/^pk_[0-9A-Za-z]{32}$/);
    const stored = await file.platform.db.select().from(apiKeys).all();
    expect(stored.map((k) => k.keyHash)).toContain(await hashKey(key.key));
    expect(JSON.stringify(stored)).not.toContain(key.key);
  });

  it("key create makes secret keys, and key revoke revokes them", async () => {
    const created = await admin("key", "create", "--account", accountId, "--type", "secret");
    expect(created.status).toBe(0);
    const { key, id } = created.json();
    expect(key).toMatch(/^sk_/);
    const revoked = await admin("key", "revoke", "--key", key);
    expect(revoked.status).toBe(0);
    expect(revoked.json()).toMatchObject({ id, alreadyRevoked: false });
  });

  it("account delete deletes the account and its keys, and frees its email", async () => {
    const { id } = (
      await adminWithInput("correct horse battery\n", "account", "create", "--email", "gone@example.com", "--password-stdin")
    ).json();
    await admin("key", "create", "--account", id, "--type", "secret");
    const deleted = await admin("account", "delete", "--account", id);
    expect(deleted.status).toBe(0);
    expect(deleted.json()).toEqual({ id, email: "gone@example.com", keysDeleted: 1, sessionsEnded: 0, stripeCustomerId: null });
    expect(await file.platform.db.select().from(apiKeys).where(eq(apiKeys.accountId, id)).all()).toEqual([]);
    expect(
      (await adminWithInput("correct horse battery\n", "account", "create", "--email", "gone@example.com", "--password-stdin")).status,
    ).toBe(0);
  });

  it("account delete names the account's Stripe customer, which Stripe keeps", async () => {
    const { id } = (
      await adminWithInput("correct horse battery\n", "account", "create", "--email", "was-paying@example.com", "--password-stdin")
    ).json();
    await file.platform.db.insert(billingAccounts).values({
      accountId: id,
      stripeCustomerId: "cus_was_paying",
      subscriptionId: "sub_ended",
      status: "canceled",
      plan: "free",
      stateAt: 1,
      lastEventId: "evt_ended",
      updatedAt: new Date(),
    });
    const deleted = await admin("account", "delete", "--account", id);
    expect(deleted.status).toBe(0);
    expect(deleted.json()).toMatchObject({ id, stripeCustomerId: "cus_was_paying" });
    expect(await file.platform.db.select().from(billingAccounts).where(eq(billingAccounts.accountId, id)).all()).toEqual([]);
  });

  it("account delete refuses an account Stripe may still charge, writing nothing", async () => {
    const { id } = (
      await adminWithInput("correct horse battery\n", "account", "create", "--email", "paying@example.com", "--password-stdin")
    ).json();
    await file.platform.db.insert(billingAccounts).values({
      accountId: id,
      stripeCustomerId: "cus_paying",
      subscriptionId: "sub_paying",
      status: "active",
      plan: "launch",
      stateAt: 1,
      lastEventId: "evt_paying",
      updatedAt: new Date(),
    });
    const refused = await admin("account", "delete", "--account", id);
    expect(refused.status).toBe(1);
    expect(JSON.parse(refused.stderr.trim()).error).toMatchObject({
      code: "conflict",
      message: expect.stringContaining("cancel it in Stripe first"),
    });
    expect(await file.platform.db.select().from(accounts).where(eq(accounts.id, id)).all()).toHaveLength(1);
  });
});
