import { eq } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { companies, companyTickers } from "../../schema";
import type { CatalogueDb } from "../lib/db";
import { fail, ok, type Result } from "../lib/errors";
import { nameKey } from "./names";
import { searchPrefixesOf, searchPrefixUpkeep } from "./searchPrefixes";

/**
 * A company's name and brand colour changed in place (an owner's edit, or its undoing when the
 * owner's claim lapses; docs/corrections.md), with what its name is found by kept in step: its
 * name key, and its search prefix lists (the words index follows by trigger). `extra` are
 * statements of the caller's to run in the same transaction (its change log entries).
 */
export interface IdentityChange {
  name?: string | undefined;
  /** `#rrggbb`, or null to clear it. */
  brandColor?: string | null | undefined;
}

export async function changeIdentity(
  db: CatalogueDb,
  companyId: number,
  change: IdentityChange,
  extra: BatchItem<"sqlite">[],
  now: Date,
): Promise<Result<{ name: string; brandColor: string | null }>> {
  const [rows, tickers] = await db.batch([
    db.select().from(companies).where(eq(companies.id, companyId)),
    db.select({ ticker: companyTickers.ticker }).from(companyTickers).where(eq(companyTickers.companyId, companyId)),
  ]);
  const row = rows[0];
  if (!row) return fail("not_found", `No company with id ${companyId}`);
  const name = change.name ?? row.name;
  const brandColor = change.brandColor === undefined ? row.brandColor : change.brandColor;
  const symbols = tickers.map((t) => t.ticker);
  const listed = (n: string, key: string) => ({
    prefixes: searchPrefixesOf({ nameKey: key, name: n, aliases: row.aliases, tickers: symbols }),
    prominence: row.prominence,
  });
  const key = nameKey(name);
  const statements: BatchItem<"sqlite">[] = [
    db.update(companies).set({ name, nameKey: key, brandColor, updatedAt: now }).where(eq(companies.id, companyId)),
    ...(name === row.name ? [] : searchPrefixUpkeep(db, companyId, listed(row.name, row.nameKey), listed(name, key))),
    ...extra,
  ];
  await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  return ok({ name, brandColor });
}
