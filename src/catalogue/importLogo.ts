import { and, eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { companyDomains, logos } from "../../schema";
import { logoObjectKeys } from "../images/objectKeys";
import type { Logo } from "./entities";
import { RENDITIONS_VERSION } from "../images/renditions";
import type { CatalogueDb } from "../lib/db";
import { rootCause } from "../lib/dependencies";
import { fail, ok, type Result } from "../lib/errors";
import { retirements } from "./retiredObjects";
import { log } from "../lib/log";
import type { CompanyLogoInput, ImportedLogo, ImportOutcome, LogoImport, ObjectStore, PreparedImage, StoredLogoKey } from "./import/inputs";
import { planWrites, readCatalogue } from "./import/plan";
import { storedImage } from "./import/storedImage";
import { deleteAll, putImages, rowsWritten, sweep, writePlan } from "./import/write";

export type { CompanyLogoInput, ImportedLogo, ImportOutcome, LogoImport, ObjectStore, PreparedImage, StoredLogoKey } from "./import/inputs";
export { PUTS_AT_ONCE } from "./import/write";

/**
 * Writing logos of companies into the catalogue: the step import rows turn into, one at a time
 * (importCompanyLogo) or many at once (importCompanyLogos, bulk loads), by the same code.
 * Runtime-agnostic (D1 and R2 bindings only) so the Node importer and the Worker share it.
 *
 * Order of writes, so that a failure leaves no half-written company and no orphaned object:
 *   1. new objects are put under fresh, content-addressed keys (nothing points at them yet);
 *   2. company, domains, ticker and logo rows are written in one D1 batch (one transaction),
 *      which also retires the objects of the replaced image: they are deleted two days later,
 *      once no cached redirect can lead to them (./retiredObjects.ts).
 * If step 2 fails, the objects of step 1 are deleted again.
 */
/**
 * The source hashes of the stored logos that inputs would replace, in input order (null where
 * none): lets callers skip image work up front. None for a logo made by an older renditions
 * version: its image is made again (planWrites), so it must be converted like a changed file.
 */
export async function storedSourceHashes(db: CatalogueDb, keys: StoredLogoKey[]): Promise<Array<string | null>> {
  if (keys.length === 0) return [];
  const wanted = JSON.stringify(keys.flatMap((k, index) => k.domains.map((domain) => [index, domain, k.variant, k.sourceSet])));
  const rows = await db.all<{ position: number; sourceHash: string }>(sql`
    SELECT DISTINCT wanted.value ->> 0 AS position, lower(hex(${logos.sourceHash})) AS sourceHash
    FROM json_each(${wanted}) AS wanted
    JOIN ${companyDomains} ON ${companyDomains.domain} = wanted.value ->> 1
    JOIN ${logos} ON ${logos.companyId} = ${companyDomains.companyId}
      AND ${logos.variant} = wanted.value ->> 2 AND ${logos.sourceSet} = wanted.value ->> 3
      AND json_extract(${logos.renditions}, '$.version') >= ${RENDITIONS_VERSION}`);
  const hashes: Array<string | null> = keys.map(() => null);
  for (const row of rows) hashes[row.position] = row.sourceHash;
  return hashes;
}

export async function importCompanyLogo(
  db: CatalogueDb,
  bucket: R2Bucket,
  input: CompanyLogoInput,
  image: () => Promise<Result<PreparedImage>>,
  now = new Date(),
): Promise<Result<ImportedLogo>> {
  return (await importCompanyLogos(db, bucket, [{ input, image }], now))[0]!;
}

/**
 * Many inputs in one write: each input is decided in order against the catalogue as the
 * inputs before it leave it, exactly as if each had been imported alone; then the objects of
 * all of them are put, all their rows written in one D1 batch (one transaction), and the
 * objects they replaced retired. Results come in input order. Should the objects or the batch
 * fail, what was put is deleted and the inputs are imported one at a time instead, so that a
 * bad input fails alone; unless the storage failed (`unavailable`: objects refused, the
 * database locked or unreachable), which fails them all.
 */
export async function importCompanyLogos(
  db: CatalogueDb,
  bucket: ObjectStore,
  items: LogoImport[],
  now = new Date(),
): Promise<Array<Result<ImportedLogo>>> {
  if (items.length === 0) return [];
  const plan = await planWrites(
    db,
    await readCatalogue(
      db,
      items.map((item) => item.input),
    ),
    items,
    now,
  );
  const written = await writePlan(db, bucket, plan, now);
  if (!written.ok) {
    if (items.length === 1) return [written];
    // Storage that is down or refuses every write is no input's fault: trying them one at a
    // time would only fail each again.
    if (written.error.code === "unavailable") return plan.decisions.map((decision) => (decision.ok ? written : decision));
    const results: Array<Result<ImportedLogo>> = [];
    for (const item of items) results.push((await importCompanyLogos(db, bucket, [item], now))[0]!);
    return results;
  }
  return plan.decisions.map((decision) => {
    if (!decision.ok) return decision;
    const { outcome, company, logo } = decision.value;
    return ok({ outcome, companyId: company.id!, logoId: logo.id! });
  });
}

/**
 * A stored logo's image prepared again from its kept original (`npm run rerender`), company data
 * untouched. The same order as an import: new objects under their own keys, then the row, then
 * the replaced objects. A logo already at `image`'s renditions version with the same master is
 * left as it is, so running it again changes nothing.
 */
export async function replaceLogoImage(
  db: CatalogueDb,
  bucket: ObjectStore,
  logo: Logo,
  image: PreparedImage,
  now = new Date(),
): Promise<Result<ImportOutcome>> {
  if (logo.renditions.version === image.renditions.version && logo.contentHash === image.contentHash) return ok("unchanged");
  const stored = storedImage(logo, image);
  const kept = stored.objectKeys;
  const unwind = () =>
    deleteAll(
      bucket,
      kept.filter((key) => !logoObjectKeys(logo).includes(key)),
    ).catch(() => undefined);
  const put = await putImages(bucket, [stored]);
  if (!put.ok) {
    await unwind();
    return put;
  }
  try {
    // Only the row as it was read: an import that replaced the image meanwhile wins.
    const updated = await db
      .update(logos)
      .set({ ...stored.columns, updatedAt: now })
      .where(and(eq(logos.id, logo.id), eq(logos.contentHash, logo.contentHash), eq(logos.sourceHash, logo.sourceHash)))
      .returning({ id: logos.id });
    if (updated.length === 0) {
      await unwind();
      return fail("conflict", `logo ${logo.id} changed while it was re-rendered`);
    }
  } catch (error) {
    if (!(await rowsWritten(db, and(eq(logos.id, logo.id), eq(logos.updatedAt, now))))) await unwind();
    return fail("internal", `catalogue write failed: ${rootCause(error)}`);
  }
  // Retired once the row names the new image; should that fail, they stay as orphans (an orphan costs storage, a missing object breaks a logo).
  await db
    .batch(
      retirements(
        db,
        logoObjectKeys(logo).filter((key) => !kept.includes(key)),
        kept,
        now,
      ) as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]],
    )
    .catch((error) => log.error("catalogue.replaced_objects_not_retired", { logoId: logo.id, error }));
  await sweep(db, bucket, now);
  return ok("updated");
}
