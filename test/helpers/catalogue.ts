import { env } from "cloudflare:workers";
import { type AccountSummary, createAccount } from "../../src/accounts/accounts";
import { hashPassword } from "../../src/accounts/passwords";
import { type CompanyLogoInput, importCompanyLogo, type PreparedImage } from "../../src/catalogue/importLogo";
import { createKey, type CreateKeyInput } from "../../src/keys/apiKeys";
import { createDb } from "../../src/lib/db";
import { ok } from "../../src/lib/errors";
import { sha256Hex } from "../../src/lib/encoding";
import { accounts, apiClients, type Plan } from "../../schema";

export const db = createDb(env.DB);

/** A company with one logo, written through the importer's own write path. */
export async function addCompany(input: Partial<CompanyLogoInput> & { name: string; domains: string[] }, image: PreparedImage) {
  const result = await importCompanyLogo(
    db,
    env.LOGOS,
    {
      aliases: [],
      prominence: 0,
      variant: "icon",
      sourceSet: "test",
      licence: "CC0-1.0",
      sourceHash: await sha256Hex(image.files.master),
      ...input,
    },
    async () => ok(image),
  );
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

/** Passwords hashed once per isolate: PBKDF2 at 100,000 iterations is about 0.1 s a hash. */
const hashes = new Map<string, Promise<string>>();

/**
 * An account as createAccount writes it (the account and its Default client, in one batch),
 * its password hashed once per isolate rather than once per account: most tests make an account
 * or two and never look at the hash. test/accounts/accounts.test.ts checks the two write the
 * same rows; tests of hashing itself call createAccount.
 */
/**
 * An account as an operator makes it (`admin account create`): its address vouched for, so it
 * has its plan's discovery budget. Tests of an unconfirmed account pass `emailConfirmed: false`.
 */
export async function insertAccount(input: {
  email: string;
  password: string;
  plan?: Plan;
  emailConfirmed?: boolean;
}): Promise<AccountSummary> {
  let hash = hashes.get(input.password);
  if (hash === undefined) hashes.set(input.password, (hash = hashPassword(input.password)));
  const now = new Date();
  const [id, clientId, plan] = [crypto.randomUUID(), crypto.randomUUID(), input.plan ?? "free"];
  await db.batch([
    db.insert(accounts).values({
      id,
      email: input.email,
      passwordHash: await hash,
      plan,
      emailConfirmedAt: input.emailConfirmed === false ? null : now,
      createdAt: now,
      updatedAt: now,
    }),
    db.insert(apiClients).values({ id: clientId, accountId: id, name: "Default", createdAt: now }),
  ]);
  return { id, email: input.email, plan, clientId, createdAt: now.toISOString() };
}

let made = 0;
export function addAccount(plan: Plan = "free", options: { emailConfirmed?: boolean } = {}) {
  return insertAccount({ email: `user${++made}-${crypto.randomUUID()}@example.com`, password: "correct horse battery", plan, ...options });
}

/** The same account through createAccount itself: for the test that compares the two. */
export async function createdAccount(email: string, password: string, plan: Plan = "free"): Promise<AccountSummary> {
  const account = await createAccount(db, { email, password, plan, emailConfirmed: true });
  if (!account.ok) throw new Error(account.error.message);
  return account.value;
}

export async function addKey(accountId: string, options: Omit<CreateKeyInput, "accountId"> = { type: "publishable" }) {
  const key = await createKey(db, { accountId, ...options });
  if (!key.ok) throw new Error(key.error.message);
  return key.value.key;
}
