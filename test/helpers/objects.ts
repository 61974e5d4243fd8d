import { GREY_ON_DEMAND_MAX_PIXELS } from "../../src/images/greyOnDemand";
import { greyKeyParts, logoObjectKeys } from "../../src/images/objectKeys";
import type { Logo } from "../../src/catalogue/entities";

/**
 * The objects a write leaves for a logo: every key it names (logoObjectKeys) but the greyscale
 * renditions of a master of up to 2 megapixels, which are made on the first request for them.
 */
export function writtenObjectKeys(logo: Pick<Logo, "masterKey" | "originalKey" | "renditions" | "width" | "height">): string[] {
  const greyStored = logo.width * logo.height > GREY_ON_DEMAND_MAX_PIXELS;
  return logoObjectKeys(logo).filter((key) => greyStored || !greyKeyParts(key));
}
