import { sql } from "drizzle-orm";
import { check, customType, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { fromHex, toHex } from "../src/lib/encoding";

/**
 * The logo catalogue: companies, the hosts, tickers and identifiers that name them, and their logos.
 *
 * Lookups by domain and ticker are primary-key or index point reads. Search reads two
 * structures beside these tables: the contentless FTS5 table `catalogue_search` over the words
 * of names, aliases and tickers (migrations/0011; domains are found on their primary key),
 * which triggers keep in step inside the same write, folded by the table `search_folds`
 * (migrations/0012) as the code folds them, and `search_prefixes`, the best-known
 * companies for every one- to three-character prefix, which the import's write path keeps
 * (src/catalogue/searchPrefixes.ts). Both are hand-written SQL in
 * migrations/0009_catalogue_at_scale.sql and 0012_one_search_fold.sql (search_folds is read by
 * SQL alone, so it has no drizzle table here), as are two things drizzle-kit cannot describe:
 * `company_domains`, `company_tickers` and the prefix tables are WITHOUT ROWID (their text keys
 * are stored once, not in the table and again in an index). Logos store no R2 key: readers
 * derive them from the row and the company's primary domain, which triggers of
 * migrations/0010_derived_logo_keys.sql keep as it is while the company has logos.
 */
export const nameSources = ["catalogue", "site", "domain"] as const;
export type NameSource = (typeof nameSources)[number];

export const companies = sqliteTable(
  "companies",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    /** `name` folded as search folds words, without spaces (nameKey): the key of `/name/{name}` lookups. */
    nameKey: text("name_key").notNull(),
    /**
     * Where the name comes from: `catalogue` (an import), `site` (what a discovered company's own
     * site says, agreeing with its domain) or `domain` (a discovered company named after its
     * domain). A discovered company's name key is its domain's (domainNameKey), whatever its
     * name: it answers a name only where that name is derived from its own domain.
     */
    nameSource: text("name_source", { enum: nameSources }).notNull().default("catalogue"),
    /** Other names the company goes by, as a JSON array of strings. */
    aliases: text("aliases", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    /** Brand colour as `#rrggbb`, when known. */
    brandColor: text("brand_color"),
    /** Higher is better known; breaks ties between equally close search matches. */
    prominence: integer("prominence").notNull().default(0),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    // Ordered as search ranks names: the better known first, then by id. A range of one name
    // key, or the first rows of a prefix range, is then read in the order it is shown.
    index("companies_name_key_idx").on(t.nameKey, sql`${t.prominence} desc`),
    check(
      "companies_brand_color_check",
      sql`${t.brandColor} IS NULL OR ${t.brandColor} GLOB '#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'`,
    ),
  ],
);

/** Hosts of a company. A host belongs to one company; each company has exactly one primary. */
export const companyDomains = sqliteTable(
  "company_domains",
  {
    /** Normalised host: lower case, punycode, no `www.`, no trailing dot. */
    domain: text("domain").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    isPrimary: integer("is_primary", { mode: "boolean" }).notNull().default(false),
  },
  // One index serves a company's domains and its primary (covering: the table's key, the
  // domain, is in every entry). "One primary per company" is kept by triggers of
  // migrations/0009 rather than a second, partial unique index as large as this one.
  (t) => [index("company_domains_company_idx").on(t.companyId, t.isPrimary)],
);

/** Stock tickers. `exchange` is '' when unknown, so that (ticker, exchange) can be a key. */
export const companyTickers = sqliteTable(
  "company_tickers",
  {
    ticker: text("ticker").notNull(),
    exchange: text("exchange").notNull().default(""),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.ticker, t.exchange] }), index("company_tickers_company_idx").on(t.companyId)],
);

/** The schemes of `company_identifiers`: an ISIN (ISO 6166) of a listed share, a crypto asset's symbol. */
export const identifierSchemes = ["isin", "crypto"] as const;
export type IdentifierScheme = (typeof identifierSchemes)[number];

/**
 * Identifiers other than hosts and tickers that name one company each: the ISINs of its listed
 * shares (`US0378331005`, check digit valid) and the symbols of its crypto assets (`BTC`), upper
 * case. A value belongs to one company; a company may hold several. WITHOUT ROWID
 * (migrations/0019), as company_tickers.
 */
export const companyIdentifiers = sqliteTable(
  "company_identifiers",
  {
    scheme: text("scheme", { enum: identifierSchemes }).notNull(),
    value: text("value").notNull(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.scheme, t.value] }), index("company_identifiers_company_idx").on(t.companyId)],
);

export const logoVariants = ["full", "icon"] as const;
export type LogoVariant = (typeof logoVariants)[number];

/**
 * How a logo sits on a transparent background: mostly `dark` ink, mostly `light` ink,
 * `mixed` colours, or `opaque` (it brings its own background, and is served as it is on any
 * page). Informational: which renditions a logo has is decided by contrast (`renditions`).
 */
export const logoTones = ["dark", "light", "mixed", "opaque"] as const;
export type LogoTone = (typeof logoTones)[number];

/** Which renditions a logo has, and the renditions version that made them (src/images/keys.ts). */
export interface RenditionSet {
  version: number;
  /** A rendition for light pages exists (else the master serves them). */
  light: boolean;
  /** A rendition for dark pages exists. */
  dark: boolean;
  /** What a lookup without a theme serves. */
  plain: "master" | "light";
  /** A sanitised copy of the vector original is served (SVG imports that sanitised cleanly). */
  vector: boolean;
  /**
   * The themes are not decided yet: stored with its master only (the first start's seeding), the
   * logo has its light and dark renditions and `plain` decided by the first lookup that resolves
   * it, which then drops this (src/catalogue/themesOnDemand.ts). Until then `light`, `dark` and
   * `plain` say master.
   */
  pending?: true;
}

/**
 * A SHA-256 digest: 64 lower-case hex digits in TypeScript, its 32 bytes in SQLite (half the
 * text's size, a tenth of a logo row). Anything but such a digest is refused rather than stored
 * as something that would not read back the same.
 */
const sha256 = customType<{ data: string; driverData: Uint8Array }>({
  dataType: () => "blob",
  toDriver(hex) {
    if (!/^[0-9a-f]{64}$/.test(hex))
      throw new TypeError(`a SHA-256 column takes 64 lower-case hex digits, not ${JSON.stringify(hex.slice(0, 80))}`);
    return fromHex(hex);
  },
  // D1 hands a BLOB back as an ArrayBuffer or, through some of its paths, an array of byte values.
  fromDriver: (bytes: Uint8Array | ArrayBuffer | number[]) =>
    toHex(bytes instanceof Uint8Array || bytes instanceof ArrayBuffer ? bytes : Uint8Array.from(bytes)),
});

export const logos = sqliteTable(
  "logos",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    variant: text("variant", { enum: logoVariants }).notNull(),
    /** Format of the file as it was imported: svg, png, jpeg, webp or gif. */
    format: text("format").notNull(),
    /**
     * Which renditions were prepared at import (greyscale, for light and dark pages, the
     * sanitised vector) and by which renditions version. No R2 key is stored: the master's and
     * the original's follow from the company's primary domain, variant, source set, content
     * hash and format, the renditions' from the master's (src/images/keys.ts).
     */
    renditions: text("renditions", { mode: "json" })
      .$type<RenditionSet>()
      .notNull()
      .default(sql`'{"version":0,"light":false,"dark":false,"plain":"master","vector":false}'`),
    /** Pixel size of the PNG master. */
    width: integer("width").notNull(),
    height: integer("height").notNull(),
    /** Byte size of the PNG master. */
    bytes: integer("bytes").notNull(),
    /** SHA-256 of the file as imported: an import of the same file changes nothing. */
    sourceHash: sha256("source_hash").notNull(),
    /** SHA-256 of the PNG master: its first 16 hex digits name the master and its renditions in R2 (src/images/keys.ts). */
    contentHash: sha256("content_hash").notNull(),
    tone: text("tone", { enum: logoTones }).notNull(),
    /** Provenance: the set the logo came from and its licence (SPDX id where one exists). */
    sourceSet: text("source_set").notNull(),
    licence: text("licence").notNull(),
    /** Where a discovered logo was fetched from (the icon's URL); null for imported logos. */
    sourceUrl: text("source_url"),
    /** When that URL was last fetched; discovered logos are refreshed 30 days after it. */
    fetchedAt: integer("fetched_at", { mode: "timestamp_ms" }),
    /** The icon's `ETag` and `Last-Modified` when it was fetched: what a scheduled re-check asks with (a 304 keeps the logo). */
    sourceEtag: text("source_etag"),
    sourceLastModified: text("source_last_modified"),
    /**
     * When the image was last written or confirmed as it is (an import that changed it, a
     * refresh, a re-check answered 304): `X-Logo-Updated`. Null for rows written before it was kept.
     */
    verifiedAt: integer("verified_at", { mode: "timestamp_ms" }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    // One logo per company, variant and source set: the identity the importer upserts on.
    uniqueIndex("logos_company_variant_source_idx").on(t.companyId, t.variant, t.sourceSet),
    check("logos_dimensions_check", sql`${t.width} > 0 AND ${t.height} > 0 AND ${t.bytes} > 0`),
    check(
      "logos_hashes_check",
      sql`typeof(${t.sourceHash}) = 'blob' AND length(${t.sourceHash}) = 32 AND typeof(${t.contentHash}) = 'blob' AND length(${t.contentHash}) = 32`,
    ),
  ],
);

/**
 * Domains whose site was looked at and offered no usable icon: not fetched again until
 * `missedUntil` (DISCOVERY_MISS_TTL_S). What the site did say (its name, its theme colour) is
 * kept for the monogram fallback.
 */
export const discoveryMisses = sqliteTable("discovery_misses", {
  /** Registrable domain, normalised as company_domains.domain. */
  domain: text("domain").primaryKey(),
  missedUntil: integer("missed_until", { mode: "timestamp_ms" }).notNull(),
  /** Why nothing was taken, for operators: "unreachable", "no usable icon", … */
  reason: text("reason").notNull(),
  siteName: text("site_name"),
  /** `#rrggbb` from the page's theme-color, when it had one. */
  brandColor: text("brand_color"),
  checkedAt: integer("checked_at", { mode: "timestamp_ms" }).notNull(),
});

/**
 * Objects of images a write replaced, kept until `delete_after`: lookups redirect to a logo's
 * asset with a day's public caching, so a redirect cached before the replacement must still
 * find its image for that long. A later catalogue write deletes the objects whose time has
 * come (src/catalogue/retiredObjects.ts); a write that stores the same content-addressed key
 * again takes it off this list in the same transaction.
 */
export const retiredObjects = sqliteTable(
  "retired_objects",
  {
    key: text("key").primaryKey(),
    deleteAfter: integer("delete_after", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("retired_objects_delete_after_idx").on(t.deleteAfter)],
);

/**
 * Which list of `search_prefixes` an entry is on: `name`, companies whose name key starts with
 * the prefix; `word`, companies with any indexed word (of the name, an alias or a ticker) that
 * starts with it.
 */
export const searchPrefixKinds = ["name", "word"] as const;
export type SearchPrefixKind = (typeof searchPrefixKinds)[number];

/**
 * For every prefix of one to three characters, the best-known companies it leads to: the
 * candidates of a short search, which would otherwise rank a large part of the catalogue.
 * Each list holds at most SEARCH_PREFIX_LIST_SIZE companies (src/catalogue/searchPrefixes.ts).
 */
export const searchPrefixes = sqliteTable(
  "search_prefixes",
  {
    kind: text("kind", { enum: searchPrefixKinds }).notNull(),
    prefix: text("prefix").notNull(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id, { onDelete: "cascade" }),
    /** The company's prominence, copied so that a list is ranked without reading companies. */
    prominence: integer("prominence").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.prefix, t.companyId] }), index("search_prefixes_company_idx").on(t.companyId)],
);

/**
 * One row per list of `search_prefixes`: its length and, once it has been full, its floor, the
 * rank (prominence, then id) of the best company it left out. A list holds exactly the
 * companies of its prefix that rank above its floor, so its head is always the exact ranking;
 * a rename or removal shortens it rather than leaving a gap to fill, and the write path fills a
 * half-empty list with a floor again when its prefix is uncrowded (triggers of migrations/0009
 * keep `size` and the floor).
 */
export const searchPrefixLists = sqliteTable(
  "search_prefix_lists",
  {
    kind: text("kind", { enum: searchPrefixKinds }).notNull(),
    prefix: text("prefix").notNull(),
    size: integer("size").notNull().default(0),
    floorProminence: integer("floor_prominence"),
    floorCompanyId: integer("floor_company_id"),
  },
  (t) => [primaryKey({ columns: [t.kind, t.prefix] })],
);

export type Company = typeof companies.$inferSelect;
/** A row of `logos` as stored; the catalogue reads logos with their R2 keys (`Logo`, src/images/keys.ts). */
export type LogoRow = typeof logos.$inferSelect;
