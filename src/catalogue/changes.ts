import { and, desc, eq, lt } from "drizzle-orm";
import { brandChanges } from "../../schema";
import type { CatalogueDb } from "../lib/db";

/**
 * The public change log (docs/corrections.md, "The change log"): what changed of a domain's
 * brand, when, and on whose authority. Written in the same batch as the change where it can be
 * (the change and its entry stand or fall together); read newest first by GET /v1/changes and
 * the /changes page.
 */
export type ChangeMethod = "dns" | "well_known" | "operator" | "refresh";

export interface ChangeEntry {
  domain: string;
  /** `icon`, `full`, `name`, `brand_color`, `verified`, `lapsed`, `takedown`, `takedown_lifted`. */
  change: string;
  detail?: string | null;
  method: ChangeMethod;
}

/** The insert of one or more entries, for a caller's batch. */
export function changeStatement(db: CatalogueDb, entries: ChangeEntry[], now: Date) {
  return db.insert(brandChanges).values(entries.map((entry) => ({ ...entry, detail: entry.detail ?? null, createdAt: now })));
}

export async function recordChanges(db: CatalogueDb, entries: ChangeEntry[], now = new Date()): Promise<void> {
  if (entries.length > 0) await changeStatement(db, entries, now);
}

export interface PublishedChange {
  id: number;
  domain: string;
  change: string;
  detail: string | null;
  method: string;
  at: string;
}

export const MAX_CHANGES_PAGE = 100;

/** Newest first; `before` an id from the previous page. */
export async function listChanges(
  db: CatalogueDb,
  options: { before?: number | undefined; domain?: string | undefined; limit?: number | undefined } = {},
): Promise<PublishedChange[]> {
  const rows = await db
    .select()
    .from(brandChanges)
    .where(
      and(
        options.before === undefined ? undefined : lt(brandChanges.id, options.before),
        options.domain === undefined ? undefined : eq(brandChanges.domain, options.domain),
      ),
    )
    .orderBy(desc(brandChanges.id))
    .limit(Math.min(options.limit ?? 50, MAX_CHANGES_PAGE))
    .all();
  return rows.map((row) => ({
    id: row.id,
    domain: row.domain,
    change: row.change,
    detail: row.detail,
    method: row.method,
    at: row.createdAt.toISOString(),
  }));
}
