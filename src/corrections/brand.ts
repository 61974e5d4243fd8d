import { and, eq, notExists } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type BrandClaim, brandClaims, companies, type LogoVariant, logos } from "../../schema";
import { changeStatement, type ChangeEntry } from "../catalogue/changes";
import { findCompanyByDomain } from "../catalogue/companies";
import { withKeys } from "../catalogue/entities";
import { changeIdentity } from "../catalogue/identity";
import { importCompanyLogo } from "../catalogue/importLogo";
import { OWNER_SOURCE_SET } from "../catalogue/provenance";
import { retirements } from "../catalogue/retiredObjects";
import { logoObjectKeys } from "../images/objectKeys";
import type { CatalogueDb } from "../lib/db";
import { sha256Hex } from "../lib/encoding";
import { fail, ok, type Result } from "../lib/errors";
import { log } from "../lib/log";
import { purgeDomains } from "../purge/purge";
import { prepareUpload } from "./upload";

/**
 * What a verified owner changes of its brand, for everyone (docs/corrections.md, "Claiming your
 * brand"): its icon and full logo, written through the catalogue's one write path under the
 * `owner` source set, which ranks before every other (src/catalogue/resolveLogo.ts,
 * preferredLogo); its company's name and brand colour, changed in place. Each change is entered
 * in the public change log with the claim's verification method, in the same transaction, and
 * the domain purged, so that it is live everywhere within seconds (src/purge/purge.ts). When
 * the claim lapses, removeOwnerBrand undoes it all.
 */
export const MAX_NAME_LENGTH = 100;
const COLOUR = /^#[0-9a-f]{6}$/;

/** The claim's company, which must be the one whose primary domain it names. */
async function companyOf(db: CatalogueDb, claim: BrandClaim) {
  const company = await findCompanyByDomain(db, claim.domain);
  if (company && company.domain !== claim.domain)
    return fail(
      "conflict",
      `${claim.domain} belongs to ${company.companyName}, whose brand is claimed under its primary domain, ${company.domain}`,
    );
  return ok(company);
}

export async function setOwnerLogo(
  env: Env,
  db: CatalogueDb,
  claim: BrandClaim,
  variant: LogoVariant,
  bytes: Uint8Array,
  contentType: string | undefined,
  now = Date.now(),
): Promise<Result<{ logoId: number; width: number; height: number }>> {
  const company = await companyOf(db, claim);
  if (!company.ok) return company;
  const prepared = await prepareUpload(env, bytes, contentType);
  if (!prepared.ok) return prepared;
  const at = new Date(now);
  const written = await importCompanyLogo(
    db,
    env.LOGOS,
    {
      name: company.value?.companyName ?? claim.domain,
      domains: [claim.domain],
      aliases: [],
      variant,
      sourceSet: OWNER_SOURCE_SET,
      licence: "owner",
      sourceHash: await sha256Hex(bytes),
      // The owner's logo changes the logo; its name and colour are changed on their own.
      keepCompany: true,
    },
    async () => prepared,
    at,
  );
  if (!written.ok) return written;
  const { width, height } = prepared.value;
  await db.batch([
    changeStatement(db, [{ domain: claim.domain, change: variant, detail: `${width}×${height}`, method: claim.method ?? "dns" }], at),
    ...(company.value ? [] : [db.update(brandClaims).set({ createdCompany: true }).where(eq(brandClaims.id, claim.id))]),
  ]);
  await purge(env, claim.domain, now);
  return ok({ logoId: written.value.logoId, width, height });
}

export interface OwnerDetails {
  name?: string | undefined;
  /** `#rrggbb`; "" clears it. */
  brandColor?: string | undefined;
}

export async function setOwnerDetails(
  env: Env,
  db: CatalogueDb,
  claim: BrandClaim,
  details: OwnerDetails,
  now = Date.now(),
): Promise<Result<{ name: string; brandColor: string | null; changed: string[] }>> {
  const name = details.name?.trim();
  if (name !== undefined && (name.length === 0 || name.length > MAX_NAME_LENGTH))
    return fail("invalid_argument", `The name must be 1 to ${MAX_NAME_LENGTH} characters`);
  const colour = details.brandColor?.trim().toLowerCase();
  if (colour !== undefined && colour !== "" && !COLOUR.test(colour)) return fail("invalid_argument", "The brand colour must be #rrggbb");
  const company = await companyOf(db, claim);
  if (!company.ok) return company;
  if (!company.value) return fail("not_found", `The catalogue does not know ${claim.domain} yet: upload its logo first`);
  const { companyId, companyName, brandColor } = company.value;
  const brandColorAfter = colour === undefined ? brandColor : colour === "" ? null : colour;
  const entries: ChangeEntry[] = [];
  const method = claim.method ?? "dns";
  if (name !== undefined && name !== companyName) entries.push({ domain: claim.domain, change: "name", detail: name, method });
  if (brandColorAfter !== brandColor)
    entries.push({ domain: claim.domain, change: "brand_color", detail: brandColorAfter ?? "none", method });
  if (entries.length === 0) return ok({ name: companyName, brandColor, changed: [] });
  const at = new Date(now);
  const extra: BatchItem<"sqlite">[] = [changeStatement(db, entries, at)];
  // What the company was before the owner's first change: restored should the claim lapse.
  if (claim.priorName === null)
    extra.push(db.update(brandClaims).set({ priorName: companyName, priorBrandColor: brandColor }).where(eq(brandClaims.id, claim.id)));
  const changed = await changeIdentity(db, companyId, { name, brandColor: brandColorAfter }, extra, at);
  if (!changed.ok) return changed;
  await purge(env, claim.domain, now);
  return ok({ ...changed.value, changed: entries.map((entry) => entry.change) });
}

/**
 * A lapsed claim's brand undone: the owner's logos removed (their objects retired, as a replaced
 * image's are), the name and colour it had before restored, the company removed when the owner's
 * logo created it and nothing else is left of it. `extra` (the claim's own update, its change log
 * entry) goes in the same transaction.
 */
export async function removeOwnerBrand(
  env: Env,
  db: CatalogueDb,
  claim: BrandClaim,
  extra: BatchItem<"sqlite">[],
  at: Date,
): Promise<void> {
  const company = await findCompanyByDomain(db, claim.domain);
  const owned = company && company.domain === claim.domain ? company : null;
  const statements = [...extra];
  if (owned) {
    const rows = await db
      .select()
      .from(logos)
      .where(and(eq(logos.companyId, owned.companyId), eq(logos.sourceSet, OWNER_SOURCE_SET)))
      .all();
    const keys = rows.flatMap((row) => logoObjectKeys(withKeys(row, owned.domain)));
    statements.push(
      db.delete(logos).where(and(eq(logos.companyId, owned.companyId), eq(logos.sourceSet, OWNER_SOURCE_SET))),
      ...retirements(db, keys, [], at),
    );
    if (claim.createdCompany)
      statements.push(
        db
          .delete(companies)
          .where(
            and(
              eq(companies.id, owned.companyId),
              notExists(db.select({ id: logos.id }).from(logos).where(eq(logos.companyId, owned.companyId))),
            ),
          ),
      );
  }
  if (owned && claim.priorName !== null) {
    const restored = await changeIdentity(
      db,
      owned.companyId,
      { name: claim.priorName, brandColor: claim.priorBrandColor },
      statements,
      at,
    );
    if (!restored.ok) throw new Error(restored.error.message);
  } else if (statements.length > 0) {
    await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  }
  await purge(env, claim.domain, at.getTime());
}

async function purge(env: Env, domain: string, now: number): Promise<void> {
  await purgeDomains(env, [domain], now).catch((error) => log.error("brand.purge_failed", { domain, error }));
}
