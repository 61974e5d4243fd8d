import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { companies, companyDomains, companyTickers, type Logo, type LogoTone, type LogoVariant, logos } from "../../schema";
import { derivedRenditions, LOGO_PREFIX, type LogoKeyParts, logoObjectKeys, masterKey, originalKey, type RenditionSet, renditionKey, vectorKey } from "../images/keys";
import type { RenditionFiles } from "../images/prepared";
import { RENDITIONS_VERSION } from "../images/renditions";
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
  /** Where a discovered logo came from and when it was fetched; a refetch of the same file updates only these. */
  provenance?: { sourceUrl: string; fetchedAt: Date } | undefined;
}

export interface PreparedImage {
  format: string;
  original: Uint8Array;
  /** PNG renditions (src/images/prepared.ts): those `renditions` names exist. */
  files: RenditionFiles;
  /** The vector original, sanitised (src/images/svg.ts), when it is one that sanitised cleanly. */
  vector: Uint8Array | null;
  renditions: RenditionSet;
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
  // Renditions made by an older renditions version are made again, as if the file had changed.
  const imageChanged = !existingLogo || existingLogo.sourceHash !== input.sourceHash || existingLogo.renditions.version < RENDITIONS_VERSION;
  const provenanceChanged =
    input.provenance !== undefined &&
    (existingLogo?.sourceUrl !== input.provenance.sourceUrl || existingLogo?.fetchedAt?.getTime() !== input.provenance.fetchedAt.getTime());
  const logoRowChanged = imageChanged || existingLogo.licence !== input.licence || provenanceChanged;

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
      ...(input.provenance ? { sourceUrl: input.provenance.sourceUrl, fetchedAt: input.provenance.fetchedAt } : {}),
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

/**
 * A stored logo's image prepared again from its kept original (`npm run rerender`), company data
 * untouched. The same order as an import: new objects under their own keys, then the row, then
 * the replaced objects. A logo already at `image`'s renditions version with the same master is
 * left as it is, so running it again changes nothing.
 */
export async function replaceLogoImage(db: CatalogueDb, bucket: R2Bucket, logo: Logo, image: PreparedImage, now = new Date()): Promise<Result<ImportOutcome>> {
  if (logo.renditions.version === image.renditions.version && logo.contentHash === image.contentHash) return ok("unchanged");
  // The key's domain segment is the company's primary domain when the logo was written.
  const primaryDomain = logo.masterKey.slice(LOGO_PREFIX.length, logo.masterKey.indexOf("/", LOGO_PREFIX.length));
  const put = await putImage(bucket, { primaryDomain, variant: logo.variant, sourceSet: logo.sourceSet, contentHash: image.contentHash }, image);
  if (!put.ok) return put;
  const kept = logoObjectKeys(put.value.columns);
  const unwind = () => bucket.delete(kept.filter((key) => !logoObjectKeys(logo).includes(key))).catch(() => undefined);
  try {
    // Only the row as it was read: an import that replaced the image meanwhile wins.
    const updated = await db
      .update(logos)
      .set({ ...put.value.columns, updatedAt: now })
      .where(and(eq(logos.id, logo.id), eq(logos.masterKey, logo.masterKey), eq(logos.sourceHash, logo.sourceHash)))
      .returning({ id: logos.id });
    if (updated.length === 0) {
      await unwind();
      return fail("conflict", `logo ${logo.id} changed while it was re-rendered`);
    }
  } catch (error) {
    await unwind();
    return fail("internal", `catalogue write failed: ${(error as Error).message}`);
  }
  const replaced = logoObjectKeys(logo).filter((key) => !kept.includes(key));
  if (replaced.length > 0) await bucket.delete(replaced);
  return ok("updated");
}

/** `name` folded for exact-name lookups: lower case, letters and digits only ("Coca-Cola" → "cocacola"). */
export function nameKey(name: string): string {
  return name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "");
}

interface StoredImage {
  columns: Pick<Logo, "format" | "originalKey" | "masterKey" | "renditions" | "width" | "height" | "bytes" | "contentHash" | "tone">;
}

const PNG = { contentType: "image/png" };
const originalTypes: Record<string, string> = {
  svg: "image/svg+xml",
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  avif: "image/avif",
  ico: "image/vnd.microsoft.icon",
};

async function putImage(bucket: R2Bucket, parts: LogoKeyParts, image: PreparedImage): Promise<Result<StoredImage>> {
  const master = masterKey(parts);
  const columns: StoredImage["columns"] = {
    format: image.format,
    originalKey: originalKey(parts, image.format),
    masterKey: master,
    renditions: image.renditions,
    width: image.width,
    height: image.height,
    bytes: image.files.master.byteLength,
    contentHash: image.contentHash,
    tone: image.tone,
  };
  // Renditions carry their size, so the asset route can decide on a resize from a HEAD alone.
  const png = { httpMetadata: PNG, customMetadata: { width: String(image.width), height: String(image.height) } };
  const objects: Array<[key: string, body: Uint8Array | undefined | null, options: R2PutOptions]> = [
    [master, image.files.master, png],
    ...derivedRenditions.map((rendition): [string, Uint8Array | undefined, R2PutOptions] => [
      renditionKey(master, rendition, image.renditions.version),
      image.files[rendition],
      png,
    ]),
    [vectorKey(master, image.renditions.version), image.renditions.vector ? image.vector : null, { httpMetadata: { contentType: "image/svg+xml" } }],
    [columns.originalKey, image.original, { httpMetadata: { contentType: originalTypes[image.format] ?? "application/octet-stream" } }],
  ];
  try {
    await Promise.all(objects.map(([key, body, options]) => (body ? bucket.put(key, body, options) : null)));
  } catch (error) {
    await bucket.delete(logoObjectKeys(columns)).catch(() => undefined);
    return fail("internal", `object storage write failed: ${(error as Error).message}`);
  }
  return ok({ columns });
}
