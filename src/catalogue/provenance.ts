import { DAY_MS } from "../lib/time";
/**
 * Where an image answer comes from (`X-Logo-Source`): a logo of the catalogue as imported (or
 * as an operator put it right), a logo the service found on the domain's own site, one the
 * domain's verified owner set, the asking account's own override, or a generated monogram
 * standing in for a logo that does not exist.
 */
export type LogoSource = "catalogue" | "discovered" | "owner" | "override" | "monogram";
/** The sources a stored logo can have. */
export type StoredLogoSource = Exclude<LogoSource, "monogram">;

/** The source set discovered logos are stored under (R2 keys and `logos.source_set`). */
export const DISCOVERED_SOURCE_SET = "discovered";

/**
 * Where a company that discovery created stands: below the catalogue's lowest prominence (0),
 * so that a site's <title> never ranks above a catalogue company of the same name in name
 * lookups and search. An import of the company's domain gives it the catalogue's standing.
 */
export const DISCOVERED_PROMINENCE = -1;

/** The source set of logos the domain's verified owner set (docs/corrections.md): ranked before every other. */
export const OWNER_SOURCE_SET = "owner";

/** The source set of a logo an operator put in place answering a report (`reports resolve --action replace`): the catalogue's own, ranked first. */
export const CORRECTED_SOURCE_SET = "corrected";

/** Source sets of accounts' overrides (`override-<tag>`): never rows of `logos`, only keys of their objects. */
export const OVERRIDE_SOURCE_SET_PREFIX = "override-";

export const logoSourceOf = (sourceSet: string): StoredLogoSource =>
  sourceSet === DISCOVERED_SOURCE_SET
    ? "discovered"
    : sourceSet === OWNER_SOURCE_SET
      ? "owner"
      : sourceSet.startsWith(OVERRIDE_SOURCE_SET_PREFIX)
        ? "override"
        : "catalogue";

/** Discovered logos are fetched again in the background once they are this old. */
export const DISCOVERED_REFRESH_MS = 30 * DAY_MS;
