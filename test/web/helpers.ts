import type { BatchItem } from "drizzle-orm/batch";
import { apiKeys } from "../../schema";
import { hashKey } from "../../src/keys/format";
import { db } from "../helpers/catalogue";
import { BASE, Browser, PASSWORD } from "../oauth/helpers";

export { BASE, Browser, PASSWORD };

let n = 0;
export const freshEmail = () => `web${++n}-${crypto.randomUUID().slice(0, 8)}@example.com`;

/** A browser that signed up through the page, as a person would. */
export async function signedUp(email = freshEmail()): Promise<{ browser: Browser; email: string }> {
  const browser = new Browser();
  const response = await browser.postForm("/portal/signup", { email, password: PASSWORD });
  if (response.status !== 303) throw new Error(`sign-up answered ${response.status}: ${await response.text()}`);
  return { browser, email };
}

/** The text of a page with tags removed and whitespace folded: what a reader sees, roughly. */
export async function textOf(response: Response): Promise<string> {
  const html = await response.text();
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ")
    .trim();
}

/** The full key shown once on the answer to the create-key form. */
export const createdKeyOf = (html: string) => /id="new-key"[^>]*value="((?:pk|sk)_[0-9A-Za-z]{32})"/.exec(html)?.[1];

/**
 * Live keys written straight into D1, oldest first, a minute apart, as an account could hold
 * them before keys were capped (createKey now refuses more than MAX_LISTED_KEYS). Their ids.
 */
export async function insertedKeys(accountId: string, count: number): Promise<string[]> {
  const start = Date.now() - count * 60_000;
  const rows = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const key = `pk_${crypto.randomUUID().replace(/-/g, "")}`;
      return {
        id: crypto.randomUUID(),
        accountId,
        type: "publishable" as const,
        keyHash: await hashKey(key),
        prefix: key.slice(0, 9),
        lastFour: key.slice(-4),
        createdAt: new Date(start + i * 60_000),
      };
    }),
  );
  // One statement a row: D1 binds at most 100 parameters a statement.
  const statements: BatchItem<"sqlite">[] = rows.map((row) => db.insert(apiKeys).values(row));
  await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  return rows.map((row) => row.id);
}
