import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import {
  type Company,
  companies,
  companyDomains,
  companyTickers,
  type LogoRow,
  type LogoTone,
  type LogoVariant,
  logos,
} from "../../schema";
import {
  derivedRenditions,
  type Logo,
  type LogoKeys,
  logoKeys,
  logoObjectKeys,
  type RenditionSet,
  renditionKey,
  vectorKey,
  withKeys,
} from "../images/keys";
import type { RenditionFiles } from "../images/prepared";
import { RENDITIONS_VERSION } from "../images/renditions";
import type { CatalogueDb } from "../lib/db";
import { isTransientDatabaseFailure, rootCause } from "../lib/dependencies";
import { fail, ok, type Result } from "../lib/errors";
import { retiredAmong, retirements, sweepRetired } from "./retiredObjects";
import { foldText, type ListedCompany, searchPrefixesOf, searchPrefixUpkeep } from "./searchPrefixes";
import { log } from "../lib/log";

/**
 * Writing logos of companies into the catalogue: the step import rows turn into, one at a time
 * (importCompanyLogo) or many at once (importCompanyLogos, bulk loads), by the same code.
 * Runtime-agnostic (D1 and R2 bindings only) so the Node importer and the Worker share it.
 *
 * Order of writes, so that a failure leaves no half-written company and no orphaned object:
 *   1. new objects are put under fresh, content-addressed keys (nothing points at them yet);
 *   2. company, domains, ticker and logo rows are written in one D1 batch (one transaction),
 *      which also retires the objects of the replaced image: they are deleted two days later,
 *      once no cached redirect can lead to them (./retiredObjects.ts).
 * If step 2 fails, the objects of step 1 are deleted again.
 */
export interface CompanyLogoInput {
  name: string;
  /** Normalised hosts, primary first. */
  domains: string[];
  ticker?: { symbol: string; exchange: string } | undefined;
  aliases: string[];
  brandColor?: string | undefined;
  /** Absent: the company keeps its prominence (a new one gets 0), as it keeps its colour. */
  prominence?: number | undefined;
  variant: LogoVariant;
  sourceSet: string;
  /** Absent: the logo keeps its licence (a new one gets `unknown`). */
  licence?: string | undefined;
  /** SHA-256 of the file as imported: an unchanged file is never converted or written again. */
  sourceHash: string;
  /** Where a discovered logo came from and when it was fetched; a refetch of the same file updates only these. */
  provenance?: { sourceUrl: string; fetchedAt: Date } | undefined;
  /**
   * A company that already owns one of `domains` keeps its name, aliases, colour and
   * prominence: the input only adds or replaces its logo. Discovery's name and colour are what
   * a page says of itself, never better than what the catalogue holds.
   */
  keepCompany?: boolean | undefined;
}

export interface PreparedImage {
  format: string;
  original: Uint8Array;
  /** PNG renditions (src/images/prepared.ts): those `renditions` names exist. */
  files: RenditionFiles;
  /** The vector original, sanitised (src/images/svg.ts), when it is one that sanitised cleanly. */
  vector: Uint8Array | null;
  renditions: RenditionSet;
  width: number;
  height: number;
  contentHash: string;
  tone: LogoTone;
}

export type ImportOutcome = "created" | "updated" | "unchanged";

export interface ImportedLogo {
  outcome: ImportOutcome;
  companyId: number;
  logoId: number;
}

/** Where a logo would be stored: the company owning any of `domains`, its variant and source set. */
export interface StoredLogoKey {
  domains: string[];
  variant: LogoVariant;
  sourceSet: string;
}

/**
 * The source hash of the stored logo that an input would replace, if any: lets callers skip
 * image work up front. None for a logo made by an older renditions version: its image is made
 * again (planWrites), so it must be converted like a changed file.
 */
export async function storedSourceHash(
  db: CatalogueDb,
  domains: string[],
  variant: LogoVariant,
  sourceSet: string,
): Promise<string | null> {
  return (await storedSourceHashes(db, [{ domains, variant, sourceSet }]))[0]!;
}

/** storedSourceHash for many inputs in one query, in input order. */
export async function storedSourceHashes(db: CatalogueDb, keys: StoredLogoKey[]): Promise<Array<string | null>> {
  if (keys.length === 0) return [];
  const wanted = JSON.stringify(keys.flatMap((k, index) => k.domains.map((domain) => [index, domain, k.variant, k.sourceSet])));
  const rows = await db.all<{ position: number; sourceHash: string }>(sql`
    SELECT DISTINCT wanted.value ->> 0 AS position, lower(hex(${logos.sourceHash})) AS sourceHash
    FROM json_each(${wanted}) AS wanted
    JOIN ${companyDomains} ON ${companyDomains.domain} = wanted.value ->> 1
    JOIN ${logos} ON ${logos.companyId} = ${companyDomains.companyId}
      AND ${logos.variant} = wanted.value ->> 2 AND ${logos.sourceSet} = wanted.value ->> 3
      AND json_extract(${logos.renditions}, '$.version') >= ${RENDITIONS_VERSION}`);
  const hashes: Array<string | null> = keys.map(() => null);
  for (const row of rows) hashes[row.position] = row.sourceHash;
  return hashes;
}

/** One input of importCompanyLogos: the row and, when asked for, its prepared image. */
export interface LogoImport {
  input: CompanyLogoInput;
  image: () => Promise<Result<PreparedImage>>;
}

/** Objects can go to an R2 binding or to anything that puts and deletes alike (R2's S3 API). */
export interface ObjectStore {
  put(key: string, value: Uint8Array, options: R2PutOptions): Promise<unknown>;
  delete(keys: string | string[]): Promise<void>;
}

export async function importCompanyLogo(
  db: CatalogueDb,
  bucket: R2Bucket,
  input: CompanyLogoInput,
  image: () => Promise<Result<PreparedImage>>,
  now = new Date(),
): Promise<Result<ImportedLogo>> {
  return (await importCompanyLogos(db, bucket, [{ input, image }], now))[0]!;
}

/**
 * Many inputs in one write: each input is decided in order against the catalogue as the
 * inputs before it leave it, exactly as if each had been imported alone; then the objects of
 * all of them are put, all their rows written in one D1 batch (one transaction), and the
 * objects they replaced retired. Results come in input order. Should the objects or the batch
 * fail, what was put is deleted and the inputs are imported one at a time instead, so that a
 * bad input fails alone; unless the storage failed (`unavailable`: objects refused, the
 * database locked or unreachable), which fails them all.
 */
export async function importCompanyLogos(
  db: CatalogueDb,
  bucket: ObjectStore,
  items: LogoImport[],
  now = new Date(),
): Promise<Array<Result<ImportedLogo>>> {
  if (items.length === 0) return [];
  const plan = await planWrites(
    db,
    await readCatalogue(
      db,
      items.map((item) => item.input),
    ),
    items,
    now,
  );
  const written = await writePlan(db, bucket, plan, now);
  if (!written.ok) {
    if (items.length === 1) return [written];
    // Storage that is down or refuses every write is no input's fault: trying them one at a
    // time would only fail each again.
    if (written.error.code === "unavailable") return plan.decisions.map((decision) => (decision.ok ? written : decision));
    const results: Array<Result<ImportedLogo>> = [];
    for (const item of items) results.push((await importCompanyLogos(db, bucket, [item], now))[0]!);
    return results;
  }
  return plan.decisions.map((decision) => {
    if (!decision.ok) return decision;
    const { outcome, company, logo } = decision.value;
    return ok({ outcome, companyId: company.id!, logoId: logo.id! });
  });
}

/** A company as the inputs decided so far leave it. */
interface CompanyState {
  /** Unknown for a company created by this write until the batch has run. */
  id: number | undefined;
  /** The batch statement whose RETURNING gives the id of a created company. */
  createdBy?: number;
  primaryDomain: string;
  row: Pick<Company, "name" | "nameKey" | "aliases" | "brandColor" | "prominence"> | undefined;
  /** Every domain and ticker symbol it holds: with the row, what its search prefix lists follow. */
  domains: string[];
  tickers: string[];
  /** By variant and source set. */
  logos: Map<string, LogoState>;
}

interface LogoState {
  id: number | undefined;
  createdBy?: number;
  sourceHash: string;
  licence: string;
  /** The renditions version that made its stored image: an older one is made again. */
  renditionsVersion: number;
  sourceUrl: string | null;
  fetchedAt: Date | null;
  /** Object keys of the image the catalogue held before this write, if any. */
  storedKeys: string[];
  /** Object keys of the image the inputs leave it with. */
  keys: string[];
  /** An image of this write, to be put before the batch runs. */
  put?: StoredImage;
  /** Its row as the batch writes it, by its indexed slot and what names `put`'s keys (rowsWritten). */
  witness?: SQL;
}

interface CatalogueState {
  domains: Map<string, CompanyState>;
  /** Tickers held, under every spelling a lookup tries for them (tickerSpellings). */
  tickers: Map<string, HeldTicker[]>;
}

interface HeldTicker {
  symbol: string;
  exchange: string;
  company: CompanyState;
}

type Decision = Result<{ outcome: ImportOutcome; company: CompanyState; logo: LogoState }>;

interface WritePlan {
  decisions: Decision[];
  statements: BatchItem<"sqlite">[];
  logos: LogoState[];
  /** A logo row as the batch writes it, by its indexed slot: whether the batch was applied (rowsWritten). */
  witness?: SQL | undefined;
}

const logoSlot = (variant: string, sourceSet: string) => `${variant} ${sourceSet}`;

/**
 * The spellings of a symbol that are one ticker, as lookups (findCompanyByTicker, ./queries.ts)
 * and imports read them: a share class with a dot or a dash alike (`BT.A`, `BT-A`); a numeric
 * code with its leading zeros or without (Hong Kong's `0700`, `700` and `00700` are one code):
 * its four-digit spelling, which the bundled catalogue holds, and its bare one, which an import
 * may have stored. Codes of five digits or more that are not zero-padded (Korea's `005930`,
 * Hong Kong's `09988` keep theirs) are left as they are.
 */
export function tickerSpellings(symbol: string): string[] {
  const spellings = [symbol, symbol.replaceAll(".", "-"), symbol.replaceAll("-", ".")];
  if (/^\d{1,8}$/.test(symbol)) {
    const bare = symbol.replace(/^0+(?=\d)/, "");
    if (bare.length <= 4) spellings.push(bare.padStart(4, "0"), bare);
  }
  return [...new Set(spellings)];
}

/**
 * The stored symbols that may share a spelling with `symbol`: its spellings and, for a numeric
 * code, its longer zero-paddings (`00700`, whose own spellings include `0700`).
 */
function tickerCandidates(symbol: string): string[] {
  const candidates = tickerSpellings(symbol);
  const bare = /^\d{1,8}$/.test(symbol) ? symbol.replace(/^0+(?=\d)/, "") : "";
  if (bare !== "" && bare.length <= 4) for (let width = 5; width <= 8; width++) candidates.push(bare.padStart(width, "0"));
  return candidates;
}

/**
 * The company other than `company` that holds `ticker` on the same exchange (or, both without
 * one, without) under a spelling lookups take for it (BT.A and BT-A, 0700 and 700): a second
 * holder there would take the first one's lookups. The same symbol on two exchanges is two
 * listings, each found by its exchange; one held without an exchange is found by any exchange
 * that holds none of its own (findCompanyByTicker), so it may stand beside them.
 */
function otherHolder(
  state: CatalogueState,
  ticker: { symbol: string; exchange: string },
  company: CompanyState | undefined,
): HeldTicker | undefined {
  for (const spelling of tickerSpellings(ticker.symbol)) {
    const held = state.tickers.get(spelling)?.find((h) => h.company !== company && h.exchange === ticker.exchange);
    if (held) return held;
  }
  return undefined;
}

function holdTicker(state: CatalogueState, held: HeldTicker): void {
  for (const spelling of tickerSpellings(held.symbol)) {
    const holders = state.tickers.get(spelling);
    if (holders) holders.push(held);
    else state.tickers.set(spelling, [held]);
  }
}

/** Everything the decisions need about the companies the inputs name, in one round trip. */
async function readCatalogue(db: CatalogueDb, inputs: CompanyLogoInput[]): Promise<CatalogueState> {
  const named = sql`(SELECT value FROM json_each(${JSON.stringify([...new Set(inputs.flatMap((i) => i.domains))])}))`;
  // Every listing of any spelling: which of them conflict is otherHolder's to say.
  const tickers = JSON.stringify([...new Set(inputs.flatMap((i) => (i.ticker ? tickerCandidates(i.ticker.symbol) : [])))]);
  const owningCompany = db.select({ id: companyDomains.companyId }).from(companyDomains).where(inArray(companyDomains.domain, named));
  const [owners, companyRows, domainRows, logoRows, tickerRows, heldTickers] = await db.batch([
    db
      .select({ domain: companyDomains.domain, companyId: companyDomains.companyId })
      .from(companyDomains)
      .where(inArray(companyDomains.domain, named)),
    db.select().from(companies).where(inArray(companies.id, owningCompany)),
    db
      .select({ domain: companyDomains.domain, companyId: companyDomains.companyId, isPrimary: companyDomains.isPrimary })
      .from(companyDomains)
      .where(inArray(companyDomains.companyId, owningCompany)),
    db.select().from(logos).where(inArray(logos.companyId, owningCompany)),
    db.select().from(companyTickers).where(sql`${companyTickers.ticker} IN (SELECT value FROM json_each(${tickers}))`),
    db
      .select({ ticker: companyTickers.ticker, companyId: companyTickers.companyId })
      .from(companyTickers)
      .where(inArray(companyTickers.companyId, owningCompany)),
  ]);
  const byId = new Map<number, CompanyState>();
  const company = (id: number) => {
    let state = byId.get(id);
    if (!state) byId.set(id, (state = { id, primaryDomain: "", row: undefined, domains: [], tickers: [], logos: new Map() }));
    return state;
  };
  for (const row of companyRows) company(row.id).row = row;
  for (const row of domainRows) {
    const owner = company(row.companyId);
    owner.domains.push(row.domain);
    if (row.isPrimary) owner.primaryDomain = row.domain;
  }
  for (const row of heldTickers) company(row.companyId).tickers.push(row.ticker);
  for (const row of logoRows) {
    const owner = company(row.companyId);
    const keys = logoObjectKeys(withKeys(row, owner.primaryDomain));
    owner.logos.set(logoSlot(row.variant, row.sourceSet), {
      id: row.id,
      sourceHash: row.sourceHash,
      licence: row.licence,
      renditionsVersion: row.renditions.version,
      sourceUrl: row.sourceUrl,
      fetchedAt: row.fetchedAt,
      storedKeys: keys,
      keys,
    });
  }
  const state: CatalogueState = { domains: new Map(owners.map((o) => [o.domain, company(o.companyId)])), tickers: new Map() };
  for (const t of tickerRows) holdTicker(state, { symbol: t.ticker, exchange: t.exchange, company: company(t.companyId) });
  return state;
}

/**
 * Decides each input in turn and records its statements, updating the state as its write
 * would: later inputs see the companies, domains, tickers and logos of earlier ones.
 */
async function planWrites(db: CatalogueDb, state: CatalogueState, items: LogoImport[], now: Date): Promise<WritePlan> {
  const plan: WritePlan = { decisions: [], statements: [], logos: [] };
  for (const { input, image } of items) {
    // Which company the row is about: the one owning any of its domains, or a new one.
    const owned = input.domains.filter((d) => state.domains.has(d));
    const owners = [...new Set(owned.map((d) => state.domains.get(d)!))];
    if (owners.length > 1) {
      plan.decisions.push(fail("conflict", `domains ${owned.sort().join(", ")} belong to different companies`));
      continue;
    }
    const company = owners[0];
    const existingLogo = company?.logos.get(logoSlot(input.variant, input.sourceSet));
    const tickerHolder = input.ticker && otherHolder(state, input.ticker, company);
    if (tickerHolder) {
      const as = tickerHolder.symbol === input.ticker!.symbol ? "" : ` as ${tickerHolder.symbol}`;
      plan.decisions.push(
        fail(
          "conflict",
          `ticker ${input.ticker!.symbol} already belongs to another company${as}${tickerHolder.exchange ? ` on ${tickerHolder.exchange}` : ""}`,
        ),
      );
      continue;
    }

    // What differs from the stored state. Domains, aliases and tickers only ever accumulate.
    const newDomains = input.domains.filter((d) => !state.domains.has(d));
    const stored = company?.row;
    const aliases = [...new Set([...(stored?.aliases ?? []), ...input.aliases])].filter((a) => a !== input.name);
    // A company discovery made ranks below the catalogue's (DISCOVERED_PROMINENCE); imported, it
    // takes the catalogue's standing even when the row names no prominence of its own.
    const prominence = input.prominence ?? (input.keepCompany ? stored?.prominence : Math.max(stored?.prominence ?? 0, 0)) ?? 0;
    const companyChanged =
      !stored ||
      (!input.keepCompany &&
        (stored.name !== input.name ||
          JSON.stringify(stored.aliases) !== JSON.stringify(aliases) ||
          (input.brandColor !== undefined && stored.brandColor !== input.brandColor) ||
          stored.prominence !== prominence));
    const { ticker } = input;
    const tickerMissing =
      ticker !== undefined && !state.tickers.get(ticker.symbol)?.some((h) => h.symbol === ticker.symbol && h.exchange === ticker.exchange);
    const licence = input.licence ?? existingLogo?.licence ?? "unknown";
    // Renditions made by an older renditions version are made again, as if the file had changed.
    const imageChanged =
      !existingLogo || existingLogo.sourceHash !== input.sourceHash || existingLogo.renditionsVersion < RENDITIONS_VERSION;
    const provenanceChanged =
      input.provenance !== undefined &&
      (existingLogo?.sourceUrl !== input.provenance.sourceUrl ||
        existingLogo?.fetchedAt?.getTime() !== input.provenance.fetchedAt.getTime());
    const logoRowChanged = imageChanged || existingLogo.licence !== licence || provenanceChanged;

    if (company && existingLogo && !companyChanged && newDomains.length === 0 && !tickerMissing && !logoRowChanged) {
      plan.decisions.push(ok({ outcome: "unchanged", company, logo: existingLogo }));
      continue;
    }

    // Objects go under fresh keys nothing references yet; they are put before the batch runs.
    const primaryDomain = company?.primaryDomain ?? input.domains[0]!;
    let put: LogoState["put"];
    if (imageChanged) {
      const prepared = await image();
      if (!prepared.ok) {
        plan.decisions.push(prepared);
        continue;
      }
      put = storedImage({ primaryDomain, variant: input.variant, sourceSet: input.sourceSet }, prepared.value);
    }

    // Where the company stands in the search prefix lists before this input's write.
    const listedBefore: ListedCompany | null = company?.row ? listed(company.row, company.tickers) : null;

    // Rows. A new company's id is not known before the batch runs; D1 runs a batch as one
    // serialised transaction, so right after its insert the new company is the one with the
    // highest id, and later on the one owning its primary domain.
    const { statements } = plan;
    const companyRef: SQL | number = company ? referenceTo(company) : sql`(SELECT max(${companies.id}) FROM ${companies})`;
    const companyValues = {
      name: input.name,
      nameKey: nameKey(input.name),
      aliases,
      prominence,
      updatedAt: now,
      ...(input.brandColor !== undefined ? { brandColor: input.brandColor } : {}),
    };
    const owner: CompanyState = company ?? {
      id: undefined,
      createdBy: statements.length,
      primaryDomain,
      row: undefined,
      domains: [],
      tickers: [],
      logos: new Map(),
    };
    if (!company)
      statements.push(
        db
          .insert(companies)
          .values({ ...companyValues, createdAt: now })
          .returning({ id: companies.id }),
      );
    else if (companyChanged) statements.push(db.update(companies).set(companyValues).where(eq(companies.id, companyRef)));
    if (companyChanged) owner.row = { brandColor: null, ...owner.row, ...companyValues };
    for (const [index, domain] of newDomains.entries()) {
      statements.push(db.insert(companyDomains).values({ domain, companyId: companyRef as number, isPrimary: !company && index === 0 }));
      state.domains.set(domain, owner);
      owner.domains.push(domain);
    }
    if (ticker && tickerMissing) {
      statements.push(
        db.insert(companyTickers).values({ ticker: ticker.symbol, exchange: ticker.exchange, companyId: companyRef as number }),
      );
      holdTicker(state, { ...ticker, company: owner });
      owner.tickers.push(ticker.symbol);
    }
    // The search prefix lists follow the company's name, aliases, domains, tickers and prominence.
    if (companyChanged || newDomains.length > 0 || tickerMissing) {
      statements.push(...searchPrefixUpkeep(db, companyRef, listedBefore, listed(owner.row!, owner.tickers)));
    }
    let logo = existingLogo;
    if (logoRowChanged) {
      const logoValues = {
        licence,
        updatedAt: now,
        ...(input.provenance ? { sourceUrl: input.provenance.sourceUrl, fetchedAt: input.provenance.fetchedAt } : {}),
        ...(put ? { ...put.columns, sourceHash: input.sourceHash } : {}),
      };
      if (existingLogo) {
        const which =
          existingLogo.id !== undefined
            ? eq(logos.id, existingLogo.id)
            : and(eq(logos.companyId, companyRef), eq(logos.variant, input.variant), eq(logos.sourceSet, input.sourceSet));
        statements.push(db.update(logos).set(logoValues).where(which));
      } else {
        logo = {
          id: undefined,
          createdBy: statements.length,
          sourceHash: input.sourceHash,
          licence,
          renditionsVersion: RENDITIONS_VERSION,
          sourceUrl: null,
          fetchedAt: null,
          storedKeys: [],
          keys: [],
        };
        owner.logos.set(logoSlot(input.variant, input.sourceSet), logo);
        statements.push(
          db
            .insert(logos)
            .values({
              ...put!.columns,
              ...logoValues,
              sourceHash: input.sourceHash,
              companyId: companyRef as number,
              variant: input.variant,
              sourceSet: input.sourceSet,
              createdAt: now,
            })
            .returning({ id: logos.id }),
        );
      }
      logo!.licence = licence;
      if (input.provenance) Object.assign(logo!, { sourceUrl: input.provenance.sourceUrl, fetchedAt: input.provenance.fetchedAt });
      if (put) {
        logo!.sourceHash = input.sourceHash;
        logo!.renditionsVersion = put.image.renditions.version;
        logo!.keys = put.objectKeys;
        // An image replaced again within this write is never put at all.
        logo!.put = put;
        // By the primary domain, not by companyRef: a new company's "the latest company" would
        // name another one once this batch has failed. By what names the new keys (content
        // hash, renditions version, format), not by this write's time: a writer racing this
        // one (discovery and `admin discover` on one new domain) may have stored the same
        // content-addressed keys, which its rows now reference; and a row as it was before
        // this write (another version, another format) references none of them.
        logo!.witness = and(
          eq(logos.companyId, referenceTo(owner)),
          eq(logos.variant, input.variant),
          eq(logos.sourceSet, input.sourceSet),
          eq(logos.format, put.image.format),
          // Compared as text: drizzle's column encoding throws on a hash that is not 64 hex digits.
          sql`lower(hex(${logos.contentHash})) = ${put.image.contentHash}`,
          sql`json_extract(${logos.renditions}, '$.version') = ${put.image.renditions.version}`,
        );
      }
      if (!plan.logos.includes(logo!)) plan.logos.push(logo!);
    }
    plan.decisions.push(ok({ outcome: !company || !existingLogo ? "created" : "updated", company: owner, logo: logo! }));
  }
  // A slot's last image is the one its row names: an earlier one replaced within this write is never written.
  plan.witness = plan.logos.find((logo) => logo.put)?.witness;
  return plan;
}

function listed(row: NonNullable<CompanyState["row"]>, tickers: string[]): ListedCompany {
  return {
    prefixes: searchPrefixesOf({ nameKey: row.nameKey, name: row.name, aliases: row.aliases, tickers }),
    prominence: row.prominence,
  };
}

/** A company of the catalogue by id; one created earlier in this write by its primary domain. */
function referenceTo(company: CompanyState): SQL | number {
  return (
    company.id ?? sql`(SELECT ${companyDomains.companyId} FROM ${companyDomains} WHERE ${companyDomains.domain} = ${company.primaryDomain})`
  );
}

/** Objects first, then the rows in one batch, the replaced objects retired in it (retiredObjects.ts). */
async function writePlan(db: CatalogueDb, bucket: ObjectStore, plan: WritePlan, now: Date): Promise<Result<true>> {
  if (plan.statements.length === 0) return ok(true);
  const puts = plan.logos.filter((logo) => logo.put);
  // Keys the catalogue already references are never deleted on failure: an image may come
  // back under the keys it had. Nor are keys another write still needs: those of an image
  // retired (redirects cached before its replacement lead to them for two days), and those a
  // racing writer's committed rows name (the witness finds them, content-addressed as they
  // are). Whatever cannot be told stays: an orphan costs storage, a missing object breaks a logo.
  const unwind = async () => {
    if (plan.witness && (await rowsWritten(db, plan.witness))) return;
    const keys = puts.flatMap((logo) => logo.keys.filter((key) => !logo.storedKeys.includes(key)));
    const retired = await retiredAmong(db, keys);
    await deleteAll(
      bucket,
      keys.filter((key) => !retired.has(key)),
    );
  };
  const stored = await putImages(
    bucket,
    puts.map((logo) => logo.put!),
  );
  if (!stored.ok) {
    await unwind().catch(() => undefined);
    return stored;
  }

  // The replaced images' objects are unreferenced once the batch commits; redirects cached before it still lead to them.
  const replaced = plan.logos.flatMap((logo) => logo.storedKeys.filter((key) => !logo.keys.includes(key)));
  const statements = [
    ...plan.statements,
    ...retirements(
      db,
      replaced,
      puts.flatMap((logo) => logo.keys),
      now,
    ),
  ];
  let results: unknown[];
  try {
    results = await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  } catch (error) {
    await unwind().catch(() => undefined);
    return fail(isTransientDatabaseFailure(error) ? "unavailable" : "internal", `catalogue write failed: ${rootCause(error)}`);
  }

  // New rows reported their ids through RETURNING.
  const returnedId = (index: number) => (results[index] as Array<{ id: number }>)[0]!.id;
  for (const decision of plan.decisions) {
    if (!decision.ok) continue;
    const { company, logo } = decision.value;
    if (company.id === undefined) company.id = returnedId(company.createdBy!);
    if (logo.id === undefined) logo.id = returnedId(logo.createdBy!);
  }

  await sweep(db, bucket, now);
  return ok(true);
}

/**
 * Whether a write that reported an error was applied all the same: over a remote connection
 * D1 can apply a batch and the answer be lost. Its new objects must then stay, or its rows
 * would name deleted objects, and a retry, finding the rows unchanged, would not put them
 * again. A batch is one transaction, so one row it writes tells: found by its indexed slot and
 * what names the new keys (planWrites' witness), it also tells of a racing writer's row that
 * names the same content-addressed keys. When even that cannot be read, the objects stay: an
 * orphan costs storage, a missing object breaks a logo.
 */
async function rowsWritten(db: CatalogueDb, row: SQL | undefined): Promise<boolean> {
  try {
    return (await db.select({ id: logos.id }).from(logos).where(row).limit(1)).length > 0;
  } catch {
    return true;
  }
}

/**
 * A stored logo's image prepared again from its kept original (`npm run rerender`), company data
 * untouched. The same order as an import: new objects under their own keys, then the row, then
 * the replaced objects. A logo already at `image`'s renditions version with the same master is
 * left as it is, so running it again changes nothing.
 */
export async function replaceLogoImage(
  db: CatalogueDb,
  bucket: ObjectStore,
  logo: Logo,
  image: PreparedImage,
  now = new Date(),
): Promise<Result<ImportOutcome>> {
  if (logo.renditions.version === image.renditions.version && logo.contentHash === image.contentHash) return ok("unchanged");
  const stored = storedImage(logo, image);
  const kept = stored.objectKeys;
  const unwind = () =>
    deleteAll(
      bucket,
      kept.filter((key) => !logoObjectKeys(logo).includes(key)),
    ).catch(() => undefined);
  const put = await putImages(bucket, [stored]);
  if (!put.ok) {
    await unwind();
    return put;
  }
  try {
    // Only the row as it was read: an import that replaced the image meanwhile wins.
    const updated = await db
      .update(logos)
      .set({ ...stored.columns, updatedAt: now })
      .where(and(eq(logos.id, logo.id), eq(logos.contentHash, logo.contentHash), eq(logos.sourceHash, logo.sourceHash)))
      .returning({ id: logos.id });
    if (updated.length === 0) {
      await unwind();
      return fail("conflict", `logo ${logo.id} changed while it was re-rendered`);
    }
  } catch (error) {
    if (!(await rowsWritten(db, and(eq(logos.id, logo.id), eq(logos.updatedAt, now))))) await unwind();
    return fail("internal", `catalogue write failed: ${rootCause(error)}`);
  }
  // Retired once the row names the new image; should that fail, they stay as orphans (an orphan costs storage, a missing object breaks a logo).
  await db
    .batch(
      retirements(
        db,
        logoObjectKeys(logo).filter((key) => !kept.includes(key)),
        kept,
        now,
      ) as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]],
    )
    .catch((error) => log.error("catalogue.replaced_objects_not_retired", { logoId: logo.id, error }));
  await sweep(db, bucket, now);
  return ok("updated");
}

/**
 * `name` folded for exact-name lookups, as search folds words (foldText), without the spaces:
 * "Coca-Cola" → "cocacola", "Yapı Kredi" → "yapikredi".
 */
export function nameKey(name: string): string {
  return foldText(name).replaceAll(" ", "");
}

/** A prepared image as the catalogue stores it: the row's columns, and the keys of its objects. */
interface StoredImage {
  columns: Pick<LogoRow, "format" | "renditions" | "width" | "height" | "bytes" | "contentHash" | "tone">;
  keys: LogoKeys;
  /** Every object key of the image (logoObjectKeys): what a write puts, and an unwind deletes. */
  objectKeys: string[];
  image: PreparedImage;
}

const PNG = { contentType: "image/png" };
/**
 * An original is the file as it came (a discovered SVG is a stranger's, unsanitised). The asset
 * route never serves it, but where CDN_URL's zone serves the bucket whole, anyone who rewrites a
 * redirect's key can ask for it: as an attachment of no image type, a browser downloads it and
 * never renders it on that origin.
 */
const ORIGINAL = { contentType: "application/octet-stream", contentDisposition: "attachment" };

/** Every logo row is written from here: its keys are derived from the same parts when it is read (withKeys). */
function storedImage(logo: { primaryDomain: string; variant: LogoVariant; sourceSet: string }, image: PreparedImage): StoredImage {
  const { primaryDomain, variant, sourceSet } = logo;
  const keys = logoKeys({ primaryDomain, variant, sourceSet, contentHash: image.contentHash }, image.format);
  return {
    columns: {
      format: image.format,
      renditions: image.renditions,
      width: image.width,
      height: image.height,
      bytes: image.files.master.byteLength,
      contentHash: image.contentHash,
      tone: image.tone,
    },
    keys,
    objectKeys: logoObjectKeys({ ...keys, renditions: image.renditions }),
    image,
  };
}

/** At most this many puts at once: a write of hundreds of logos puts thousands of objects. */
export const PUTS_AT_ONCE = 32;

async function putImages(bucket: ObjectStore, images: StoredImage[]): Promise<Result<true>> {
  const objects = images.flatMap(({ keys, image }) => {
    // Renditions carry their size, so the asset route can decide on a resize from a HEAD alone.
    const png = { httpMetadata: PNG, customMetadata: { width: String(image.width), height: String(image.height) } };
    const original = { httpMetadata: ORIGINAL };
    const { version } = image.renditions;
    const all: Array<[key: string, body: Uint8Array | undefined | null, options: R2PutOptions]> = [
      [keys.masterKey, image.files.master, png],
      ...derivedRenditions.map((rendition): [string, Uint8Array | undefined, R2PutOptions] => [
        renditionKey(keys.masterKey, rendition, version),
        image.files[rendition],
        png,
      ]),
      [
        vectorKey(keys.masterKey, version),
        image.renditions.vector ? image.vector : null,
        { httpMetadata: { contentType: "image/svg+xml" } },
      ],
      [keys.originalKey, image.original, original],
    ];
    return all.filter((object): object is [string, Uint8Array, R2PutOptions] => Boolean(object[1]));
  });
  // After a failure no put starts, and the answer waits for those under way: an unwind that
  // ran beside them would leave their objects behind.
  let next = 0;
  let failure: unknown;
  await Promise.all(
    Array.from({ length: Math.min(PUTS_AT_ONCE, objects.length) }, async () => {
      while (failure === undefined && next < objects.length) {
        const [key, body, options] = objects[next++]!;
        await bucket.put(key, body, options).catch((error: unknown) => {
          failure ??= error;
        });
      }
    }),
  );
  // The objects are this write's own bytes: a store that refuses them is the store's failure.
  if (failure !== undefined) return fail("unavailable", `object storage write failed: ${(failure as Error).message}`);
  return ok(true);
}

/** Retired objects whose time has come go after a write; a sweep that fails is the next write's. */
async function sweep(db: CatalogueDb, bucket: ObjectStore, now: Date): Promise<void> {
  await sweepRetired(db, bucket, now).catch((error) => log.error("catalogue.retired_sweep_failed", { error }));
}

/** R2 deletes at most 1,000 keys a call. */
async function deleteAll(bucket: ObjectStore, keys: string[]): Promise<void> {
  for (let at = 0; at < keys.length; at += 1000) await bucket.delete(keys.slice(at, at + 1000));
}
