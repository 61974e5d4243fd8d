import { DAY_MS } from "../lib/time";
/**
 * Where an image answer comes from (`X-Logo-Source`): a logo of the catalogue as imported, a
 * logo the service found on the domain's own site, or a generated monogram standing in for a
 * logo that does not exist.
 */
export type LogoSource = "catalogue" | "discovered" | "monogram";

/** The source set discovered logos are stored under (R2 keys and `logos.source_set`). */
export const DISCOVERED_SOURCE_SET = "discovered";

/**
 * Where a company that discovery created stands: below the catalogue's lowest prominence (0),
 * so that a site's <title> never ranks above a catalogue company of the same name in name
 * lookups and search. An import of the company's domain gives it the catalogue's standing.
 */
export const DISCOVERED_PROMINENCE = -1;

export const logoSourceOf = (sourceSet: string): "catalogue" | "discovered" =>
  sourceSet === DISCOVERED_SOURCE_SET ? "discovered" : "catalogue";

/** Discovered logos are fetched again in the background once they are this old. */
export const DISCOVERED_REFRESH_MS = 30 * DAY_MS;
