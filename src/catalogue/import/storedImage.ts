import type { LogoRow, LogoVariant } from "../../../schema";
import { type LogoKeys, logoKeys, logoObjectKeys } from "../../images/objectKeys";
import type { PreparedImage } from "./inputs";

/** A prepared image as the catalogue stores it: the row's columns, and the keys of its objects. */
export interface StoredImage {
  columns: Pick<LogoRow, "format" | "renditions" | "width" | "height" | "bytes" | "contentHash" | "tone">;
  keys: LogoKeys;
  /** Every object key of the image (logoObjectKeys): what a write puts, and an unwind deletes. */
  objectKeys: string[];
  image: PreparedImage;
}

export const PNG = { contentType: "image/png" };
/** How a PNG rendition is put: it carries its master's size, so the asset route can decide on a resize from a HEAD alone. */
export const renditionPutOptions = ({ width, height }: { width: number; height: number }): R2PutOptions => ({
  httpMetadata: PNG,
  customMetadata: { width: String(width), height: String(height) },
});
/**
 * An original is the file as it came (a discovered SVG is a stranger's, unsanitised). The asset
 * route never serves it, but where CDN_URL's zone serves the bucket whole, anyone who rewrites a
 * redirect's key can ask for it: as an attachment of no image type, a browser downloads it and
 * never renders it on that origin.
 */
export const ORIGINAL = { contentType: "application/octet-stream", contentDisposition: "attachment" };

/** Every logo row is written from here: its keys are derived from the same parts when it is read (withKeys). */
export function storedImage(logo: { primaryDomain: string; variant: LogoVariant; sourceSet: string }, image: PreparedImage): StoredImage {
  const { primaryDomain, variant, sourceSet } = logo;
  const keys = logoKeys({ primaryDomain, variant, sourceSet, contentHash: image.contentHash }, image.format);
  return {
    columns: {
      format: image.format,
      renditions: image.renditions,
      width: image.width,
      height: image.height,
      bytes: image.files.master.byteLength,
      contentHash: image.contentHash,
      tone: image.tone,
    },
    keys,
    objectKeys: logoObjectKeys({ ...keys, renditions: image.renditions }),
    image,
  };
}
