import type { z } from "zod";
import type { Logo } from "../../schema";
import { assetUrl } from "../assets/codec";
import { logoSourceOf } from "../catalogue/provenance";
import type { CompanyMatch } from "../catalogue/queries";
import { renderPng, scaledHeight } from "../images/transform";
import { base64Length } from "../lib/encoding";
import type { ToolContext } from "./context";
import type { deliveryRecordSchema } from "./schemas";

/**
 * How a logo leaves the MCP tools: its delivery record (spec "Logo delivery record") and its
 * PNG bytes. Every logo is delivered as its PNG master, or that master scaled down to
 * `maxWidth`; a `maxWidth` at or above the master's width changes nothing, so URLs and
 * resource URIs carry it only when it scales.
 */
export const MAX_BASE64_CHARS = 5 * 1024 * 1024;

export type Delivery = z.infer<typeof deliveryRecordSchema>;

/** The width a delivery scales to, or undefined when it serves the master as stored. */
export function scaledWidth(logo: Pick<Logo, "width">, maxWidth: number | undefined): number | undefined {
  return maxWidth !== undefined && maxWidth < logo.width ? maxWidth : undefined;
}

export const resourceUri = (logoId: number, width?: number) => `qt://logo/${logoId}${width === undefined ? "" : `?maxWidth=${width}`}`;

/** What every record of a logo starts with: which logo, whose, and which variant. */
function logoIdentity(company: CompanyMatch, logo: Logo) {
  return { logoId: logo.id, companyId: company.companyId, companyName: company.companyName, domain: company.domain, variant: logo.variant };
}

export function deliveryRecord(base: string, company: CompanyMatch, logo: Logo, options: { maxWidth?: number; fallback?: boolean } = {}): Delivery {
  const width = scaledWidth(logo, options.maxWidth);
  const widthQuery = width === undefined ? "" : `?maxWidth=${width}`;
  return {
    ...logoIdentity(company, logo),
    ...(options.fallback ? { variantFallback: true as const } : {}),
    format: "png",
    mimeType: "image/png",
    url: `${assetUrl(base, logo.masterKey)}${widthQuery}`,
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
    ...logoIdentity(company, logo),
    width: logo.width,
    height: logo.height,
    format: logo.format,
  };
}

/** Largest master read for an upload to the file API (which takes far more; logos are never near it). */
export const MAX_UPLOAD_BASE64 = 64 * 1024 * 1024;

export type PngRead = { ok: true; bytes: Uint8Array } | { ok: false; reason: "unavailable" | "too_large" };

/**
 * The PNG a delivery names, refused as `too_large` when its base64 would exceed `maxBase64`
 * characters (spec: 5 MB) before the bytes are read where the size is known up front.
 * `unavailable` covers a missing object and a failed resize alike.
 */
export async function readPng(ctx: ToolContext, logo: Logo, maxWidth: number | undefined, maxBase64 = MAX_BASE64_CHARS): Promise<PngRead> {
  const width = scaledWidth(logo, maxWidth);
  try {
    if (width === undefined) {
      // Sized first, so an oversized object is never transferred at all.
      const head = await ctx.env.LOGOS.head(logo.masterKey);
      if (head && base64Length(head.size) > maxBase64) return { ok: false, reason: "too_large" };
      const object = head && (await ctx.env.LOGOS.get(logo.masterKey));
      if (!object) return { ok: false, reason: "unavailable" };
      return { ok: true, bytes: new Uint8Array(await object.arrayBuffer()) };
    }
    const rendered = await renderPng(ctx.env, logo.masterKey, width, ctx.defer);
    if (!rendered) return { ok: false, reason: "unavailable" };
    if (base64Length(rendered.byteLength) > maxBase64) return { ok: false, reason: "too_large" };
    return { ok: true, bytes: new Uint8Array(rendered) };
  } catch (error) {
    console.error(`mcp: logo ${logo.id} could not be read`, error);
    return { ok: false, reason: "unavailable" };
  }
}

export const RETRIEVAL_FAILED = "Unable to retrieve image. Try again or use returnType: 'url'";
export const TOO_LARGE = "Logo file exceeds 5MB. Use returnType: 'url' instead";

/** A file name that says what the file is, for uploads: `logo-stripe.com-42.png`. */
export const pngFileName = (domain: string, logoId: number) => `logo-${domain.replace(/[^a-z0-9.-]/gi, "_")}-${logoId}.png`;
