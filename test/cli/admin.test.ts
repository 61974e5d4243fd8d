import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts, apiKeys } from "../../schema";
import { hashKey } from "../../src/keys/format";
import { freshState, tool, withPlatform } from "./helpers";

let state: { dir: string; cleanup: () => void };
beforeAll(() => {
  state = freshState();
});
afterAll(() => state.cleanup());

const admin = (...args: string[]) => tool("admin", args, state.dir);
const counts = () =>
  withPlatform(state.dir, async ({ db }) => ({
    accounts: (await db.select().from(accounts).all()).length,
    keys: (await db.select().from(apiKeys).all()).length,
  }));

describe("npm run admin", () => {
  let accountId: string;

  it("account create prints the account with its id", () => {
    const result = admin("account", "create", "--email", "ops@example.com", "--password", "correct horse battery", "--plan", "launch");
    expect(result.status).toBe(0);
    const account = result.json();
    expect(account).toMatchObject({ email: "ops@example.com", plan: "launch" });
    expect(account.id).toMatch(/^[0-9a-f-]{36}$/);
    accountId = account.id;
  });

  it("account plan changes the plan", () => {
    const result = admin("account", "plan", "--account", accountId, "--plan", "growth");
    expect(result.status).toBe(0);
    expect(result.json()).toEqual({ id: accountId, plan: "growth", previousPlan: "launch" });
  });

  it("account mcp switches MCP access off and on", () => {
    expect(admin("account", "mcp", "--account", accountId, "--access", "off").json()).toEqual({ id: accountId, mcpAccess: false });
    expect(admin("account", "mcp", "--account", accountId, "--access", "on").json()).toEqual({ id: accountId, mcpAccess: true });
  });

  it("key create prints a publishable key once, with its restrictions", async () => {
    const result = admin(
      "key", "create", "--account", accountId, "--type", "publishable",
      "--allowed-origin", "https://a.example.com", "--allowed-origin", "https://b.example.com",
      "--require-attribution", "--per-minute", "60",
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
    const stored = await withPlatform(state.dir, ({ db }) => db.select().from(apiKeys).all());
    expect(stored.map((k) => k.keyHash)).toContain(await hashKey(key.key));
    expect(JSON.stringify(stored)).not.toContain(key.key);
  });

  it("key create makes secret keys, and key revoke revokes them", () => {
    const created = admin("key", "create", "--account", accountId, "--type", "secret");
    expect(created.status).toBe(0);
    const { key, id } = created.json();
    expect(key).toMatch(/^sk_/);
    const revoked = admin("key", "revoke", "--key", key);
    expect(revoked.status).toBe(0);
    expect(revoked.json()).toMatchObject({ id, alreadyRevoked: false });
  });

  describe("refuses bad arguments with a clear message, a non-zero exit and no write", () => {
    it.each([
      [["account", "create", "--password", "correct horse battery"], /--email is required/],
      [["account", "create", "--email", "bad", "--password", "correct horse battery"], /email/],
      [["account", "create", "--email", "x@example.com", "--password", "short"], /at least 10 characters/],
      [["account", "create", "--email", "x@example.com", "--password", "correct horse battery", "--plan", "gold"], /plan/],
      [["account", "create", "--email", "ops@example.com", "--password", "correct horse battery"], /already exists/],
      [["account", "plan", "--account", "nobody", "--plan", "growth"], /No account/],
      [["account", "plan", "--plan", "growth"], /--account is required/],
      [["key", "create", "--account", "nobody", "--type", "publishable"], /No account/],
      [["key", "create", "--type", "public", "--account", "x"], /--type must be publishable or secret/],
      [["key", "create", "--type", "secret", "--account", "x", "--per-minute", "ten"], /--per-minute must be a positive whole number/],
      [["key", "create", "--type", "publishable", "--account", "x", "--allowed-origin", "https://x.com/path"], /./],
      [["account", "mcp", "--account", "x", "--access", "maybe"], /--access must be on or off/],
      [["key", "revoke", "--key", "pk_nope"], /Not an API key/],
      [["key", "revoke", "--key", `sk_${"Z".repeat(32)}`], /No such key/],
      [["key", "create", "--bogus"], /Unknown option/],
      [["account", "delete"], /unknown command/],
      [[], /usage/],
    ])("%j", async (args, message) => {
      const before = await counts();
      const result = admin(...args);
      expect(result.status).not.toBe(0);
      expect(result.stdout).toBe("");
      const error = JSON.parse(result.stderr.trim().split("\n").filter((l) => l.startsWith("{")).at(-1)!).error;
      expect(error.message).toMatch(message);
      expect(await counts()).toEqual(before);
    });
  });
});
