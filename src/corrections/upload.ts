import type { PreparedImage } from "../catalogue/importLogo";
import { withoutVector } from "../catalogue/preparedImage";
import { decodeIcon, prepareIcon } from "../discovery/image";
import { sniffFormat } from "../discovery/sniff";
import { sanitiseSvg } from "../images/svg";
import { fail, ok, type Result } from "../lib/errors";

/**
 * An image an account uploads (an override, an owner's logo), checked as an import's is
 * (tools/importer/prepare.ts) with the Worker's own image code, which discovery uses too: the
 * file is what its first bytes say (PNG or SVG, whatever its Content-Type claims), at most
 * MAX_UPLOAD_BYTES; an SVG is sanitised (src/images/svg.ts) and only the sanitised markup is
 * drawn; a PNG is believed only as its header declares it and decoded within 4,096 px a side;
 * every image becomes a PNG master of at most 1,200 px a side with its renditions. The markup
 * itself is never served: like a discovered icon, it is a stranger's, so only the PNGs made
 * from it are public.
 *
 * SVG is drawn by the Images binding: the local one does; Cloudflare's does not rasterise SVG,
 * so on a deployment an SVG upload is refused with UPLOAD_SVG_UNDRAWN and a PNG is asked for.
 */
export const MAX_UPLOAD_BYTES = 1024 * 1024;
/** Smaller than this on its shorter side, an upload is refused: it would be blurred at every size a lookup serves. */
export const MIN_UPLOAD_EDGE = 16;

export const UPLOAD_TYPES = { "image/png": "png", "image/svg+xml": "svg" } as const;
export type UploadType = keyof typeof UPLOAD_TYPES;

export const UPLOAD_SVG_UNDRAWN = "This SVG could not be drawn here: upload the logo as a PNG";

export async function prepareUpload(
  env: Pick<Env, "IMAGES">,
  bytes: Uint8Array,
  declaredType?: string | undefined,
): Promise<Result<PreparedImage>> {
  if (bytes.byteLength === 0) return fail("invalid_argument", "The image is empty");
  if (bytes.byteLength > MAX_UPLOAD_BYTES) return fail("payload_too_large", `The image is larger than ${MAX_UPLOAD_BYTES / 1024} KB`);
  const format = sniffFormat(bytes);
  if (format !== "png" && format !== "svg") return fail("invalid_argument", "Upload a PNG or an SVG image");
  const declared = declaredType?.split(";")[0]?.trim().toLowerCase();
  if (declared && declared in UPLOAD_TYPES && UPLOAD_TYPES[declared as UploadType] !== format)
    return fail("invalid_argument", `The image is ${format.toUpperCase()}, not ${declared}`);

  let drawn = bytes;
  if (format === "svg") {
    const sanitised = sanitiseSvg(new TextDecoder().decode(bytes));
    if (!sanitised.ok) return fail("invalid_argument", `SVG refused: ${sanitised.reason}`);
    drawn = new TextEncoder().encode(sanitised.svg);
  }
  const decoded = await decodeIcon(env.IMAGES, drawn, format);
  if (!decoded.ok) {
    const undrawn = format === "svg" && /could not be rasterised/.test(decoded.error.message);
    return fail("invalid_argument", undrawn ? UPLOAD_SVG_UNDRAWN : `The image could not be read: ${decoded.error.message}`);
  }
  const { pixels } = decoded.value;
  if (Math.min(pixels.width, pixels.height) < MIN_UPLOAD_EDGE)
    return fail("invalid_argument", `The image is ${pixels.width}×${pixels.height}: at least ${MIN_UPLOAD_EDGE} px a side, please`);
  // Kept as uploaded (the private original beside the renditions); never served.
  return ok(withoutVector(await prepareIcon(format, bytes, decoded.value, { discovered: false })));
}
