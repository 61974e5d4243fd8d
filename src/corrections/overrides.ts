import type { BatchItem } from "drizzle-orm/batch";
import { and, asc, count, eq, inArray } from "drizzle-orm";
import { type LogoOverride, logoOverrides } from "../../schema";
import type { Logo } from "../catalogue/entities";
import { storedImage } from "../catalogue/import/storedImage";
import { deleteAll, putImages, sweep } from "../catalogue/import/write";
import { OVERRIDE_SOURCE_SET_PREFIX } from "../catalogue/provenance";
import type { ResolvedLogo, Subject } from "../catalogue/resolveLogo";
import { retirements } from "../catalogue/retiredObjects";
import { logoKeys, logoObjectKeys } from "../images/objectKeys";
import { forgetAccountKeys } from "../keys/verify";
import { EXPIRING_ENTRY_BYTES } from "../lib/boundedCache";
import type { CatalogueDb } from "../lib/db";
import { normaliseDomain, registrableDomain } from "../lib/domain";
import { sha256Hex } from "../lib/encoding";
import { fail, ok, type Result } from "../lib/errors";
import { asciiBytes, expiringIsolateCache, MAP_ENTRY_BYTES, objectBytes, stringBytes } from "../lib/isolateCaches";
import { log } from "../lib/log";
import { SECOND_MS } from "../lib/time";
import { purgeDomains } from "../purge/purge";
import { prepareUpload } from "./upload";

/**
 * Account overrides (docs/corrections.md, "Fixing a logo for yourself"): an account pins its own
 * logo for a domain; its lookups, MCP tools and SDK answer that logo, with `X-Logo-Source:
 * override`, and nobody else's do. The image is checked as an import's is (./upload.ts) and
 * stored as a logo's objects are, under a source set that names the account without saying who
 * it is (`override-<tag>`); the row is the account's own table, never the catalogue's, so no
 * other account can find it by search or by id.
 *
 * Reaching the edge within seconds: a key's record carries whether its account has overrides
 * (src/keys/verify.ts, trusted 10 seconds per isolate), so the lookups of every other account
 * never ask; an account that has them has each subject's override, or none, held
 * OVERRIDE_TTL_MS per isolate, and every change purges the domain (src/purge/purge.ts).
 */
export const MAX_OVERRIDES_PER_ACCOUNT = 500;
export const OVERRIDE_TTL_MS = 10 * SECOND_MS;

/** The source set of an account's overrides: 12 hex digits of its id's SHA-256. */
export async function overrideSourceSet(accountId: string): Promise<string> {
  return `${OVERRIDE_SOURCE_SET_PREFIX}${(await sha256Hex(accountId)).slice(0, 12)}`;
}

/** An override's object keys, derived as a logo's are (src/images/objectKeys.ts). */
function overrideKeys(row: Pick<LogoOverride, "domain" | "sourceSet" | "contentHash" | "format">) {
  return logoKeys({ primaryDomain: row.domain, variant: "icon", sourceSet: row.sourceSet, contentHash: row.contentHash }, row.format);
}

function objectKeysOf(row: Pick<LogoOverride, "domain" | "sourceSet" | "contentHash" | "format" | "renditions">): string[] {
  return logoObjectKeys({ ...overrideKeys(row), renditions: row.renditions });
}

export interface OverrideSummary {
  domain: string;
  width: number;
  height: number;
  /** The master's key: what `/assets/…` serves (assetUrl). */
  masterKey: string;
  updatedAt: string;
}

const summaryOf = (row: LogoOverride): OverrideSummary => ({
  domain: row.domain,
  width: row.width,
  height: row.height,
  masterKey: overrideKeys(row).masterKey,
  updatedAt: row.updatedAt.toISOString(),
});

export async function listOverrides(db: CatalogueDb, accountId: string): Promise<OverrideSummary[]> {
  const rows = await db.select().from(logoOverrides).where(eq(logoOverrides.accountId, accountId)).orderBy(asc(logoOverrides.domain));
  return rows.map(summaryOf);
}

/** A typed domain as overrides name it: normalised (lower case, punycode, no `www.`). */
export function overrideDomain(input: string): Result<string> {
  const host = normaliseDomain(input);
  return host.ok ? ok(host.domain) : fail("invalid_argument", "Invalid domain format");
}

/**
 * Pins `bytes` as the account's logo for `input`: objects first, then the row (and the
 * retirement of the image it replaces) in one batch; the domain purged after.
 */
export async function setOverride(
  env: Env,
  db: CatalogueDb,
  accountId: string,
  input: string,
  bytes: Uint8Array,
  contentType: string | undefined,
  now = Date.now(),
): Promise<Result<{ override: OverrideSummary; outcome: "created" | "updated" }>> {
  const domain = overrideDomain(input);
  if (!domain.ok) return domain;
  const [existing, [held]] = await db.batch([
    db
      .select()
      .from(logoOverrides)
      .where(and(eq(logoOverrides.accountId, accountId), eq(logoOverrides.domain, domain.value))),
    db.select({ n: count() }).from(logoOverrides).where(eq(logoOverrides.accountId, accountId)),
  ]);
  const before = existing[0];
  if (!before && (held?.n ?? 0) >= MAX_OVERRIDES_PER_ACCOUNT)
    return fail("conflict", `An account may pin at most ${MAX_OVERRIDES_PER_ACCOUNT} logos: remove one first`);
  const prepared = await prepareUpload(env, bytes, contentType);
  if (!prepared.ok) return prepared;

  const sourceSet = await overrideSourceSet(accountId);
  const stored = storedImage({ primaryDomain: domain.value, variant: "icon", sourceSet }, prepared.value);
  const replaced = before ? objectKeysOf(before).filter((key) => !stored.objectKeys.includes(key)) : [];
  const put = await putImages(env.LOGOS, [stored]);
  const unwind = () =>
    deleteAll(env.LOGOS, before ? stored.objectKeys.filter((key) => !objectKeysOf(before).includes(key)) : stored.objectKeys);
  if (!put.ok) {
    await unwind().catch(() => undefined);
    return put;
  }
  const at = new Date(now);
  const values = { ...stored.columns, sourceSet, updatedAt: at };
  try {
    const [rows] = await db.batch([
      db
        .insert(logoOverrides)
        .values({ ...values, accountId, domain: domain.value, createdAt: at })
        .onConflictDoUpdate({ target: [logoOverrides.accountId, logoOverrides.domain], set: values })
        .returning(),
      ...(retirements(db, replaced, stored.objectKeys, at) as BatchItem<"sqlite">[]),
    ]);
    await afterChange(env, db, accountId, [domain.value], at);
    return ok({ override: summaryOf(rows[0]!), outcome: before ? "updated" : "created" });
  } catch (error) {
    await unwind().catch(() => undefined);
    throw error;
  }
}

export async function removeOverride(env: Env, db: CatalogueDb, accountId: string, input: string, now = Date.now()): Promise<Result<true>> {
  const domain = overrideDomain(input);
  if (!domain.ok) return domain;
  const at = new Date(now);
  const removed = await db
    .delete(logoOverrides)
    .where(and(eq(logoOverrides.accountId, accountId), eq(logoOverrides.domain, domain.value)))
    .returning();
  const row = removed[0];
  if (!row) return fail("not_found", `No override for ${domain.value}`);
  // Retired, not deleted: a redirect handed out a moment ago still leads to its image for a while.
  const retire = retirements(db, objectKeysOf(row), [], at);
  if (retire.length > 0) await db.batch(retire as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  await afterChange(env, db, accountId, [domain.value], at);
  return ok(true);
}

/** What every change of an account's overrides is followed by: its keys' records read again, the domain purged. */
async function afterChange(env: Env, db: CatalogueDb, accountId: string, domains: string[], at: Date): Promise<void> {
  forgetAccountKeys(accountId);
  await purgeDomains(env, domains, at.getTime()).catch((error) => log.error("overrides.purge_failed", { domains, error }));
  await sweep(db, env.LOGOS, at);
}

/** The hosts an override may be pinned under for a lookup: the host itself, its registrable domain, its company's primary domain. */
function candidatesOf(subject: Subject | null, resolved: Pick<ResolvedLogo, "domain"> | null): string[] {
  const hosts = subject?.kind === "domain" ? [subject.value, registrableDomain(subject.value)] : [];
  return [...new Set([...hosts, resolved?.domain].filter((d): d is string => typeof d === "string" && d.length > 0))];
}

interface HeldOverride {
  logo: ResolvedLogo | null;
  /** The hosts it was looked for under: what a purge of any of them drops. */
  domains: string[];
}

const held = expiringIsolateCache<string, HeldOverride>({
  name: "corrections.overrides",
  holds: "an account and a lookup's subject, and the logo the account pinned for it, or none",
  capacity: 2_000,
  ttlMs: OVERRIDE_TTL_MS,
  maxBytes: 1024 * 1024,
  sizeOf: (key, entry) =>
    stringBytes(key.length) +
    objectBytes(2) +
    entry.domains.reduce((sum, d) => sum + asciiBytes(d.length), objectBytes(entry.domains.length)) +
    (entry.logo ? objectBytes(16) + stringBytes(entry.logo.companyName.length) + asciiBytes(300) : 8) +
    EXPIRING_ENTRY_BYTES +
    MAP_ENTRY_BYTES,
  ofDomain: (_key, entry, domain) => entry.domains.some((d) => d === domain || d.endsWith(`.${domain}`)),
});

const heldKey = (accountId: string, subject: Subject) => `${accountId} ${subject.kind}/${subject.value}`;

/** What this isolate holds of an account's override for a subject: the logo, null (none), or undefined (not held). */
export function knownOverride(accountId: string, subject: Subject, now = Date.now()): ResolvedLogo | null | undefined {
  return held.get(heldKey(accountId, subject), now)?.logo;
}

/**
 * The account's override for a lookup's subject, standing in for `resolved` (the catalogue's
 * answer, whose company it keeps): read from D1 at most every OVERRIDE_TTL_MS per isolate.
 */
export async function overrideFor(
  db: CatalogueDb,
  accountId: string,
  subject: Subject,
  resolved: ResolvedLogo | null,
  now = Date.now(),
): Promise<ResolvedLogo | null> {
  const key = heldKey(accountId, subject);
  const known = held.get(key, now);
  if (known) return known.logo;
  const domains = candidatesOf(subject, resolved);
  const row = await pinnedAmong(db, accountId, domains);
  const logo = row ? overrideLogo(row, resolved) : null;
  held.set(key, { logo, domains }, now);
  return logo;
}

/** The account's override under the first of `domains` that has one. */
async function pinnedAmong(db: CatalogueDb, accountId: string, domains: string[]): Promise<LogoOverride | undefined> {
  if (domains.length === 0) return undefined;
  const rows = await db
    .select()
    .from(logoOverrides)
    .where(and(eq(logoOverrides.accountId, accountId), inArray(logoOverrides.domain, domains)))
    .all();
  return domains.map((domain) => rows.find((row) => row.domain === domain)).find((row) => row !== undefined);
}

/** An override as a lookup serves it: the pinned image, under the company the catalogue knows for the domain (ids 0 when none). */
function overrideLogo(row: LogoOverride, resolved: ResolvedLogo | null): ResolvedLogo {
  return {
    companyId: resolved?.companyId ?? 0,
    companyName: resolved?.companyName ?? row.domain,
    domain: resolved?.domain ?? row.domain,
    brandColor: resolved?.brandColor ?? null,
    logoId: resolved?.logoId ?? 0,
    variant: "icon",
    width: row.width,
    height: row.height,
    tone: row.tone,
    contentHash: row.contentHash,
    masterKey: overrideKeys(row).masterKey,
    renditions: row.renditions,
    source: "override",
    fetchedAt: null,
    updatedAt: row.updatedAt.getTime(),
  };
}

/**
 * For the MCP tools and the REST API, which deliver catalogue logos (`Logo`): the account's
 * override for any of `domains`, as a logo standing in for `base` (its id and company), or
 * undefined. One read per request at most: `overridesOf` is asked once, its map kept by the caller.
 */
export async function overridesOf(db: CatalogueDb, accountId: string): Promise<Map<string, LogoOverride>> {
  const rows = await db.select().from(logoOverrides).where(eq(logoOverrides.accountId, accountId)).all();
  return new Map(rows.map((row) => [row.domain, row]));
}

export function pinnedFor(
  overrides: ReadonlyMap<string, LogoOverride>,
  ...domains: (string | null | undefined)[]
): LogoOverride | undefined {
  for (const domain of domains) {
    if (!domain) continue;
    const row = overrides.get(domain) ?? overrides.get(registrableDomain(domain) ?? domain);
    if (row) return row;
  }
  return undefined;
}

/** An override as a catalogue logo: the pinned image in place of `base`'s, keeping its id and company (0 where there is none). */
export function overrideAsLogo(row: LogoOverride, base: Logo | undefined, companyId = base?.companyId ?? 0): Logo {
  const keys = overrideKeys(row);
  return {
    id: base?.id ?? 0,
    companyId,
    variant: "icon",
    format: row.format,
    renditions: row.renditions,
    width: row.width,
    height: row.height,
    bytes: row.bytes,
    sourceHash: row.contentHash,
    contentHash: row.contentHash,
    tone: row.tone,
    sourceSet: row.sourceSet,
    licence: "own",
    sourceUrl: null,
    fetchedAt: null,
    sourceEtag: null,
    sourceLastModified: null,
    verifiedAt: row.updatedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    ...keys,
  };
}
