import type { LogoRow, NameSource } from "../../schema";
import { type LogoKeys, logoKeys } from "../images/objectKeys";

/**
 * What the catalogue's readers hand out: a company as found, and a logo with the R2 keys of its
 * objects. Both sides of the catalogue import these, and the rooms that serve them.
 */

/** A company as the finders return it. */
export interface CompanyMatch {
  companyId: number;
  companyName: string;
  /**
   * Where the name comes from: the catalogue's own, what a discovered company's site says of
   * itself (agreeing with its domain), or its domain's (src/discovery/siteName.ts).
   */
  nameSource: NameSource;
  /** The company's primary domain. */
  domain: string;
  /** `#rrggbb`, where the catalogue knows it. */
  brandColor: string | null;
}

/** A logo as the catalogue reads it: its row, with its keys. */
export type Logo = LogoRow & LogoKeys;

/**
 * A stored row with its keys: the one place a read logo gets them. `primaryDomain` is its
 * company's, read in the same statement as the row (or the one that found the company).
 */
export function withKeys(row: LogoRow, primaryDomain: string): Logo {
  const { variant, sourceSet, contentHash, format } = row;
  return { ...row, ...logoKeys({ primaryDomain, variant, sourceSet, contentHash }, format) };
}
