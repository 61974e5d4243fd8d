import { env } from "cloudflare:workers";
import { createAccount } from "../../src/accounts/accounts";
import { type CompanyLogoInput, importCompanyLogo, type PreparedImage } from "../../src/catalogue/importLogo";
import { createKey, type CreateKeyInput } from "../../src/keys/apiKeys";
import { createDb } from "../../src/lib/db";
import { ok } from "../../src/lib/errors";
import { sha256Hex } from "../../src/lib/encoding";
import type { Plan } from "../../schema";

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

let accounts = 0;
export async function addAccount(plan: Plan = "free") {
  const account = await createAccount(db, {
    email: `user${++accounts}-${crypto.randomUUID()}@example.com`,
    password: "correct horse battery",
    plan,
  });
  if (!account.ok) throw new Error(account.error.message);
  return account.value;
}

export async function addKey(accountId: string, options: Omit<CreateKeyInput, "accountId"> = { type: "publishable" }) {
  const key = await createKey(db, { accountId, ...options });
  if (!key.ok) throw new Error(key.error.message);
  return key.value.key;
}
