import { z } from "zod";
import { logoVariants } from "../../schema";
import { requestFormats } from "../images/transform";

/**
 * The parameters and records the tools share, with the spec's ranges ("Other limits") and
 * messages that name the parameter and what it accepts.
 */
export const MAX_WIDTH = 3200;

export const querySchema = z
  .string({ message: "query must be a string" })
  .trim()
  .min(1, "query must not be empty")
  .max(500, "query must be at most 500 characters");

export const variantSchema = z.enum(logoVariants, { message: "variant must be 'full' or 'icon'" });

export const maxWidthSchema = z
  .number({ message: `maxWidth must be a whole number from 1 to ${MAX_WIDTH}` })
  .int(`maxWidth must be a whole number from 1 to ${MAX_WIDTH}`)
  .min(1, `maxWidth must be a whole number from 1 to ${MAX_WIDTH}`)
  .max(MAX_WIDTH, `maxWidth must be a whole number from 1 to ${MAX_WIDTH}`)
  .describe("Largest output width in pixels (1-3200); scales down only, never up, aspect ratio kept");

export const logoIdSchema = z
  .number({ message: "logoId must be a logo id from search results" })
  .int("logoId must be a whole number")
  .positive("logoId must be a positive whole number")
  .describe("Logo id from search results");

export const companyIdSchema = z
  .number({ message: "companyId must be a company id from search results" })
  .int("companyId must be a whole number")
  .positive("companyId must be a positive whole number")
  .describe("Company id from search results");

/** "a", "a or b", "a, b or c". */
const oneOf = (items: string[]) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`);

/** How a logo is delivered: `returnType` with the choices a tool offers, the first the default. */
export function returnTypeSchema<const T extends readonly [string, ...string[]]>(choices: T) {
  const [first, ...rest] = choices.map((c) => `'${c}'`);
  return z
    .enum(choices, { message: `returnType must be ${oneOf([first!, ...rest])}` })
    .default(choices[0] as T[number] & {})
    .describe(oneOf([`${first} (default)`, ...rest]));
}

export const formatSchema = z
  .enum(requestFormats, { message: `format must be ${oneOf(requestFormats.map((f) => `'${f}'`))}` })
  .default("png")
  .describe(
    "Image format: 'png' (default), 'webp', 'avif', 'jpg' (on white), or 'svg' (the sanitised vector where the logo has one; PNG otherwise, as the result's format says)",
  );

const brandColor = z.string().optional().describe("The company's brand colour, #rrggbb, where the catalogue knows it");
const dimension = z.number().int().nullable();

/** What every record of a logo starts with: which logo, whose, and which variant. */
/** Where a company's name comes from; `site` marks what a discovered company's own site says of itself. */
export const nameSourceSchema = z
  .enum(["catalogue", "site", "domain"])
  .describe(
    "Where companyName comes from: 'catalogue' (curated), 'site' (what the company's own site says; unverified), 'domain' (named after its domain)",
  );

const logoIdentitySchema = z.object({
  logoId: z.number(),
  companyId: z.number(),
  companyName: z.string(),
  nameSource: nameSourceSchema,
  domain: z.string(),
  brandColor,
  variant: variantSchema,
});

/** Logo metadata record (search result, seven-tool form). */
export const logoMetadataSchema = logoIdentitySchema.extend({
  sourceWidth: z.number(),
  sourceHeight: z.number(),
});

/** The three-tool form's record: output size and stored format instead of source size. */
export const threeToolLogoSchema = logoIdentitySchema.omit({ brandColor: true }).extend({
  width: z.number(),
  height: z.number(),
  format: z.string(),
});

/** Logo delivery record (get_logo, fetch_logo, fetch_logos entries). */
export const deliveryRecordSchema = logoIdentitySchema.extend({
  variantFallback: z.boolean().optional(),
  format: z.enum(requestFormats),
  mimeType: z.string(),
  url: z.string(),
  resourceUri: z.string(),
  width: dimension,
  height: dimension,
  sourceWidth: dimension,
  sourceHeight: dimension,
  dimensionsStatus: z.enum(["known", "unknown"]),
  /** Provenance, as X-Logo-Source on image answers. */
  source: z.enum(["catalogue", "discovered", "owner", "override"]),
});

export const usageSchema = z.object({
  requests: z.object({ current: z.number(), limit: z.number() }).optional(),
  companies: z.object({ current: z.number(), limit: z.number() }),
});

export const usageMetaSchema = z.object({ usage: usageSchema }).optional();
