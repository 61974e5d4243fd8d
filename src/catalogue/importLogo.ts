import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { companies, companyDomains, companyTickers, type LogoTone, type LogoVariant, logos } from "../../schema";
import { originalKey, renditionKey, type LogoKeyParts } from "../images/keys";
import type { CatalogueDb } from "../lib/db";
import { fail, ok, type Result } from "../lib/errors";
import { searchPrefixesOf, searchPrefixUpkeep } from "./searchPrefixes";

/**
 * Writing one logo of one company into the catalogue: the step an import row turns into.
 * Runtime-agnostic (D1 and R2 bindings only) so the Node importer and the Worker share it.
 *
 * Order of writes, so that a failure leaves no half-written company and no orphaned object:
 *   1. new objects are put under fresh, content-addressed keys (nothing points at them yet);
 *   2. company, domains, ticker and logo rows, and the company's search prefix lists, are
 *      written in one D1 batch (one transaction);
 *   3. only then are the objects of the replaced image deleted.
 * If step 2 fails, the objects of step 1 are deleted again.
 */
export interface CompanyLogoInput {
  name: string;
  /** Normalised hosts, primary first. */
  domains: string[];
  ticker?: { symbol: string; exchange: string } | undefined;
  aliases: string[];
  brandColor?: string | undefined;
  prominence: number;
  variant: LogoVariant;
  sourceSet: string;
  licence: string;
  /** SHA-256 of the file as imported: an unchanged file is never converted or written again. */
  sourceHash: string;
}

export interface PreparedImage {
  format: string;
  original: Uint8Array;
  master: Uint8Array;
  grey: Uint8Array;
  inverted: Uint8Array | null;
  invertedGrey: Uint8Array | null;
  width: number;
  height: number;
  contentHash: string;
  tone: LogoTone;
}

export type ImportOutcome = "created" | "updated" | "unchanged";

export interface ImportedLogo {
  outcome: ImportOutcome;
  companyId: number;
  logoId: number;
}

/** The stored logo that an input would replace, if any: lets callers skip image work up front. */
export async function storedSourceHash(db: CatalogueDb, domains: string[], variant: LogoVariant, sourceSet: string): Promise<string | null> {
  const row = await db
    .select({ sourceHash: logos.sourceHash })
    .from(companyDomains)
    .innerJoin(logos, eq(logos.companyId, companyDomains.companyId))
    .where(and(inArray(companyDomains.domain, domains), eq(logos.variant, variant), eq(logos.sourceSet, sourceSet)))
    .get();
  return row?.sourceHash ?? null;
}

export async function importCompanyLogo(
  db: CatalogueDb,
  bucket: R2Bucket,
  input: CompanyLogoInput,
  image: () => Promise<Result<PreparedImage>>,
  now = new Date(),
): Promise<Result<ImportedLogo>> {
  // Which company the row is about (the one owning any of its domains, or a new one) and
  // everything else the decision needs, in one round trip.
  const owningCompany = db
    .select({ id: companyDomains.companyId })
    .from(companyDomains)
    .where(inArray(companyDomains.domain, input.domains));
  const [owners, companyRows, domainRows, logoRows, tickerRows, heldTickers] = await db.batch([
    db
      .select({ domain: companyDomains.domain, companyId: companyDomains.companyId })
      .from(companyDomains)
      .where(inArray(companyDomains.domain, input.domains)),
    db.select().from(companies).where(inArray(companies.id, owningCompany)),
    db
      .select({ domain: companyDomains.domain, isPrimary: companyDomains.isPrimary })
      .from(companyDomains)
      .where(inArray(companyDomains.companyId, owningCompany)),
    db
      .select()
      .from(logos)
      .where(and(inArray(logos.companyId, owningCompany), eq(logos.variant, input.variant), eq(logos.sourceSet, input.sourceSet))),
    db
      .select({ companyId: companyTickers.companyId })
      .from(companyTickers)
      .where(and(eq(companyTickers.ticker, input.ticker?.symbol ?? ""), eq(companyTickers.exchange, input.ticker?.exchange ?? ""))),
    db.select({ ticker: companyTickers.ticker }).from(companyTickers).where(inArray(companyTickers.companyId, owningCompany)),
  ]);
  const ownerIds = [...new Set(owners.map((o) => o.companyId))];
  if (ownerIds.length > 1) {
    return fail("conflict", `domains ${owners.map((o) => o.domain).join(", ")} belong to different companies`);
  }
  const companyId = ownerIds[0] ?? null;
  const company = companyRows[0];
  const primaryDomain = domainRows.find((row) => row.isPrimary)?.domain ?? input.domains[0]!;
  const existingLogo = logoRows[0];
  const tickerHolder = input.ticker ? tickerRows[0] : undefined;
  if (tickerHolder && tickerHolder.companyId !== companyId) {
    return fail("conflict", `ticker ${input.ticker!.symbol} already belongs to another company`);
  }

  // What differs from the stored state. Domains, aliases and tickers only ever accumulate.
  const knownDomains = new Set(owners.map((o) => o.domain));
  const newDomains = input.domains.filter((d) => !knownDomains.has(d));
  const aliases = [...new Set([...(company?.aliases ?? []), ...input.aliases])].filter((a) => a !== input.name);
  const companyChanged =
    !company ||
    company.name !== input.name ||
    JSON.stringify(company.aliases) !== JSON.stringify(aliases) ||
    (input.brandColor !== undefined && company.brandColor !== input.brandColor) ||
    company.prominence !== input.prominence;
  const tickerMissing = input.ticker !== undefined && !tickerHolder;
  const imageChanged = !existingLogo || existingLogo.sourceHash !== input.sourceHash;
  const logoRowChanged = imageChanged || existingLogo.licence !== input.licence;

  if (!companyChanged && newDomains.length === 0 && !tickerMissing && !logoRowChanged) {
    return ok({ outcome: "unchanged", companyId: companyId!, logoId: existingLogo!.id });
  }

  // 1. Objects first, under keys nothing references yet.
  let stored: StoredImage | undefined;
  if (imageChanged) {
    const prepared = await image();
    if (!prepared.ok) return prepared;
    const parts: LogoKeyParts = {
      primaryDomain,
      variant: input.variant,
      sourceSet: input.sourceSet,
      contentHash: prepared.value.contentHash,
    };
    const put = await putImage(bucket, parts, prepared.value);
    if (!put.ok) return put;
    stored = put.value;
  }

  // 2. Rows, in one transaction. A new company's id is not known before the batch runs;
  //    D1 runs a batch as one serialised transaction, so within it the new company is the
  //    one with the highest id.
  const companyRef: SQL | number = companyId ?? sql`(SELECT max(${companies.id}) FROM ${companies})`;
  const statements: BatchItem<"sqlite">[] = [];
  const companyValues = {
    name: input.name,
    nameKey: nameKey(input.name),
    aliases,
    prominence: input.prominence,
    updatedAt: now,
    ...(input.brandColor !== undefined ? { brandColor: input.brandColor } : {}),
  };
  if (companyId === null) {
    statements.push(db.insert(companies).values({ ...companyValues, createdAt: now }).returning({ id: companies.id }));
  }
  else if (companyChanged) statements.push(db.update(companies).set(companyValues).where(eq(companies.id, companyId)));
  for (const [index, domain] of newDomains.entries()) {
    statements.push(
      db.insert(companyDomains).values({ domain, companyId: companyRef as number, isPrimary: companyId === null && index === 0 }),
    );
  }
  if (input.ticker && tickerMissing) {
    statements.push(
      db.insert(companyTickers).values({ ticker: input.ticker.symbol, exchange: input.ticker.exchange, companyId: companyRef as number }),
    );
  }
  if (companyChanged || newDomains.length > 0 || tickerMissing) {
    const domains = domainRows.map((row) => row.domain);
    const tickers = heldTickers.map((row) => row.ticker);
    const before = company
      ? {
          prefixes: searchPrefixesOf({ nameKey: company.nameKey, name: company.name, aliases: company.aliases, domains, tickers }),
          prominence: company.prominence,
        }
      : null;
    const after = {
      prefixes: searchPrefixesOf({
        nameKey: companyValues.nameKey,
        name: input.name,
        aliases,
        domains: [...domains, ...newDomains],
        tickers: input.ticker && tickerMissing ? [...tickers, input.ticker.symbol] : tickers,
      }),
      prominence: input.prominence,
    };
    statements.push(...searchPrefixUpkeep(db, companyRef, before, after));
  }
  if (logoRowChanged) {
    const logoValues = {
      licence: input.licence,
      updatedAt: now,
      ...(stored ? { ...stored.columns, sourceHash: input.sourceHash } : {}),
    };
    if (existingLogo) statements.push(db.update(logos).set(logoValues).where(eq(logos.id, existingLogo.id)));
    else {
      statements.push(
        db
          .insert(logos)
          .values({
            ...stored!.columns,
            ...logoValues,
            sourceHash: input.sourceHash,
            companyId: companyRef as number,
            variant: input.variant,
            sourceSet: input.sourceSet,
            createdAt: now,
          })
          .returning({ id: logos.id }),
      );
    }
  }

  let results: unknown[];
  try {
    results = await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  } catch (error) {
    if (stored) await bucket.delete(logoObjectKeys(stored.columns));
    return fail("internal", `catalogue write failed: ${(error as Error).message}`);
  }

  // 3. The replaced image's objects are unreferenced now.
  if (stored && existingLogo) {
    const kept = logoObjectKeys(stored.columns);
    const replaced = logoObjectKeys(existingLogo).filter((key) => !kept.includes(key));
    if (replaced.length > 0) await bucket.delete(replaced);
  }

  // New rows reported their ids through RETURNING; the first and last statements are theirs.
  const newCompanyId = companyId ?? (results[0] as Array<{ id: number }>)[0]!.id;
  const logoId = existingLogo?.id ?? (results.at(-1) as Array<{ id: number }>)[0]!.id;
  return ok({ outcome: companyId === null || !existingLogo ? "created" : "updated", companyId: newCompanyId, logoId });
}

/** `name` folded for exact-name lookups: lower case, letters and digits only ("Coca-Cola" → "cocacola"). */
export function nameKey(name: string): string {
  return name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "");
}

interface StoredImage {
  columns: {
    format: string;
    originalKey: string;
    masterKey: string;
    greyKey: string;
    invertedKey: string | null;
    invertedGreyKey: string | null;
    width: number;
    height: number;
    bytes: number;
    contentHash: string;
    tone: LogoTone;
  };
}

const PNG = { contentType: "image/png" };
const originalTypes: Record<string, string> = {
  svg: "image/svg+xml",
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
};

async function putImage(bucket: R2Bucket, parts: LogoKeyParts, image: PreparedImage): Promise<Result<StoredImage>> {
  const columns: StoredImage["columns"] = {
    format: image.format,
    originalKey: originalKey(parts, image.format),
    masterKey: renditionKey(parts, "master"),
    greyKey: renditionKey(parts, "grey"),
    invertedKey: image.inverted ? renditionKey(parts, "inverted") : null,
    invertedGreyKey: image.invertedGrey ? renditionKey(parts, "invertedGrey") : null,
    width: image.width,
    height: image.height,
    bytes: image.master.byteLength,
    contentHash: image.contentHash,
    tone: image.tone,
  };
  // Renditions carry their size, so the asset route can decide on a resize from a HEAD alone.
  const png = { httpMetadata: PNG, customMetadata: { width: String(image.width), height: String(image.height) } };
  const objects: Array<[key: string | null, body: Uint8Array | null, options: R2PutOptions]> = [
    [columns.masterKey, image.master, png],
    [columns.greyKey, image.grey, png],
    [columns.invertedKey, image.inverted, png],
    [columns.invertedGreyKey, image.invertedGrey, png],
    [columns.originalKey, image.original, { httpMetadata: { contentType: originalTypes[image.format] ?? "application/octet-stream" } }],
  ];
  try {
    await Promise.all(objects.map(([key, body, options]) => (key && body ? bucket.put(key, body, options) : null)));
  } catch (error) {
    await bucket.delete(logoObjectKeys(columns)).catch(() => undefined);
    return fail("internal", `object storage write failed: ${(error as Error).message}`);
  }
  return ok({ columns });
}

function logoObjectKeys(logo: { originalKey: string; masterKey: string; greyKey: string; invertedKey: string | null; invertedGreyKey: string | null }): string[] {
  return [logo.originalKey, logo.masterKey, logo.greyKey, logo.invertedKey, logo.invertedGreyKey].filter(
    (key): key is string => key !== null,
  );
}
