import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const plans = ["free", "launch", "growth", "enterprise"] as const;
export type Plan = (typeof plans)[number];

/** A customer: signs in to the portal and through OAuth, owns clients and keys. */
export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  /** Lower-cased; the sign-in name. */
  email: text("email").notNull().unique(),
  /** PBKDF2-SHA-256 as `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>`. */
  passwordHash: text("password_hash").notNull(),
  plan: text("plan", { enum: plans }).notNull().default("free"),
  /**
   * When the owner proved the email address is theirs (the link mailed at sign-up), or when an
   * operator made the account; null until then. An unconfirmed account gets a small discovery
   * budget, not its plan's (src/limits/discoveryLimits.ts).
   */
  emailConfirmedAt: integer("email_confirmed_at", { mode: "timestamp_ms" }),
  /** Operators can switch MCP access off for one account (abuse), whatever its plan. */
  mcpAccess: integer("mcp_access", { mode: "boolean" }).notNull().default(true),
  createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
});

/** An application of an account: what MCP access and feedback are attributed to. */
export const apiClients = sqliteTable(
  "api_clients",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("api_clients_account_idx").on(t.accountId)],
);

export const keyTypes = ["publishable", "secret"] as const;

/** Lookup fallbacks a key can default to (`fallback=monogram` in a URL does the same for one request). */
export const lookupFallbacks = ["monogram"] as const;
export type LookupFallback = (typeof lookupFallbacks)[number];
export type KeyType = (typeof keyTypes)[number];

/**
 * API keys. The key itself is shown once at creation and never stored: only its SHA-256
 * (the lookup index; keys carry 190 bits of randomness, so a fast hash is the right one)
 * and a short visible prefix for people to recognise it by.
 */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    clientId: text("client_id").references(() => apiClients.id, { onDelete: "set null" }),
    type: text("type", { enum: keyTypes }).notNull(),
    /** SHA-256 of the whole key, hex. */
    keyHash: text("key_hash").notNull(),
    /** `pk_` or `sk_` and the first characters of the key, e.g. `pk_3Fh9aQ`. */
    prefix: text("prefix").notNull(),
    /** The key's last four characters, shown beside the prefix so people can tell keys apart. */
    lastFour: text("last_four"),
    /** Origins allowed to use a publishable key (`https://example.com`), as a JSON array; empty means any. */
    allowedOrigins: text("allowed_origins", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    requireAttribution: integer("require_attribution", { mode: "boolean" }).notNull().default(false),
    /** Per-minute limit for this key instead of the plan's. */
    perMinuteOverride: integer("per_minute_override"),
    /** What a lookup with this key answers for a domain without a logo when the URL does not say: null is the spec's 404. */
    fallback: text("fallback", { enum: lookupFallbacks }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    revokedAt: integer("revoked_at", { mode: "timestamp_ms" }),
    /**
     * When the key was last seen serving a request, to within a few minutes: written when a
     * lookup takes the slow path (a limiter lease, a cold key), never on the warm path.
     */
    lastUsedAt: integer("last_used_at", { mode: "timestamp_ms" }),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.keyHash), index("api_keys_account_idx").on(t.accountId)],
);

export type Account = typeof accounts.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;

/**
 * Portal sessions. The cookie carries an opaque random id; only its SHA-256 is stored, so a
 * leaked database yields no usable session.
 */
export const sessions = sqliteTable(
  "sessions",
  {
    idHash: text("id_hash").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("sessions_account_idx").on(t.accountId)],
);
