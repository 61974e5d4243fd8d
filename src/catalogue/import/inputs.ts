import type { LogoTone, LogoVariant, NameSource } from "../../../schema";
import type { RenditionSet } from "../../images/objectKeys";
import type { RenditionFiles } from "../../images/renditionFiles";
import type { Result } from "../../lib/errors";
import type { Identifier } from "../identifiers";

/** What an import is given: a company and its logo as an input row, with the image prepared from it. */
export interface CompanyLogoInput {
  name: string;
  /**
   * Where the name comes from; absent is `catalogue`. A company named by its site or its domain
   * (discovery) is found by name only as its domain is named (domainNameKey), never by what
   * its site says.
   */
  nameSource?: NameSource | undefined;
  /** Normalised hosts, primary first. */
  domains: string[];
  ticker?: { symbol: string; exchange: string } | undefined;
  /** ISINs and crypto symbols, canonical (../identifiers.ts); like domains and tickers, they only accumulate. */
  identifiers?: Identifier[] | undefined;
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
  provenance?: { sourceUrl: string; fetchedAt: Date; etag?: string | null; lastModified?: string | null } | undefined;
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
