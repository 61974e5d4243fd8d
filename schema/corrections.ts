import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import type { LogoTone, RenditionSet } from "./catalogue";

/**
 * Logos that can be put right (docs/corrections.md): reports of wrong logos and the queue
 * operators work them from, each account's own overrides, brands their owners verified,
 * takedowns, the public change log, and the journal that carries cache purges to every isolate.
 */

export const reportKinds = ["wrong_logo", "outdated", "wrong_name", "poor_quality", "takedown_request", "other"] as const;
export type ReportKind = (typeof reportKinds)[number];
/** Where a report came in: the portal's "Report this logo", send_feedback, or POST /v1/reports. */
export const reportDoors = ["portal", "mcp", "rest"] as const;
export type ReportDoor = (typeof reportDoors)[number];
export const reportStatuses = ["open", "resolved", "dismissed"] as const;
export type ReportStatus = (typeof reportStatuses)[number];
export const reportActions = ["rediscover", "forget", "replace", "dismiss"] as const;
export type ReportAction = (typeof reportActions)[number];

/**
 * One item of the operators' queue: a logo (a domain, and the logo it served when reported)
 * that someone said is wrong. Reports of the same logo while its item is open fold into it, so
 * the queue holds each logo once however many say so.
 */
export const reportItems = sqliteTable(
  "report_items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** The company's primary domain where the catalogue knows the domain, else the domain as reported (normalised). */
    domain: text("domain").notNull(),
    /** The logo reported; 0 when none was named and the domain had none. */
    logoId: integer("logo_id").notNull().default(0),
    status: text("status", { enum: reportStatuses }).notNull().default("open"),
    action: text("action", { enum: reportActions }),
    /** What the operator said of the outcome; the reporters see it in the portal. */
    note: text("note"),
    resolvedAt: integer("resolved_at", { mode: "timestamp_ms" }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    // One open item per logo: what folds duplicates.
    uniqueIndex("report_items_open_idx").on(t.domain, t.logoId).where(sql`${t.status} = 'open'`),
    index("report_items_status_idx").on(t.status, t.createdAt),
  ],
);

/** One report as someone sent it, filed under its item. Rows outlive the account that sent them (its id is then cleared). */
export const reports = sqliteTable(
  "reports",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    itemId: integer("item_id")
      .notNull()
      .references(() => reportItems.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: reportKinds }).notNull(),
    message: text("message").notNull(),
    accountId: text("account_id").references(() => accounts.id, { onDelete: "set null" }),
    via: text("via", { enum: reportDoors }).notNull(),
    /** The send_feedback row this report came with (its reference id names it). */
    feedbackId: integer("feedback_id"),
    /** Start of the UTC day of `createdAt`, Unix ms: the window of an account's daily limit. */
    day: integer("day").notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("reports_item_idx").on(t.itemId), index("reports_account_idx").on(t.accountId, t.day)],
);

/**
 * A logo an account pinned for a domain: its lookups, MCP tools and SDK answer it instead of
 * the catalogue's; nobody else sees it. Its objects are stored as a logo's are
 * (`logos/<domain>/icon.override-<tag>.<hash16>…`), the tag naming the account without saying
 * who it is.
 */
export const logoOverrides = sqliteTable(
  "logo_overrides",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Normalised host, as a lookup names it. */
    domain: text("domain").notNull(),
    /** The source set its keys carry: `override-<first 12 hex digits of the account id's SHA-256>`. */
    sourceSet: text("source_set").notNull(),
    format: text("format").notNull(),
    renditions: text("renditions", { mode: "json" }).$type<RenditionSet>().notNull(),
    width: integer("width").notNull(),
    height: integer("height").notNull(),
    bytes: integer("bytes").notNull(),
    /** SHA-256 of the master PNG, hex: names its objects. */
    contentHash: text("content_hash").notNull(),
    tone: text("tone").$type<LogoTone>().notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [uniqueIndex("logo_overrides_account_domain_idx").on(t.accountId, t.domain)],
);

export const claimStatuses = ["pending", "verified", "lapsed"] as const;
export type ClaimStatus = (typeof claimStatuses)[number];
export const verificationMethods = ["dns", "well_known"] as const;
export type VerificationMethod = (typeof verificationMethods)[number];

/**
 * An account's claim to a domain's brand, proven by a DNS TXT record or a file on the domain
 * holding `token`. A verified owner sets the logo, name and colour for everyone; the proof is
 * checked again periodically and the claim lapses when it is gone.
 */
export const brandClaims = sqliteTable(
  "brand_claims",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** Registrable domain (`acme.com`), normalised. */
    domain: text("domain").notNull(),
    /** Null once the account is deleted: the claim then lapses at its next check. */
    accountId: text("account_id").references(() => accounts.id, { onDelete: "set null" }),
    token: text("token").notNull(),
    status: text("status", { enum: claimStatuses }).notNull().default("pending"),
    method: text("method", { enum: verificationMethods }),
    verifiedAt: integer("verified_at", { mode: "timestamp_ms" }),
    /** When the proof was last looked for. */
    checkedAt: integer("checked_at", { mode: "timestamp_ms" }),
    lapsedAt: integer("lapsed_at", { mode: "timestamp_ms" }),
    /** The company's name and colour before the owner's first change, restored when the claim lapses. */
    priorName: text("prior_name"),
    priorBrandColor: text("prior_brand_color"),
    /** The owner's first logo created the company (the catalogue did not know the domain). */
    createdCompany: integer("created_company", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    uniqueIndex("brand_claims_domain_account_idx").on(t.domain, t.accountId),
    // One verified owner per domain at a time.
    uniqueIndex("brand_claims_verified_idx").on(t.domain).where(sql`${t.status} = 'verified'`),
    index("brand_claims_check_idx").on(t.status, t.checkedAt),
  ],
);

/**
 * The public change log (GET /v1/changes, /changes): every change an owner made, every
 * verification and lapse, takedowns, operators' replacements and icons a refresh replaced.
 */
export const brandChanges = sqliteTable(
  "brand_changes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    domain: text("domain").notNull(),
    /** What changed: `icon`, `full`, `name`, `brand_color`, `verified`, `lapsed`, `takedown`, `takedown_lifted`. */
    change: text("change").notNull(),
    /** The new value where it is a value (a name, a colour), or a short note. */
    detail: text("detail"),
    /** How the change was authorised: `dns`, `well_known` (owner), `operator`, `refresh`. */
    method: text("method").notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("brand_changes_domain_idx").on(t.domain, t.id)],
);

/** Domains whose logos are not served, on any surface, with the reason lookups give (451). */
export const takedowns = sqliteTable("takedowns", {
  domain: text("domain").primaryKey(),
  /** The company's primary domain when the catalogue knew the domain (its objects are named after it), else the domain. */
  primaryDomain: text("primary_domain").notNull(),
  reason: text("reason").notNull(),
  createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
});

/**
 * Purges of a domain's cached answers, in order: every isolate reads the rows after the last it
 * saw (every PURGE_POLL_MS at most, after a request's answer) and drops what it holds of each
 * domain, so a purge made anywhere (an operator's command, another isolate) reaches all of them.
 * The first isolate to see a row with `cdn_purged_at` unset purges the CDN's copies.
 */
export const cachePurges = sqliteTable(
  "cache_purges",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    domain: text("domain").notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    cdnPurgedAt: integer("cdn_purged_at", { mode: "timestamp_ms" }),
  },
  (t) => [
    index("cache_purges_created_idx").on(t.createdAt),
    check("cache_purges_domain_check", sql`length(${t.domain}) BETWEEN 1 AND 253`),
  ],
);

export type ReportItem = typeof reportItems.$inferSelect;
export type Report = typeof reports.$inferSelect;
export type LogoOverride = typeof logoOverrides.$inferSelect;
export type BrandClaim = typeof brandClaims.$inferSelect;
export type BrandChange = typeof brandChanges.$inferSelect;
