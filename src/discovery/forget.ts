import { and, eq, notExists } from "drizzle-orm";
import { companies, logos } from "../../schema";
import { logoObjectKeys } from "../images/objectKeys";
import { withKeys } from "../catalogue/entities";
import { DISCOVERED_SOURCE_SET } from "../catalogue/provenance";
import { findCompanyByDomain } from "../catalogue/companies";
import type { Db } from "../lib/db";
import { normaliseDomain, registrableDomain } from "../lib/domain";
import { fail, ok, type Result } from "../lib/errors";
import { forgetMiss } from "./misses";

/**
 * `logo forget`: a domain's discovered logo and its objects removed, and its remembered miss
 * with them, so the next lookup discovers again. A company that discovery created (it has no
 * other logo) goes too; imported logos are never touched. Rows first, objects after, so no
 * row ever names a missing object.
 */
export interface Forgotten {
  domain: string;
  logos: number;
  companyRemoved: boolean;
  missForgotten: boolean;
}

export async function forgetDiscovered(db: Db, bucket: R2Bucket, input: string): Promise<Result<Forgotten>> {
  const host = normaliseDomain(input);
  if (!host.ok) return fail("invalid_argument", `Invalid domain: ${input}`);
  const domain = registrableDomain(host.domain) ?? host.domain;
  const missForgotten = await forgetMiss(db, domain);
  const company = await findCompanyByDomain(db, domain);
  const discovered = company
    ? (
        await db
          .select()
          .from(logos)
          .where(and(eq(logos.companyId, company.companyId), eq(logos.sourceSet, DISCOVERED_SOURCE_SET)))
          .all()
      ).map((row) => withKeys(row, company.domain))
    : [];
  if (discovered.length === 0 && !missForgotten) return fail("not_found", `Nothing discovered for ${domain}`);

  let companyRemoved = false;
  if (company && discovered.length > 0) {
    // One transaction: the discovered logos, and the company when nothing else of it is left.
    const [, removed] = await db.batch([
      db.delete(logos).where(and(eq(logos.companyId, company.companyId), eq(logos.sourceSet, DISCOVERED_SOURCE_SET))),
      db
        .delete(companies)
        .where(
          and(
            eq(companies.id, company.companyId),
            notExists(db.select({ id: logos.id }).from(logos).where(eq(logos.companyId, company.companyId))),
          ),
        )
        .returning({ id: companies.id }),
    ]);
    companyRemoved = removed.length > 0;
    await bucket.delete(discovered.flatMap((logo) => logoObjectKeys(logo)));
  }
  return ok({ domain, logos: discovered.length, companyRemoved, missForgotten });
}
