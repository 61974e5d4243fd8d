import { dependency } from "../lib/dependencies";
import { greyKeyParts } from "./objectKeys";
import { decodeStoredPng, encodePng } from "./png";
import { greyOf } from "./renditions";
import { log } from "../lib/log";

/**
 * Greyscale renditions made on the first request for them. Few logos are ever asked for in
 * greyscale, so storing every logo's greyscale at import spent half of its objects and PNG
 * encodings on files most never serve (docs/assets.md). A greyscale rendition missing from
 * the bucket is made here from the colour rendition beside it (objectKeys.ts, greyKeyParts), exactly as
 * the import would have made it (renditions.ts, greyOf), and stored under its own key, so that it
 * is made once and then served like any other object.
 *
 * Only a key the catalogue names is made (the caller's `named`: src/catalogue/queries.ts,
 * namesGrey), so no request can leave an object behind that no logo row names. Masters over
 * GREY_ON_DEMAND_MAX_PIXELS keep their greyscale stored at import: decoding one in the isolate
 * would take it some 100 MB. Two requests at once may both make the same rendition; both write
 * the very same bytes.
 */
export const GREY_ON_DEMAND_MAX_PIXELS = 2_000_000;

export interface MadeGrey {
  object: R2Object;
  bytes: Uint8Array;
}

/**
 * The greyscale rendition `key` names, made and stored; null when it names none, the catalogue
 * does not name it, or its colour rendition is missing.
 */
export async function makeGrey(bucket: R2Bucket, key: string, named: (key: string) => Promise<boolean>): Promise<MadeGrey | null> {
  const parts = greyKeyParts(key);
  if (!parts || !(await named(key))) return null;
  const { colourKey } = parts;
  const colour = await dependency("object storage", async () => {
    const object = await bucket.get(colourKey);
    return object && { png: new Uint8Array(await object.arrayBuffer()), customMetadata: object.customMetadata };
  });
  if (!colour) return null;
  const pixels = decodeStoredPng(colour.png, GREY_ON_DEMAND_MAX_PIXELS);
  if (!pixels.ok) {
    log.error("images.grey_not_made", { key: colourKey, detail: pixels.error.message });
    return null;
  }
  const bytes = encodePng(greyOf(pixels.value));
  const options = {
    httpMetadata: { contentType: "image/png" },
    ...(colour.customMetadata ? { customMetadata: colour.customMetadata } : {}),
  };
  const object = await dependency("object storage", () => putPersisting(bucket, key, bytes, options));
  // The logo may have gone while this was made (its objects swept, a discovery forgotten): a
  // greyscale put after its colour rendition was deleted would outlive it, named by nothing.
  if (!(await dependency("object storage", bucket.head(colourKey)))) {
    await dependency("object storage", bucket.delete(key));
    return null;
  }
  return { object, bytes };
}

/**
 * A put tried again a few times, a little later each: the one write a read route makes. Locally
 * it can meet another process writing the same bucket's SQLite (the first start's seeding, beside
 * the dev server), which refuses it for a moment; the importer's writer waits such locks out too.
 */
export async function putPersisting(bucket: R2Bucket, key: string, bytes: Uint8Array, options: R2PutOptions): Promise<R2Object> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await bucket.put(key, bytes, options);
    } catch (error) {
      if (attempt >= PUT_ATTEMPTS) throw error;
      await scheduler.wait(PUT_RETRY_MS * attempt);
    }
  }
}

const PUT_ATTEMPTS = 5;
const PUT_RETRY_MS = 100;
