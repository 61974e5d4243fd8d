import type { z } from "zod";
import { assetUrl } from "../images/assetUrls";
import { scaleDownTo } from "../images/widths";
import { DISCOVERED_SOURCE_SET, logoSourceOf } from "../catalogue/provenance";
import type { CompanyMatch } from "../catalogue/entities";
import { shownName } from "../catalogue/names";
import { vectorKey } from "../images/objectKeys";
import type { Logo } from "../catalogue/entities";
import { MIME_TYPES, renderImage, type RequestFormat, scaledHeight } from "../images/transform";
import { base64Length, toBase64 } from "../lib/encoding";
import { fail, ok, type Result } from "../lib/errors";
import type { ToolContext } from "./context";
import type { deliveryRecordSchema } from "./schemas";
import { log } from "../lib/log";

/**
 * How a logo leaves the MCP tools: its delivery record (spec "Logo delivery record") and its
 * bytes. Every logo is delivered as its master, or, when `maxWidth` is below the master's
 * width, that master scaled down to `maxWidth` rounded down to the public asset route's width
 * ladder (so that the record's URL serves exactly what the record says); a `maxWidth` at or
 * above the master's width changes nothing, so URLs and resource URIs carry it only when it scales. `format` is PNG unless asked
 * otherwise; `svg` delivers the sanitised vector where the logo has one, and PNG (said so by
 * the record's `format`) where it has none.
 */
export const MAX_BASE64_CHARS = 5 * 1024 * 1024;
/**
 * What the base64 of one /mcp request's answer may come to, all its calls together. A JSON-RPC
 * batch carries up to 100 calls, each of them up to MAX_BASE64_CHARS, and every result carries
 * its base64 twice (text and structured content): without a bound per request, one small POST
 * could have an isolate build a gigabyte.
 */
export const MAX_REQUEST_BASE64_CHARS = 2 * MAX_BASE64_CHARS;
export const REQUEST_TOO_LARGE =
  "The base64 payloads of this request's calls exceed 10MB together: send the calls in separate requests, or use returnType: 'url'";

export type Delivery = z.infer<typeof deliveryRecordSchema>;

/** The width a delivery scales to, or undefined when it serves the master as stored. */
export function scaledWidth(logo: Pick<Logo, "width">, maxWidth: number | undefined): number | undefined {
  return scaleDownTo(logo.width, maxWidth);
}

export const resourceUri = (logoId: number, width?: number) => `qt://logo/${logoId}${width === undefined ? "" : `?maxWidth=${width}`}`;

/** What every seven-tool record of a logo starts with: which logo, whose, and which variant. */
function logoIdentity(company: CompanyMatch, logo: Logo) {
  return {
    logoId: logo.id,
    companyId: company.companyId,
    companyName: shownName(company),
    nameSource: company.nameSource,
    domain: company.domain,
    ...(company.brandColor ? { brandColor: company.brandColor } : {}),
    variant: logo.variant,
  };
}

/** The format a delivery is in: the one asked for, except svg for a logo without a vector of ours (a discovered site's is never served). */
export const deliveredFormat = (logo: Pick<Logo, "renditions" | "sourceSet">, format: RequestFormat = "png"): RequestFormat =>
  format === "svg" && (!logo.renditions.vector || logo.sourceSet === DISCOVERED_SOURCE_SET) ? "png" : format;

export function deliveryRecord(
  base: string,
  company: CompanyMatch,
  logo: Logo,
  options: { maxWidth?: number; fallback?: boolean; format?: RequestFormat } = {},
): Delivery {
  const format = deliveredFormat(logo, options.format);
  // A vector has no pixel width to scale to.
  const width = format === "svg" ? undefined : scaledWidth(logo, options.maxWidth);
  const query = new URLSearchParams();
  if (width !== undefined) query.set("maxWidth", String(width));
  if (format !== "png" && format !== "svg") query.set("format", format);
  const key = format === "svg" ? vectorKey(logo.masterKey, logo.renditions.version) : logo.masterKey;
  return {
    ...logoIdentity(company, logo),
    ...(options.fallback ? { variantFallback: true as const } : {}),
    format,
    mimeType: MIME_TYPES[format],
    url: `${assetUrl(base, key)}${query.size > 0 ? `?${query}` : ""}`,
    resourceUri: resourceUri(logo.id, width),
    width: width ?? logo.width,
    height: width === undefined ? logo.height : scaledHeight(logo.width, logo.height, width),
    // Every catalogue logo has a PNG master whose size the importer measured.
    sourceWidth: logo.width,
    sourceHeight: logo.height,
    dimensionsStatus: "known",
    source: logoSourceOf(logo.sourceSet),
  };
}

/** Logo metadata record (spec: search result, seven-tool form). */
export function metadataRecord(company: CompanyMatch, logo: Logo) {
  return {
    ...logoIdentity(company, logo),
    sourceWidth: logo.width,
    sourceHeight: logo.height,
  };
}

/** The three-tool form's record: the stored size and the format the logo was imported in. */
export function threeToolRecord(company: CompanyMatch, logo: Logo) {
  return {
    logoId: logo.id,
    companyId: company.companyId,
    companyName: shownName(company),
    nameSource: company.nameSource,
    domain: company.domain,
    variant: logo.variant,
    width: logo.width,
    height: logo.height,
    format: logo.format,
  };
}

/** Largest master read for an upload to the file API (which takes far more; logos are never near it). */
export const MAX_UPLOAD_BASE64 = 64 * 1024 * 1024;

/** The bytes read, and their type as made (an AVIF the binding could not make comes as WebP or JPEG). */
export type ImageRead = { ok: true; bytes: Uint8Array; contentType: string } | { ok: false; reason: "unavailable" | "too_large" };

/**
 * The image a delivery names (PNG unless `format` says otherwise), refused as `too_large` when
 * its base64 would exceed `maxBase64` characters (spec: 5 MB) before the bytes are read where
 * the size is known up front. `unavailable` covers a missing object and a failed resize alike.
 */
export async function readImage(
  ctx: ToolContext,
  logo: Logo,
  maxWidth: number | undefined,
  options: { maxBase64?: number; format?: RequestFormat } = {},
): Promise<ImageRead> {
  const maxBase64 = options.maxBase64 ?? MAX_BASE64_CHARS;
  const format = deliveredFormat(logo, options.format);
  const width = scaledWidth(logo, maxWidth);
  try {
    if (format === "svg" || (format === "png" && width === undefined)) {
      // Stored as served: sized first, so an oversized object is never transferred at all.
      const key = format === "svg" ? vectorKey(logo.masterKey, logo.renditions.version) : logo.masterKey;
      const head = await ctx.env.LOGOS.head(key);
      if (head && base64Length(head.size) > maxBase64) return { ok: false, reason: "too_large" };
      const object = head && (await ctx.env.LOGOS.get(key));
      if (!object) return { ok: false, reason: "unavailable" };
      return { ok: true, bytes: new Uint8Array(await object.arrayBuffer()), contentType: MIME_TYPES[format] };
    }
    const rendered = await renderImage(ctx.env, logo.masterKey, { width: width ?? logo.width, format, page: "light" }, ctx.defer);
    if (!rendered) return { ok: false, reason: "unavailable" };
    if (base64Length(rendered.bytes.byteLength) > maxBase64) return { ok: false, reason: "too_large" };
    return { ok: true, bytes: new Uint8Array(rendered.bytes), contentType: rendered.contentType };
  } catch (error) {
    log.error("mcp.logo_unreadable", { logoId: logo.id, error });
    return { ok: false, reason: "unavailable" };
  }
}

export const RETRIEVAL_FAILED = "Unable to retrieve image. Try again or use returnType: 'url'";
export const TOO_LARGE = "Logo file exceeds 5MB. Use returnType: 'url' instead";

/** readImage with a failure in the tools' words (spec "Agent endpoint, tool level"). */
export async function readDelivered(
  ctx: ToolContext,
  logo: Logo,
  maxWidth: number | undefined,
  options: { maxBase64?: number; format?: RequestFormat } = {},
): Promise<Result<{ bytes: Uint8Array; contentType: string }>> {
  const read = await readImage(ctx, logo, maxWidth, options);
  if (read.ok) return ok({ bytes: read.bytes, contentType: read.contentType });
  return read.reason === "too_large" ? fail("payload_too_large", TOO_LARGE) : fail("unavailable", RETRIEVAL_FAILED);
}

/** readDelivered as the base64 a call returns, within what the request's answer may still carry. */
export async function readDeliveredBase64(
  ctx: ToolContext,
  logo: Logo,
  maxWidth: number | undefined,
  options: { format?: RequestFormat } = {},
): Promise<Result<{ base64: string; contentType: string }>> {
  const read = await readDelivered(ctx, logo, maxWidth, options);
  if (!read.ok) return read;
  const base64 = base64Within(ctx, read.value.bytes);
  return base64.ok ? ok({ base64: base64.value, contentType: read.value.contentType }) : base64;
}

/** A delivery record saying what was made, where the binding made another format than asked (an AVIF it could not make). */
export function asMade<T extends { format: RequestFormat; mimeType: string }>(record: T, contentType: string): T {
  if (record.mimeType === contentType) return record;
  const format = (Object.keys(MIME_TYPES) as RequestFormat[]).find((name) => MIME_TYPES[name] === contentType);
  return format ? { ...record, format, mimeType: contentType } : record;
}

/** The base64 of a logo a call returns, taken from what the request's answer may still carry (MAX_REQUEST_BASE64_CHARS). */
export function base64Within(ctx: ToolContext, bytes: Uint8Array): Result<string> {
  const length = base64Length(bytes.byteLength);
  if (length > ctx.base64Left) return fail("payload_too_large", REQUEST_TOO_LARGE);
  ctx.base64Left -= length;
  return ok(toBase64(bytes));
}

/** A file name that says what the file is, for uploads: `logo-stripe.com-42.png`. */
export const logoFileName = (domain: string, logoId: number, format: RequestFormat = "png") =>
  `logo-${domain.replace(/[^a-z0-9.-]/gi, "_")}-${logoId}.${format}`;
