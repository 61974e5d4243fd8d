import { and, eq } from "drizzle-orm";
import { companies, companyIdentifiers, type IdentifierScheme } from "../../schema";
import type { CatalogueDb } from "../lib/db";
import { fail, ok, type Result } from "../lib/errors";
import { isValidIsin } from "../lib/isin";
import { companyWithPrimaryDomain } from "./companies";
import type { CompanyMatch } from "./entities";

/**
 * Identifiers that name one company each, beside its hosts and tickers: the ISINs of its listed
 * shares and the symbols of its crypto assets (schema: company_identifiers). Every surface reads
 * them as written here: the lookup (`/isin/{isin}`, `/crypto/{symbol}`), the REST lookup, search
 * and the MCP tools.
 */
export interface Identifier {
  scheme: IdentifierScheme;
  value: string;
}

const ISIN_SHAPE = /^[A-Z]{2}[A-Z0-9]{9}[0-9]$/;

/** An ISIN as asked (any case, spaces around): its canonical form, or why it is none. */
export function parseIsin(text: string): Result<string> {
  const isin = text.trim().toUpperCase();
  if (!ISIN_SHAPE.test(isin)) return fail("invalid_argument", "Invalid ISIN: two letters, nine letters or digits, and a check digit");
  if (!isValidIsin(isin)) return fail("invalid_argument", "Invalid ISIN: the check digit does not match");
  return ok(isin);
}

/** What a crypto asset's symbol may be: letters and digits, as exchanges list them (`BTC`, `1INCH`, `S`). */
const CRYPTO_SYMBOL = /^[A-Z0-9]{1,12}$/;

export function parseCryptoSymbol(text: string): Result<string> {
  const symbol = text.trim().toUpperCase();
  return CRYPTO_SYMBOL.test(symbol) ? ok(symbol) : fail("invalid_argument", "Invalid crypto symbol: 1 to 12 letters or digits");
}

/** A value the import may store under `scheme`: what the lookups would take for it. */
export function isIdentifier(scheme: IdentifierScheme, value: string): boolean {
  const parsed = scheme === "isin" ? parseIsin(value) : parseCryptoSymbol(value);
  return parsed.ok && parsed.value === value;
}

/** One statement: the company holding the identifier, with its primary domain. */
export function companyByIdentifier(db: CatalogueDb, { scheme, value }: Identifier) {
  return companyWithPrimaryDomain(db)
    .innerJoin(companyIdentifiers, eq(companyIdentifiers.companyId, companies.id))
    .where(and(eq(companyIdentifiers.scheme, scheme), eq(companyIdentifiers.value, value)))
    .limit(1);
}

export async function findCompanyByIdentifier(db: CatalogueDb, identifier: Identifier): Promise<CompanyMatch | null> {
  return (await companyByIdentifier(db, identifier).get()) ?? null;
}
