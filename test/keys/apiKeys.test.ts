import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { apiKeys } from "../../schema";
import { createAccount } from "../../src/accounts/accounts";
import { createKey, MAX_LISTED_KEYS, revokeKey } from "../../src/keys/apiKeys";
import { hashKey, keyTypeOf } from "../../src/keys/format";
import { createDb } from "../../src/lib/db";

const db = createDb(env.DB);
let accountId: string;

beforeEach(async () => {
  const account = await createAccount(db, { email: "keys@example.com", password: "correct horse battery" });
  if (!account.ok) throw new Error(account.error.message);
  accountId = account.value.id;
});

describe("createKey", () => {
  it("returns a publishable key once and stores only its hash and prefix", async () => {
    const created = await createKey(db, { accountId, type: "publishable", allowedOrigins: ["https://shop.example.com/"] });
    if (!created.ok) throw new Error(created.error.message);
    const { key, prefix } = created.value;
    expect(key).toMatch(/^pk_[0-9A-Za-z]{32}$/);
    expect(keyTypeOf(key)).toBe("publishable");
    expect(prefix).toBe(key.slice(0, 9));
    expect(created.value.allowedOrigins).toEqual(["https://shop.example.com"]);

    const stored = await db.select().from(apiKeys).all();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.keyHash).toBe(await hashKey(key));
    expect(JSON.stringify(stored)).not.toContain(key);
  });

  it("creates secret keys with a per-minute override", async () => {
    const created = await createKey(db, { accountId, type: "secret", perMinute: 120 });
    expect(created.ok && created.value.key).toMatch(/^sk_/);
    expect(created.ok && created.value.perMinuteOverride).toBe(120);
  });

  it("gives every key a different value", async () => {
    const keys = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const created = await createKey(db, { accountId, type: "publishable" });
      if (created.ok) keys.add(created.value.key);
    }
    expect(keys.size).toBe(20);
  });

  it.each([
    [{ allowedOrigins: ["not a url"] }, /not a URL/],
    [{ allowedOrigins: ["https://example.com/path"] }, /without a path/],
    [{ allowedOrigins: ["ftp://example.com"] }, /http\(s\) origin/],
    // The URL parser accepts these hosts; no page ever has them as its origin.
    [{ allowedOrigins: ["https://*.example.com"] }, /wildcards are not supported; list each origin/],
    [{ allowedOrigins: ["https://exa mple.com"] }, /no valid host name|not a URL/],
    [{ allowedOrigins: ["https://ex!ample.com"] }, /no valid host name/],
    // Longer than DNS allows: a label of 300 characters, one of 64, a name of 254.
    [{ allowedOrigins: [`https://${"a".repeat(300)}.com`] }, /host name too long: at most 253 characters, and 63 between dots/],
    [{ allowedOrigins: [`https://${"a".repeat(64)}.example.com`] }, /host name too long/],
    [{ allowedOrigins: [`https://${`${"a".repeat(63)}.`.repeat(3)}${"a".repeat(62)}`] }, /host name too long/],
    [{ perMinute: 0 }, /perMinute/],
    [{ perMinute: 1.5 }, /perMinute/],
  ])("refuses %j", async (overrides, message) => {
    const created = await createKey(db, { accountId, type: "publishable", ...overrides });
    expect(created.ok).toBe(false);
    if (!created.ok) {
      expect(created.error.code).toBe("invalid_argument");
      expect(created.error.message).toMatch(message);
      // The value is quoted, cut short: never kilobytes of it.
      expect(created.error.message.length).toBeLessThan(300);
    }
    expect(await db.select().from(apiKeys).all()).toEqual([]);
  });

  it("keeps origins as browsers send them: IDN in punycode, IPv6, ports", async () => {
    const created = await createKey(db, {
      accountId,
      type: "publishable",
      allowedOrigins: ["https://Bücher.example", "http://[::1]:8080", "https://app.example.com:8443/"],
    });
    expect(created.ok && created.value.allowedOrigins).toEqual([
      "https://xn--bcher-kva.example",
      "http://[::1]:8080",
      "https://app.example.com:8443",
    ]);
  });

  it("keeps the longest host names DNS allows: 253 characters, 63 between dots", async () => {
    const host = `${`${"a".repeat(63)}.`.repeat(3)}${"a".repeat(61)}`;
    const created = await createKey(db, { accountId, type: "publishable", allowedOrigins: [`https://${host}`] });
    expect(created.ok && created.value.allowedOrigins).toEqual([`https://${host}`]);
  });

  it(`refuses a live key past ${MAX_LISTED_KEYS}, even several asked for at once; revoked keys leave room`, async () => {
    const keys: string[] = [];
    for (let i = 0; i < MAX_LISTED_KEYS - 2; i++) {
      const created = await createKey(db, { accountId, type: i % 2 ? "secret" : "publishable" });
      if (!created.ok) throw new Error(created.error.message);
      keys.push(created.value.key);
    }
    const atOnce = await Promise.all(Array.from({ length: 5 }, () => createKey(db, { accountId, type: "publishable" })));
    expect(atOnce.filter((created) => created.ok)).toHaveLength(2);
    for (const refused of atOnce.filter((created) => !created.ok)) {
      expect(refused).toEqual({
        ok: false,
        error: {
          code: "conflict",
          message: `This account has ${MAX_LISTED_KEYS} live keys, the most it may hold: revoke one it no longer uses, then create the new one`,
        },
      });
    }
    expect(await db.select().from(apiKeys).all()).toHaveLength(MAX_LISTED_KEYS);

    await revokeKey(db, keys[0]!);
    expect((await createKey(db, { accountId, type: "secret" })).ok).toBe(true);
    expect((await createKey(db, { accountId, type: "secret" })).ok).toBe(false);
  });

  it("refuses origin restrictions and attribution on secret keys", async () => {
    const created = await createKey(db, { accountId, type: "secret", requireAttribution: true });
    expect(!created.ok && created.error.message).toMatch(/publishable keys only/);
  });

  it("refuses an unknown account", async () => {
    const created = await createKey(db, { accountId: "no-such-account", type: "publishable" });
    expect(created).toEqual({ ok: false, error: { code: "not_found", message: "No account with id no-such-account" } });
  });
});

describe("revokeKey", () => {
  it("revokes once and reports the first revocation on repeats", async () => {
    const created = await createKey(db, { accountId, type: "publishable" });
    if (!created.ok) throw new Error(created.error.message);
    const first = await revokeKey(db, created.value.key);
    expect(first.ok && first.value).toMatchObject({ id: created.value.id, alreadyRevoked: false });
    const second = await revokeKey(db, created.value.key);
    expect(second.ok && second.value).toMatchObject({ alreadyRevoked: true, revokedAt: first.ok && first.value.revokedAt });
    const stored = await db.query.apiKeys.findFirst({ where: eq(apiKeys.id, created.value.id) });
    expect(stored?.revokedAt).toBeInstanceOf(Date);
  });

  it("refuses malformed and unknown keys", async () => {
    expect((await revokeKey(db, "pk_short")).ok).toBe(false);
    const unknown = await revokeKey(db, `pk_${"a".repeat(32)}`);
    expect(unknown).toEqual({ ok: false, error: { code: "not_found", message: "No such key" } });
  });
});
