import { and, desc, eq, gte, isNull, or, type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { accounts, apiClients, apiKeys, type KeyType, keyTypes, type LookupFallback } from "../../schema";
import type { Db } from "../lib/db";
import { fail, ok, type Result } from "../lib/errors";
import { generateKey, hashKey, keyTypeOf, lastFourOf, visiblePrefix } from "./format";
import { forgetKey } from "./verify";

/** A value as refusals quote it: a long one cut short, so that a message never carries kilobytes back. */
const quoted = (value: string) => `"${value.length > 80 ? `${value.slice(0, 80)}…` : value}"`;

/** An origin as browsers send it: scheme, host and port, nothing else. */
export const originSchema = z.string().transform((value, ctx) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({ code: "custom", message: `${quoted(value)} is not a URL` });
    return z.NEVER;
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password) {
    ctx.addIssue({ code: "custom", message: `${quoted(value)} must be an http(s) origin` });
    return z.NEVER;
  }
  if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.hash) {
    ctx.addIssue({ code: "custom", message: `${quoted(value)} must be an origin without a path, like https://example.com` });
    return z.NEVER;
  }
  // The URL parser lets `*` and other characters no browser sends through: such an origin
  // would be stored and then never match a page. Origins are compared exactly, one by one.
  if (url.hostname.includes("*")) {
    ctx.addIssue({
      code: "custom",
      message: `${quoted(value)}: wildcards are not supported; list each origin, like https://app.example.com`,
    });
    return z.NEVER;
  }
  if (!/^(?:\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*)$/.test(url.hostname)) {
    ctx.addIssue({ code: "custom", message: `${quoted(value)} has no valid host name` });
    return z.NEVER;
  }
  // Nor does it bound a host's length; DNS does (RFC 1035 §2.3.4: 63 octets a label, 255 a
  // name, which is 253 characters written out), so no page has a longer one.
  if (url.hostname.length > 253 || url.hostname.split(".").some((label) => label.length > 63)) {
    ctx.addIssue({ code: "custom", message: `${quoted(value)} has a host name too long: at most 253 characters, and 63 between dots` });
    return z.NEVER;
  }
  return url.origin;
});

export const createKeyInput = z
  .object({
    accountId: z.string().min(1),
    type: z.enum(keyTypes),
    allowedOrigins: z.array(originSchema).max(100).default([]),
    requireAttribution: z.boolean().default(false),
    perMinute: z.number().int().min(1).max(10_000_000).optional(),
  })
  .refine((input) => input.type === "publishable" || (input.allowedOrigins.length === 0 && !input.requireAttribution), {
    message: "allowed origins and the attribution requirement apply to publishable keys only",
  });

export type CreateKeyInput = z.input<typeof createKeyInput>;

export interface CreatedKey {
  id: string;
  accountId: string;
  type: KeyType;
  /** The key itself: returned once, here, and never again. */
  key: string;
  prefix: string;
  lastFour: string;
  allowedOrigins: string[];
  requireAttribution: boolean;
  perMinuteOverride: number | null;
  createdAt: string;
}

export async function createKey(db: Db, raw: CreateKeyInput): Promise<Result<CreatedKey>> {
  const parsed = createKeyInput.safeParse(raw);
  if (!parsed.success) return fail("invalid_argument", z.prettifyError(parsed.error));
  const input = parsed.data;

  const account = await db.query.accounts.findFirst({ where: eq(accounts.id, input.accountId), columns: { id: true } });
  if (!account) return fail("not_found", `No account with id ${input.accountId}`);
  const client = await db.query.apiClients.findFirst({
    where: eq(apiClients.accountId, input.accountId),
    columns: { id: true },
  });

  const key = generateKey(input.type);
  const row = {
    id: crypto.randomUUID(),
    accountId: input.accountId,
    clientId: client?.id ?? null,
    type: input.type,
    keyHash: await hashKey(key),
    prefix: visiblePrefix(key),
    lastFour: lastFourOf(key),
    allowedOrigins: input.allowedOrigins,
    requireAttribution: input.requireAttribution,
    perMinuteOverride: input.perMinute ?? null,
    createdAt: new Date(),
  };
  // Inserted, then taken back in the same transaction when it is one live key too many: a count
  // read before inserting would let creations made at once all pass it.
  const [, tooMany] = await db.batch([
    db.insert(apiKeys).values(row),
    db
      .delete(apiKeys)
      .where(
        and(
          eq(apiKeys.id, row.id),
          sql`(SELECT count(*) FROM ${apiKeys} WHERE ${apiKeys.accountId} = ${row.accountId} AND ${apiKeys.revokedAt} IS NULL) > ${MAX_LISTED_KEYS}`,
        ),
      )
      .returning({ id: apiKeys.id }),
  ]);
  if (tooMany.length > 0) {
    return fail(
      "conflict",
      `This account has ${MAX_LISTED_KEYS} live keys, the most it may hold: revoke one it no longer uses, then create the new one`,
    );
  }
  return ok({
    id: row.id,
    accountId: row.accountId,
    type: row.type,
    key,
    prefix: row.prefix,
    lastFour: row.lastFour,
    allowedOrigins: row.allowedOrigins,
    requireAttribution: row.requireAttribution,
    perMinuteOverride: row.perMinuteOverride,
    createdAt: row.createdAt.toISOString(),
  });
}

export interface RevokedKey {
  id: string;
  prefix: string;
  revokedAt: string;
  /** True when the key had been revoked before this call; its revocation time is kept. */
  alreadyRevoked: boolean;
}

export async function revokeKey(db: Db, key: string): Promise<Result<RevokedKey>> {
  if (keyTypeOf(key) === null) return fail("invalid_argument", "Not an API key: expected pk_… or sk_… followed by 32 letters and digits");
  return revokeWhere(db, eq(apiKeys.keyHash, await hashKey(key)));
}

/** Revokes one of an account's keys by its id: another account's key is as unknown as a missing one. */
export async function revokeAccountKey(db: Db, accountId: string, keyId: string): Promise<Result<RevokedKey>> {
  return revokeWhere(db, and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId))!);
}

async function revokeWhere(db: Db, which: SQL): Promise<Result<RevokedKey>> {
  const now = new Date();
  const [revoked] = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(which, isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id, prefix: apiKeys.prefix });
  if (revoked) {
    // This isolate stops serving the key at once; others within KEY_CACHE_TTL_MS.
    forgetKey(revoked.id);
    return ok({ ...revoked, revokedAt: now.toISOString(), alreadyRevoked: false });
  }

  const existing = await db.query.apiKeys.findFirst({ where: which });
  if (!existing?.revokedAt) return fail("not_found", "No such key");
  return ok({ id: existing.id, prefix: existing.prefix, revokedAt: existing.revokedAt.toISOString(), alreadyRevoked: true });
}

/** What an account's key listing shows: never the key, only what identifies it to people. */
export interface ListedKey {
  id: string;
  type: KeyType;
  prefix: string;
  /** Null for keys made before the last four characters were kept. */
  lastFour: string | null;
  allowedOrigins: string[];
  requireAttribution: boolean;
  perMinuteOverride: number | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/**
 * Accounts hold a handful of keys; a listing stops here. It is also the most live keys an
 * account may hold (createKey refuses more), so that every live key is listed: seen, revocable
 * from the portal, and counted in its figures.
 */
export const MAX_LISTED_KEYS = 100;

const listedColumns = {
  id: apiKeys.id,
  type: apiKeys.type,
  prefix: apiKeys.prefix,
  lastFour: apiKeys.lastFour,
  allowedOrigins: apiKeys.allowedOrigins,
  requireAttribution: apiKeys.requireAttribution,
  perMinuteOverride: apiKeys.perMinuteOverride,
  createdAt: apiKeys.createdAt,
  lastUsedAt: apiKeys.lastUsedAt,
  revokedAt: apiKeys.revokedAt,
};

/** Live keys first, newest first within each group. */
const liveFirst = [sql`${apiKeys.revokedAt} IS NOT NULL`, desc(apiKeys.createdAt)] as const;

/** An account's keys, live ones first, newest first within each group. */
export async function listKeys(db: Db, accountId: string): Promise<ListedKey[]> {
  return db
    .select(listedColumns)
    .from(apiKeys)
    .where(eq(apiKeys.accountId, accountId))
    .orderBy(...liveFirst)
    .limit(MAX_LISTED_KEYS)
    .all();
}

/**
 * Every key of an account that may have served lookups since `since`: the live ones and those
 * revoked since, however many (listKeys shows at most MAX_LISTED_KEYS), for usage totals.
 */
export async function keysInUseSince(db: Db, accountId: string, since: Date): Promise<ListedKey[]> {
  return db
    .select(listedColumns)
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), or(isNull(apiKeys.revokedAt), gte(apiKeys.revokedAt, since))))
    .orderBy(...liveFirst)
    .all();
}

/**
 * One of an account's keys by its id, live or revoked, whether or not a listing reaches it:
 * another account's key is as unknown as a missing one.
 */
export async function listedKey(db: Db, accountId: string, keyId: string): Promise<ListedKey | undefined> {
  return db
    .select(listedColumns)
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId)))
    .get();
}

/**
 * What lookups with this key answer for a domain without a logo when the URL does not say:
 * a monogram, or (null) the spec's 404. Takes effect within the key cache's 10 seconds.
 */
export async function setKeyFallback(
  db: Db,
  key: string,
  fallback: LookupFallback | null,
): Promise<Result<{ id: string; prefix: string; fallback: LookupFallback | null }>> {
  if (keyTypeOf(key) === null) return fail("invalid_argument", "Not an API key: expected pk_… or sk_… followed by 32 letters and digits");
  const [updated] = await db
    .update(apiKeys)
    .set({ fallback })
    .where(and(eq(apiKeys.keyHash, await hashKey(key)), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id, prefix: apiKeys.prefix, fallback: apiKeys.fallback });
  return updated ? ok(updated) : fail("not_found", "No such key");
}
