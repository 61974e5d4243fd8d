import { eq } from "drizzle-orm";
import { takedowns } from "../../schema";
import { changeStatement } from "../catalogue/changes";
import { findCompanyByDomain } from "../catalogue/companies";
import { listTakedownRows } from "../catalogue/takedowns";
import type { CatalogueDb } from "../lib/db";
import { normaliseDomain, registrableDomain } from "../lib/domain";
import { fail, ok, type Result } from "../lib/errors";
import { requestPurge } from "../purge/journal";

/**
 * Takedowns, for operators (`npm run admin -- takedown add | remove | list`; docs/corrections.md,
 * "Takedowns"): a domain whose owner asks for its logos to go. Every surface refuses it from
 * then on (src/catalogue/takedowns.ts is the read side): lookups and the asset route answer 451
 * with the reason, the REST API 451, the MCP tools an error; nothing is discovered for it. The
 * takedown and its lifting are entered in the public change log, and the domain purged (every
 * isolate follows the journal within seconds). Rows and objects stay, so lifting it restores
 * the logos as they were. Runtime-agnostic: the operator tools run it from Node.
 */
export const MAX_REASON_LENGTH = 200;

function domainOf(input: string): Result<string> {
  const host = normaliseDomain(input);
  return host.ok ? ok(registrableDomain(host.domain) ?? host.domain) : fail("invalid_argument", `Invalid domain: ${input}`);
}

export async function addTakedown(db: CatalogueDb, input: string, reason: string, now = Date.now()) {
  const domain = domainOf(input);
  if (!domain.ok) return domain;
  const why = reason.trim();
  if (why.length === 0 || why.length > MAX_REASON_LENGTH)
    return fail("invalid_argument", `--reason must be 1 to ${MAX_REASON_LENGTH} characters`);
  const primaryDomain = (await findCompanyByDomain(db, domain.value))?.domain ?? domain.value;
  const at = new Date(now);
  await db.batch([
    db
      .insert(takedowns)
      .values({ domain: domain.value, primaryDomain, reason: why, createdAt: at })
      .onConflictDoUpdate({ target: takedowns.domain, set: { reason: why, primaryDomain } }),
    changeStatement(db, [{ domain: domain.value, change: "takedown", detail: why, method: "operator" }], at),
  ]);
  await requestPurge(db, [...new Set([domain.value, primaryDomain])], now);
  return ok({ domain: domain.value, primaryDomain, reason: why, at: at.toISOString() });
}

export async function removeTakedown(db: CatalogueDb, input: string, now = Date.now()) {
  const domain = domainOf(input);
  if (!domain.ok) return domain;
  const row = await db.select().from(takedowns).where(eq(takedowns.domain, domain.value)).get();
  if (!row) return fail("not_found", `No takedown of ${domain.value}`);
  const at = new Date(now);
  await db.batch([
    db.delete(takedowns).where(eq(takedowns.domain, domain.value)),
    changeStatement(db, [{ domain: domain.value, change: "takedown_lifted", detail: null, method: "operator" }], at),
  ]);
  await requestPurge(db, [...new Set([row.domain, row.primaryDomain])], now);
  return ok({ domain: row.domain, lifted: at.toISOString() });
}

export async function listTakedowns(db: CatalogueDb) {
  const rows = await listTakedownRows(db);
  return ok({
    takedowns: rows.map((row) => ({
      domain: row.domain,
      primaryDomain: row.primaryDomain,
      reason: row.reason,
      at: row.createdAt.toISOString(),
    })),
  });
}
