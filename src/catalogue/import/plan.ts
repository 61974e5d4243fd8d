import { and, eq, inArray, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type Company, companies, companyDomains, companyIdentifiers, companyTickers, logos } from "../../../schema";
import { logoObjectKeys } from "../../images/objectKeys";
import { withKeys } from "../entities";
import { RENDITIONS_VERSION } from "../../images/renditions";
import type { CatalogueDb } from "../../lib/db";
import { fail, ok, type Result } from "../../lib/errors";
import { domainNameKey, nameKey, tickerSpellings } from "../names";
import { type ListedCompany, searchPrefixesOf, searchPrefixUpkeep } from "../searchPrefixes";
import type { Identifier } from "../identifiers";
import type { CompanyLogoInput, ImportOutcome, LogoImport } from "./inputs";
import { type StoredImage, storedImage } from "./storedImage";

/**
 * Deciding an import: what the catalogue holds of the companies the inputs name, read in one
 * round trip (readCatalogue), and each input decided in order against it as the inputs before
 * it leave it (planWrites): which company, domains, tickers, identifiers and logo rows to write, and which
 * objects to put and retire. Nothing is written here (./write.ts does).
 */
/** A company as the inputs decided so far leave it. */
export interface CompanyState {
  /** Unknown for a company created by this write until the batch has run. */
  id: number | undefined;
  /** The batch statement whose RETURNING gives the id of a created company. */
  createdBy?: number;
  primaryDomain: string;
  row: Pick<Company, "name" | "nameKey" | "nameSource" | "aliases" | "brandColor" | "prominence"> | undefined;
  /** Every domain and ticker symbol it holds: with the row, what its search prefix lists follow. */
  domains: string[];
  tickers: string[];
  /** By variant and source set. */
  logos: Map<string, LogoState>;
}

export interface LogoState {
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

export interface CatalogueState {
  domains: Map<string, CompanyState>;
  /** Tickers held, under every spelling a lookup tries for them (tickerSpellings). */
  tickers: Map<string, HeldTicker[]>;
  /** ISINs and crypto symbols held (identifierKey), by their company. */
  identifiers: Map<string, CompanyState>;
}

const identifierKey = ({ scheme, value }: Identifier) => `${scheme} ${value}`;
const identifierLabel = { isin: "ISIN", crypto: "crypto symbol" } as const;

interface HeldTicker {
  symbol: string;
  exchange: string;
  company: CompanyState;
}

export type Decision = Result<{ outcome: ImportOutcome; company: CompanyState; logo: LogoState }>;

export interface WritePlan {
  decisions: Decision[];
  statements: BatchItem<"sqlite">[];
  logos: LogoState[];
  /** A logo row as the batch writes it, by its indexed slot: whether the batch was applied (rowsWritten). */
  witness?: SQL | undefined;
}

const logoSlot = (variant: string, sourceSet: string) => `${variant} ${sourceSet}`;

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
export async function readCatalogue(db: CatalogueDb, inputs: CompanyLogoInput[]): Promise<CatalogueState> {
  const named = sql`(SELECT value FROM json_each(${JSON.stringify([...new Set(inputs.flatMap((i) => i.domains))])}))`;
  // Every listing of any spelling: which of them conflict is otherHolder's to say.
  const tickers = JSON.stringify([...new Set(inputs.flatMap((i) => (i.ticker ? tickerCandidates(i.ticker.symbol) : [])))]);
  const owningCompany = db.select({ id: companyDomains.companyId }).from(companyDomains).where(inArray(companyDomains.domain, named));
  // Each scheme's values, read on the table's key (scheme, value).
  const asked = inputs.flatMap((i) => i.identifiers ?? []);
  const valuesOf = (scheme: Identifier["scheme"]) =>
    sql`(SELECT value FROM json_each(${JSON.stringify([...new Set(asked.filter((i) => i.scheme === scheme).map((i) => i.value))])}))`;
  const [owners, companyRows, domainRows, logoRows, tickerRows, heldTickers, identifierRows] = await db.batch([
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
    db
      .select()
      .from(companyIdentifiers)
      .where(
        or(
          and(eq(companyIdentifiers.scheme, "isin"), inArray(companyIdentifiers.value, valuesOf("isin"))),
          and(eq(companyIdentifiers.scheme, "crypto"), inArray(companyIdentifiers.value, valuesOf("crypto"))),
        ),
      ),
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
  const state: CatalogueState = {
    domains: new Map(owners.map((o) => [o.domain, company(o.companyId)])),
    tickers: new Map(),
    identifiers: new Map(identifierRows.map((row) => [identifierKey(row), company(row.companyId)])),
  };
  for (const t of tickerRows) holdTicker(state, { symbol: t.ticker, exchange: t.exchange, company: company(t.companyId) });
  return state;
}

/**
 * Decides each input in turn and records its statements, updating the state as its write
 * would: later inputs see the companies, domains, tickers and logos of earlier ones.
 */
export async function planWrites(db: CatalogueDb, state: CatalogueState, items: LogoImport[], now: Date): Promise<WritePlan> {
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
    const identifiers = [...new Map((input.identifiers ?? []).map((i) => [identifierKey(i), i])).values()];
    const heldElsewhere = identifiers.find((i) => {
      const holder = state.identifiers.get(identifierKey(i));
      return holder !== undefined && holder !== company;
    });
    if (heldElsewhere) {
      plan.decisions.push(
        fail("conflict", `${identifierLabel[heldElsewhere.scheme]} ${heldElsewhere.value} already belongs to another company`),
      );
      continue;
    }

    // What differs from the stored state. Domains, aliases, tickers and identifiers only ever accumulate.
    const newDomains = input.domains.filter((d) => !state.domains.has(d));
    const stored = company?.row;
    const aliases = [...new Set([...(stored?.aliases ?? []), ...input.aliases])].filter((a) => a !== input.name);
    // A company discovery made ranks below the catalogue's (DISCOVERED_PROMINENCE); imported, it
    // takes the catalogue's standing even when the row names no prominence of its own.
    const prominence = input.prominence ?? (input.keepCompany ? stored?.prominence : Math.max(stored?.prominence ?? 0, 0)) ?? 0;
    const nameSource = input.nameSource ?? "catalogue";
    const companyChanged =
      !stored ||
      (!input.keepCompany &&
        (stored.name !== input.name ||
          stored.nameSource !== nameSource ||
          JSON.stringify(stored.aliases) !== JSON.stringify(aliases) ||
          (input.brandColor !== undefined && stored.brandColor !== input.brandColor) ||
          stored.prominence !== prominence));
    const { ticker } = input;
    const tickerMissing =
      ticker !== undefined && !state.tickers.get(ticker.symbol)?.some((h) => h.symbol === ticker.symbol && h.exchange === ticker.exchange);
    const newIdentifiers = identifiers.filter((i) => !state.identifiers.has(identifierKey(i)));
    const licence = input.licence ?? existingLogo?.licence ?? "unknown";
    // Renditions made by an older renditions version are made again, as if the file had changed.
    const imageChanged =
      !existingLogo || existingLogo.sourceHash !== input.sourceHash || existingLogo.renditionsVersion < RENDITIONS_VERSION;
    const provenanceChanged =
      input.provenance !== undefined &&
      (existingLogo?.sourceUrl !== input.provenance.sourceUrl ||
        existingLogo?.fetchedAt?.getTime() !== input.provenance.fetchedAt.getTime());
    const logoRowChanged = imageChanged || existingLogo.licence !== licence || provenanceChanged;

    if (
      company &&
      existingLogo &&
      !companyChanged &&
      newDomains.length === 0 &&
      !tickerMissing &&
      newIdentifiers.length === 0 &&
      !logoRowChanged
    ) {
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
      nameSource,
      // What the site says names a discovered company for show; it is found by its domain's name.
      nameKey: nameSource === "catalogue" ? nameKey(input.name) : domainNameKey(primaryDomain),
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
    if (newIdentifiers.length > 0) {
      statements.push(db.insert(companyIdentifiers).values(newIdentifiers.map((i) => ({ ...i, companyId: companyRef as number }))));
      for (const identifier of newIdentifiers) state.identifiers.set(identifierKey(identifier), owner);
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
        // The image as this write leaves it was seen now: written, or fetched again unchanged.
        verifiedAt: now,
        ...(input.provenance
          ? {
              sourceUrl: input.provenance.sourceUrl,
              fetchedAt: input.provenance.fetchedAt,
              sourceEtag: input.provenance.etag ?? null,
              sourceLastModified: input.provenance.lastModified ?? null,
            }
          : {}),
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
