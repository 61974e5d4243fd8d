import { dependency } from "../lib/dependencies";
import { colourOfGrey } from "./keys";
import { decodePngPixels, encodePng, pngHeader } from "./png";
import { greyOf } from "./renditions";

/**
 * Greyscale renditions made on the first request for them. Few logos are ever asked for in
 * greyscale, so storing every logo's greyscale at import spent half of its objects and PNG
 * encodings on files most never serve (README, Bulk loading). A greyscale rendition missing from
 * the bucket is made here from the colour rendition beside it (keys.ts, colourOfGrey), exactly as
 * the import would have made it (renditions.ts, greyOf), and stored under its own key, so that it
 * is made once and then served like any other object.
 *
 * Masters over GREY_ON_DEMAND_MAX_PIXELS keep their greyscale stored at import: decoding one in
 * the isolate would take it some 100 MB. Two requests at once may both make the same rendition;
 * both write the very same bytes.
 */
export const GREY_ON_DEMAND_MAX_PIXELS = 2_000_000;

export interface MadeGrey {
  object: R2Object;
  bytes: Uint8Array;
}

/** The greyscale rendition `key` names, made and stored; null when it names none, or its colour rendition is missing. */
export async function makeGrey(bucket: R2Bucket, key: string): Promise<MadeGrey | null> {
  const colourKey = colourOfGrey(key);
  if (!colourKey) return null;
  const colour = await dependency("object storage", async () => {
    const object = await bucket.get(colourKey);
    return object && { png: new Uint8Array(await object.arrayBuffer()), customMetadata: object.customMetadata };
  });
  if (!colour) return null;
  const { png } = colour;
  const header = pngHeader(png);
  if (!header.ok || header.value.width * header.value.height > GREY_ON_DEMAND_MAX_PIXELS) {
    console.error(`grey on demand: ${colourKey} is not a PNG of at most ${GREY_ON_DEMAND_MAX_PIXELS} pixels`);
    return null;
  }
  const pixels = decodePngPixels(png, GREY_ON_DEMAND_MAX_PIXELS);
  if (!pixels.ok) {
    console.error(`grey on demand: ${colourKey} could not be decoded: ${pixels.error.message}`);
    return null;
  }
  const bytes = encodePng(greyOf(pixels.value));
  const object = await dependency(
    "object storage",
    bucket.put(key, bytes, { httpMetadata: { contentType: "image/png" }, ...(colour.customMetadata ? { customMetadata: colour.customMetadata } : {}) }),
  );
  return { object, bytes };
}
