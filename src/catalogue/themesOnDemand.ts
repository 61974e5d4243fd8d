import { settleRenditions, storedRenditions } from "./logos";
import type { CatalogueDb } from "../lib/db";
import { dependency } from "../lib/dependencies";
import { log } from "../lib/log";
import { GREY_ON_DEMAND_MAX_PIXELS, putPersisting } from "../images/greyOnDemand";
import { renditionKey } from "../images/objectKeys";
import { renditionSetOf } from "../images/renditionFiles";
import { decodeStoredPng, encodePng } from "../images/png";
import { RENDITIONS_VERSION, renditionPixels } from "../images/renditions";
import { renditionPutOptions } from "./import/storedImage";

/**
 * Light and dark renditions decided on the first lookup of a logo. The first start's seeding
 * stores each logo's master without deciding its themes (`renditions.pending`): the contrast
 * analysis and the theme renditions' encodings were more than half of its CPU, and most of the
 * bundled logos are never looked up on a developer's machine. The first lookup that resolves
 * such a logo decides them here from the stored master's pixels, exactly as an import would
 * have (../images/renditions.ts, renditionPixels), stores them under their own keys, and settles the
 * row; every lookup after it reads the settled row. Every other import decides them at once.
 *
 * Masters over THEMES_ON_DEMAND_MAX_PIXELS are decided at import whatever was asked: decoding
 * one in the isolate would take it some 100 MB. Two isolates may settle the same logo at once:
 * both write the very same bytes, and the row is settled once.
 */
export const THEMES_ON_DEMAND_MAX_PIXELS = GREY_ON_DEMAND_MAX_PIXELS;

/** What settling needs of a resolved logo. */
export interface UnsettledLogo {
  logoId: number;
  contentHash: string;
  masterKey: string;
  width: number;
  height: number;
}

/** Settlings under way in this isolate, by logo: a burst of first lookups decides once. */
const underWay = new Map<number, Promise<boolean>>();

/**
 * Decides and stores the themes of a logo whose row says they are pending, and settles the row.
 * True when the row is settled (here, or already by someone else): the caller reads it again.
 * False when it could not be (the row changed or went, its master is missing or unreadable, it
 * was stored by another renditions version): the lookup serves the master, as the row says.
 */
export function settleThemes(bucket: R2Bucket, db: CatalogueDb, logo: UnsettledLogo): Promise<boolean> {
  let settling = underWay.get(logo.logoId);
  if (!settling) {
    settling = settle(bucket, db, logo).finally(() => underWay.delete(logo.logoId));
    underWay.set(logo.logoId, settling);
  }
  return settling;
}

async function settle(bucket: R2Bucket, db: CatalogueDb, logo: UnsettledLogo): Promise<boolean> {
  // The row as it is now: another isolate may have settled it, an import replaced it.
  const stored = await storedRenditions(db, logo.logoId, logo.contentHash);
  if (!stored) return false;
  if (!stored.pending) return true;
  if (stored.version !== RENDITIONS_VERSION) return false;
  const master = await dependency("object storage", async () => {
    const object = await bucket.get(logo.masterKey);
    return object && new Uint8Array(await object.arrayBuffer());
  });
  const pixels = master && decodeStoredPng(master, THEMES_ON_DEMAND_MAX_PIXELS);
  if (!pixels?.ok) {
    log.error("catalogue.themes_not_decided", { logoId: logo.logoId, detail: pixels ? pixels.error.message : "master missing" });
    return false;
  }
  const decided = renditionPixels(pixels.value);
  const made = (["light", "dark"] as const).flatMap((page) => {
    const pagePixels = decided[page];
    return pagePixels ? [{ key: renditionKey(logo.masterKey, page, stored.version), bytes: encodePng(pagePixels) }] : [];
  });
  const options = renditionPutOptions(logo);
  await dependency("object storage", () => Promise.all(made.map(({ key, bytes }) => putPersisting(bucket, key, bytes, options))));
  const settled = renditionSetOf(decided, { vector: stored.vector });
  if (await settleRenditions(db, logo.logoId, logo.contentHash, settled)) return true;
  // The row changed while this was made (replaced, deleted, or settled by another isolate with
  // the same keys). Objects it does not name would be named by nothing: they go.
  const now = await storedRenditions(db, logo.logoId, logo.contentHash);
  if (now && !now.pending) return true;
  await dependency("object storage", () => bucket.delete(made.map(({ key }) => key)));
  return false;
}
