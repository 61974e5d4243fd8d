import { and, asc, count, desc, eq, inArray, ne, sql } from "drizzle-orm";
import {
  accounts,
  type ReportAction,
  type ReportDoor,
  type ReportItem,
  type ReportKind,
  reportItems,
  reports,
  type ReportStatus,
} from "../../schema";
import { changeStatement } from "../catalogue/changes";
import { findCompanyByDomain } from "../catalogue/companies";
import { importCompanyLogo, type PreparedImage } from "../catalogue/importLogo";
import { findLogo, logosOfCompany } from "../catalogue/logos";
import { CORRECTED_SOURCE_SET } from "../catalogue/provenance";
import { preferredLogo } from "../catalogue/resolveLogo";
import type { CatalogueDb } from "../lib/db";
import { normaliseDomain, registrableDomain } from "../lib/domain";
import { fail, ok, type Result } from "../lib/errors";
import { windowStart } from "../limits/periods";
import { requestPurge } from "../purge/journal";

/**
 * Reports of wrong logos (docs/corrections.md, "Reporting a logo"): the portal's "Report this
 * logo", send_feedback's data_quality and POST /v1/reports all land here, in one queue of items,
 * one per logo: reports of a logo whose item is open fold into it. Operators work the queue
 * with `npm run admin -- reports list | resolve`; each reporter sees the outcome in the portal.
 * Runtime-agnostic (D1, and R2 for a replacement): the operator tools run it from Node.
 */
export const MAX_MESSAGE_LENGTH = 5000;
/** Reports an account may send a UTC day through the portal and the REST API (send_feedback has its own limit of 5). */
export const DAILY_REPORT_LIMIT = 50;

export interface ReportInput {
  domain?: string | undefined;
  logoId?: number | undefined;
  kind: ReportKind;
  message: string;
  accountId: string | null;
  via: ReportDoor;
  /** The send_feedback row a report came with. */
  feedbackId?: number | undefined;
}

export interface FiledReport {
  reportId: number;
  itemId: number;
  domain: string;
  logoId: number | null;
  /** Whether an open item of the same logo took it in. */
  folded: boolean;
}

/** What a report is about: the item's domain (the company's primary, where the catalogue knows it) and logo. */
async function reportedLogo(db: CatalogueDb, input: ReportInput): Promise<Result<{ domain: string; logoId: number }>> {
  const logo = input.logoId === undefined ? null : await findLogo(db, input.logoId);
  if (input.logoId !== undefined && !logo) return fail("not_found", `No logo with id ${input.logoId}`);
  if (input.domain === undefined) {
    if (!logo) return fail("invalid_argument", "Name the domain or the logo id the report is about");
    return ok({ domain: logo.company.domain, logoId: logo.logo.id });
  }
  const host = normaliseDomain(input.domain);
  if (!host.ok) return fail("invalid_argument", "Invalid domain format");
  const company = await findCompanyByDomain(db, host.domain);
  if (logo && company && logo.company.companyId !== company.companyId)
    return fail("invalid_argument", `Logo ${logo.logo.id} is not a logo of ${host.domain}`);
  if (logo) return ok({ domain: logo.company.domain, logoId: logo.logo.id });
  if (!company) return ok({ domain: registrableDomain(host.domain) ?? host.domain, logoId: 0 });
  // The logo a lookup of the domain serves now: what the reporter saw.
  return ok({ domain: company.domain, logoId: preferredLogo(await logosOfCompany(db, company))?.id ?? 0 });
}

export async function fileReport(db: CatalogueDb, input: ReportInput, now = Date.now()): Promise<Result<FiledReport>> {
  const message = input.message.trim();
  if (message.length === 0) return fail("invalid_argument", "message must not be empty");
  if (message.length > MAX_MESSAGE_LENGTH) return fail("invalid_argument", `message must be at most ${MAX_MESSAGE_LENGTH} characters`);
  const target = await reportedLogo(db, input);
  if (!target.ok) return target;
  const day = windowStart("day", now);
  if (input.accountId !== null && input.via !== "mcp") {
    const [sent] = await db
      .select({ n: count() })
      .from(reports)
      .where(and(eq(reports.accountId, input.accountId), eq(reports.day, day), ne(reports.via, "mcp")));
    if ((sent?.n ?? 0) >= DAILY_REPORT_LIMIT)
      return fail("rate_limited", `Daily report limit (${DAILY_REPORT_LIMIT}) reached. Try again tomorrow.`);
  }
  const at = new Date(now);
  const { domain, logoId } = target.value;
  const openItem = and(eq(reportItems.domain, domain), eq(reportItems.logoId, logoId), eq(reportItems.status, "open"));
  // One transaction: the logo's open item (made, or kept with its time moved on), and the report under it.
  const [items, filed] = await db.batch([
    db
      .insert(reportItems)
      .values({ domain, logoId, createdAt: at, updatedAt: at })
      .onConflictDoUpdate({
        target: [reportItems.domain, reportItems.logoId],
        targetWhere: sql`${reportItems.status} = 'open'`,
        set: { updatedAt: at },
      })
      .returning({ id: reportItems.id, createdAt: reportItems.createdAt }),
    db
      .insert(reports)
      .values({
        itemId: sql`(SELECT ${reportItems.id} FROM ${reportItems} WHERE ${openItem})`,
        kind: input.kind,
        message,
        accountId: input.accountId,
        via: input.via,
        feedbackId: input.feedbackId ?? null,
        day,
        createdAt: at,
      })
      .returning({ id: reports.id }),
  ]);
  const item = items[0]!;
  return ok({ reportId: filed[0]!.id, itemId: item.id, domain, logoId: logoId || null, folded: item.createdAt.getTime() !== now });
}

export interface ListedItem {
  id: number;
  domain: string;
  logoId: number | null;
  status: ReportStatus;
  action: ReportAction | null;
  note: string | null;
  createdAt: string;
  resolvedAt: string | null;
  reports: Array<{ id: number; kind: ReportKind; message: string; via: ReportDoor; reporter: string | null; at: string }>;
}

/** The queue for operators: items oldest first (open ones only, or one domain's), each with its reports and who sent them. */
export async function listReports(
  db: CatalogueDb,
  options: { open?: boolean | undefined; domain?: string | undefined; limit?: number | undefined } = {},
): Promise<Result<{ items: ListedItem[] }>> {
  let domain: string | undefined;
  if (options.domain !== undefined) {
    const host = normaliseDomain(options.domain);
    if (!host.ok) return fail("invalid_argument", `Invalid domain: ${options.domain}`);
    domain = (await findCompanyByDomain(db, host.domain))?.domain ?? registrableDomain(host.domain) ?? host.domain;
  }
  const items = await db
    .select()
    .from(reportItems)
    .where(
      and(options.open ? eq(reportItems.status, "open") : undefined, domain === undefined ? undefined : eq(reportItems.domain, domain)),
    )
    .orderBy(asc(reportItems.createdAt), asc(reportItems.id))
    .limit(options.limit ?? 500)
    .all();
  const filed =
    items.length === 0
      ? []
      : await db
          .select({ report: reports, email: accounts.email })
          .from(reports)
          .leftJoin(accounts, eq(accounts.id, reports.accountId))
          .where(
            inArray(
              reports.itemId,
              items.map((item) => item.id),
            ),
          )
          .orderBy(asc(reports.id))
          .all();
  return ok({
    items: items.map((item) => ({
      ...itemSummary(item),
      reports: filed
        .filter(({ report }) => report.itemId === item.id)
        .map(({ report, email }) => ({
          id: report.id,
          kind: report.kind,
          message: report.message,
          via: report.via,
          reporter: email,
          at: report.createdAt.toISOString(),
        })),
    })),
  });
}

const itemSummary = (item: ReportItem) => ({
  id: item.id,
  domain: item.domain,
  logoId: item.logoId || null,
  status: item.status,
  action: item.action,
  note: item.note,
  createdAt: item.createdAt.toISOString(),
  resolvedAt: item.resolvedAt?.toISOString() ?? null,
});

/** An open item by id, or why it cannot be resolved. */
export async function openItem(db: CatalogueDb, itemId: number): Promise<Result<ReportItem>> {
  const item = await db.select().from(reportItems).where(eq(reportItems.id, itemId)).get();
  if (!item) return fail("not_found", `No report with id ${itemId}`);
  if (item.status !== "open") return fail("conflict", `Report ${itemId} is ${item.status} already`);
  return ok(item);
}

/**
 * The reported logo replaced by an operator's file (`reports resolve --action replace --file F`):
 * written through the catalogue's one write path under the `corrected` source set, which ranks
 * before the bundled sets, as the reported logo's variant; entered in the change log.
 */
export async function replaceReportedLogo(
  db: CatalogueDb,
  bucket: R2Bucket,
  item: ReportItem,
  image: PreparedImage,
  sourceHash: string,
  now = Date.now(),
): Promise<Result<{ logoId: number; companyId: number }>> {
  const reported = item.logoId ? await findLogo(db, item.logoId) : null;
  const company = reported?.company ?? (await findCompanyByDomain(db, item.domain));
  const at = new Date(now);
  const written = await importCompanyLogo(
    db,
    bucket,
    {
      name: company?.companyName ?? item.domain,
      domains: [company?.domain ?? item.domain],
      aliases: [],
      variant: reported?.logo.variant ?? "icon",
      sourceSet: CORRECTED_SOURCE_SET,
      licence: reported?.logo.licence ?? "unknown",
      sourceHash,
      keepCompany: true,
    },
    async () => ok(image),
    at,
  );
  if (!written.ok) return written;
  await changeStatement(
    db,
    [{ domain: item.domain, change: reported?.logo.variant ?? "icon", detail: `replaced answering report ${item.id}`, method: "operator" }],
    at,
  );
  return ok({ logoId: written.value.logoId, companyId: written.value.companyId });
}

/** Closes an item with the action taken and a note for the reporters, and purges its domain (every isolate follows the journal). */
export async function closeItem(
  db: CatalogueDb,
  item: ReportItem,
  action: ReportAction,
  note: string | undefined,
  now = Date.now(),
): Promise<Result<ListedItem>> {
  const at = new Date(now);
  const [closed] = await db
    .update(reportItems)
    .set({ status: action === "dismiss" ? "dismissed" : "resolved", action, note: note?.trim() || null, resolvedAt: at, updatedAt: at })
    .where(and(eq(reportItems.id, item.id), eq(reportItems.status, "open")))
    .returning();
  if (!closed) return fail("conflict", `Report ${item.id} was resolved meanwhile`);
  if (action !== "dismiss") await requestPurge(db, [item.domain], now);
  return ok({ ...itemSummary(closed), reports: [] });
}

/** An account's own reports, newest first, with their items' outcomes: what the portal shows the reporter. */
export async function reportsOfAccount(db: CatalogueDb, accountId: string, limit = 100) {
  const rows = await db
    .select({ report: reports, item: reportItems })
    .from(reports)
    .innerJoin(reportItems, eq(reportItems.id, reports.itemId))
    .where(eq(reports.accountId, accountId))
    .orderBy(desc(reports.id))
    .limit(limit)
    .all();
  return rows.map(({ report, item }) => ({
    id: report.id,
    kind: report.kind,
    message: report.message,
    via: report.via,
    at: report.createdAt,
    domain: item.domain,
    status: item.status,
    action: item.action,
    note: item.note,
    resolvedAt: item.resolvedAt,
  }));
}
