import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts } from "../../schema";
import { verifyPassword } from "../../src/accounts/passwords";
import {
  DEFAULT_DEMO_PASSWORD,
  DEMO_EMAIL,
  demoPassword,
  ensureDemoAccount,
  printedKeyIds,
  rememberPrintedKeys,
} from "../../tools/start/demo";
import { createKey } from "../../src/keys/apiKeys";
import { verifyKey } from "../../src/keys/verify";
import { platformForThisFile } from "./helpers";

const file = platformForThisFile();

/** What signing in checks (src/accounts/signIn.ts): the password against the demo account's stored hash. */
const signsIn = async (password: string) => {
  const account = await file.platform.db.query.accounts.findFirst({ where: eq(accounts.email, DEMO_EMAIL) });
  return verifyPassword(password, account!.passwordHash);
};

describe("npm start's demo account", () => {
  it("prints a password that signs in, also when the account was made with another one", async () => {
    const first = await ensureDemoAccount(file.platform.db, DEFAULT_DEMO_PASSWORD);
    expect(first.ok && (await signsIn(first.value.password))).toBe(true);

    const changed = await ensureDemoAccount(file.platform.db, "a-password-of-my-own");
    expect(changed).toMatchObject({ ok: true, value: { accountId: first.ok && first.value.accountId, password: "a-password-of-my-own" } });
    expect(await signsIn("a-password-of-my-own")).toBe(true);
    expect(await signsIn(DEFAULT_DEMO_PASSWORD)).toBe(false);
  });

  it("revokes the keys the last start printed, and leaves those made in the portal working", async () => {
    const keysFile = join(mkdtempSync(join(tmpdir(), "demo-keys-")), "state", "demo-keys.json");
    const db = file.platform.db;
    const first = await ensureDemoAccount(db, DEFAULT_DEMO_PASSWORD, printedKeyIds(keysFile));
    if (!first.ok) throw new Error(first.error.message);
    rememberPrintedKeys(keysFile, first.value.keyIds);
    const ownKey = await createKey(db, { accountId: first.value.accountId, type: "publishable" });
    if (!ownKey.ok) throw new Error(ownKey.error.message);

    const second = await ensureDemoAccount(db, DEFAULT_DEMO_PASSWORD, printedKeyIds(keysFile));
    if (!second.ok) throw new Error(second.error.message);
    expect(await verifyKey(db, first.value.publishableKey)).toBeNull();
    expect(await verifyKey(db, first.value.secretKey)).toBeNull();
    expect(await verifyKey(db, ownKey.value.key)).not.toBeNull();
    expect(await verifyKey(db, second.value.publishableKey)).not.toBeNull();
    expect(printedKeyIds(join(tmpdir(), "no-such-demo-keys.json"))).toEqual([]);
  });

  it("refuses a DEMO_PASSWORD that no account could have, in one line, before anything starts", async () => {
    expect(await demoPassword({ DEMO_PASSWORD: "short" })).toEqual({
      ok: false,
      error: { code: "invalid_argument", message: "DEMO_PASSWORD must be at least 10 characters" },
    });
    expect(await demoPassword({ DEMO_PASSWORD: "password123" })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining("DEMO_PASSWORD is one of the most commonly used passwords") },
    });
    expect(await demoPassword({})).toEqual({ ok: true, value: DEFAULT_DEMO_PASSWORD });
    // Reachable from elsewhere (PUBLIC_BASE_URL), the published default would sign anyone in.
    expect(await demoPassword({}, true)).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining("set DEMO_PASSWORD to a password of your own") },
    });
    expect(await demoPassword({ DEMO_PASSWORD: "a long one of my own" }, true)).toEqual({ ok: true, value: "a long one of my own" });
  });
});
