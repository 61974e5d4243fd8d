import type { LogoVariant } from "../../../schema";
import type { SourceSet } from "../../../src/licences/sources";

/** One logo a set offers for a brand, before the catalogue picks the best per variant. */
export interface SetLogo {
  variant: LogoVariant;
  /** The icon's name in its set, as the mapping spells it. */
  name: string;
  svg: string;
  licence: string;
  /** Drawn in the brand's own colours, rather than one colour we paint. */
  fullColour: boolean;
}

/** A brand icon set on npm, as the seed reads it. */
export interface BrandSet {
  source: SourceSet;
  /** The mapping's field (brands/*.jsonl) that names this set's icons. */
  field: string;
  has(name: string): boolean;
  /**
   * The logos among a brand's named icons, one per name that exists under a permitted
   * licence. Monochrome icons are painted in `colour` (black without one).
   */
  logos(names: readonly string[], colour: string | undefined): SetLogo[];
}

/**
 * Which variant an icon is: an explicit suffix decides (`-icon`; `-wordmark`, `-text`,
 * `-brand`), else a wide drawing, or a name whose `-icon` sibling the brand also lists, is
 * the wordmark.
 */
export function variantOf(name: string, width: number, height: number, siblings: readonly string[]): LogoVariant {
  if (/-icon$/.test(name)) return "icon";
  if (/-(wordmark|text|brand)(-color|-cn)?$/.test(name)) return "full";
  if (siblings.includes(`${name}-icon`) || width / height >= 1.5) return "full";
  return "icon";
}

/**
 * `-dark` and `-light` forms are colourings of a logo listed beside them: use them only when
 * the plain form is missing.
 */
export function withoutColourings(names: readonly string[]): string[] {
  const plain = names.filter((name) => !/-(dark|light)$/.test(name));
  return plain.length > 0 ? plain : [...names];
}
