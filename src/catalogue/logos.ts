import { and, asc, eq, gt, inArray, type SQL, sql } from "drizzle-orm";
import { companies, companyDomains, logoOverrides, logos } from "../../schema";
import { type GreyKeyParts, greyKeyParts, type RenditionSet } from "../images/objectKeys";
import { OVERRIDE_SOURCE_SET_PREFIX } from "./provenance";
import { type Logo, withKeys } from "./entities";
import type { CatalogueDb } from "../lib/db";
import { companyMatchColumns, isPrimaryDomain } from "./companies";
import { retiredAmong } from "./retiredObjects";
import type { CompanyMatch } from "./entities";

/**
 * A company's logos as the catalogue reads them. A logo's R2 keys are derived from its row and
 * its company's primary domain (withKeys), which every statement reading logos has at hand: it
 * joins the primary's row, or starts from a company found with it.
 */

/** A logo by id, with the company it belongs to. */
export async function findLogo(db: CatalogueDb, logoId: number): Promise<{ logo: Logo; company: CompanyMatch } | null> {
  const row = await db
    .select({ logo: logos, ...companyMatchColumns })
    .from(logos)
    .innerJoin(companies, eq(companies.id, logos.companyId))
    .innerJoin(companyDomains, isPrimaryDomain)
    .where(eq(logos.id, logoId))
    .get();
  if (!row) return null;
  const { logo, ...company } = row;
  return { logo: withKeys(logo, company.domain), company };
}

/** A company as found by the finders above: its id and its primary domain. */
type FoundCompany = Pick<CompanyMatch, "companyId" | "domain">;

/** The logos of several companies at once, for search results. */
export async function logosOfCompanies(db: CatalogueDb, found: FoundCompany[]): Promise<Logo[]> {
  if (found.length === 0) return [];
  const primaries = new Map(found.map((company) => [company.companyId, company.domain]));
  const rows = await db
    .select()
    .from(logos)
    .where(inArray(logos.companyId, [...primaries.keys()]))
    .orderBy(asc(logos.variant), asc(logos.id))
    .all();
  return rows.map((row) => withKeys(row, primaries.get(row.companyId)!));
}

export function logosOfCompany(db: CatalogueDb, company: FoundCompany): Promise<Logo[]> {
  return logosOfCompanies(db, [company]);
}

/**
 * Logos in id order after `after`, at most `limit`, each with its company's primary domain read
 * in the same statement: for tools that walk the whole catalogue (npm run rerender).
 */
export async function logosInIdOrder(db: CatalogueDb, options: { where?: SQL; after?: number; limit?: number } = {}): Promise<Logo[]> {
  const rows = await db
    .select({ logo: logos, primaryDomain: companyDomains.domain })
    .from(logos)
    .innerJoin(companyDomains, and(eq(companyDomains.companyId, logos.companyId), eq(companyDomains.isPrimary, true)))
    .where(and(gt(logos.id, options.after ?? 0), options.where))
    .orderBy(asc(logos.id))
    // A negative LIMIT is SQLite's "no limit".
    .limit(options.limit ?? -1)
    .all();
  return rows.map((row) => withKeys(row.logo, row.primaryDomain));
}

/** A logo's rendition set, while its row still holds the master of `contentHash`; null once it does not. */
export async function storedRenditions(db: CatalogueDb, logoId: number, contentHash: string): Promise<RenditionSet | null> {
  const row = await db
    .select({ renditions: logos.renditions })
    .from(logos)
    .where(and(eq(logos.id, logoId), eq(logos.contentHash, contentHash)))
    .get();
  return row?.renditions ?? null;
}

/**
 * Settles a logo whose themes were pending (src/catalogue/themesOnDemand.ts): its rendition set
 * becomes `settled`, only while the row still holds that master with its themes pending.
 * Whether it did.
 */
export async function settleRenditions(db: CatalogueDb, logoId: number, contentHash: string, settled: RenditionSet): Promise<boolean> {
  const changed = await db
    .update(logos)
    .set({ renditions: settled })
    .where(and(eq(logos.id, logoId), eq(logos.contentHash, contentHash), sql`json_extract(${logos.renditions}, '$.pending') = 1`))
    .returning({ id: logos.id });
  return changed.length > 0;
}

/**
 * Whether a greyscale rendition may be made under `key` (src/images/greyOnDemand.ts): the logo
 * its key names is stored at that renditions version with that colour rendition, or the key is
 * retired (a redirect cached before its logo was replaced may still lead to it, and the sweep
 * deletes it with the rest). Anything else would be an object no row names, which nothing
 * would ever delete.
 */
export async function namesGrey(db: CatalogueDb, key: string): Promise<boolean> {
  const parts = greyKeyParts(key);
  if (!parts) return false;
  const row = parts.sourceSet.startsWith(OVERRIDE_SOURCE_SET_PREFIX) ? await overrideNamed(db, parts) : await logoNamed(db, parts);
  const { version, light, dark } = row?.renditions ?? {};
  const named =
    row?.contentHash.startsWith(parts.hash16) &&
    version === parts.version &&
    (parts.colour === "master" || (parts.colour === "light" ? light : dark) === true);
  return named || (await retiredAmong(db, [key])).has(key);
}

/** An account's override the key names (src/corrections/overrides.ts): its objects are named as a logo's are. */
function overrideNamed(db: CatalogueDb, parts: GreyKeyParts) {
  return db
    .select({ contentHash: logoOverrides.contentHash, renditions: logoOverrides.renditions })
    .from(logoOverrides)
    .where(and(eq(logoOverrides.domain, parts.primaryDomain), eq(logoOverrides.sourceSet, parts.sourceSet)))
    .get();
}

function logoNamed(db: CatalogueDb, parts: GreyKeyParts) {
  return db
    .select({ contentHash: logos.contentHash, renditions: logos.renditions })
    .from(companyDomains)
    .innerJoin(
      logos,
      and(eq(logos.companyId, companyDomains.companyId), eq(logos.variant, parts.variant), eq(logos.sourceSet, parts.sourceSet)),
    )
    .where(and(eq(companyDomains.domain, parts.primaryDomain), eq(companyDomains.isPrimary, true)))
    .get();
}
