import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { admit, bestMatch, handOut } from "../admission";
import type { ToolContext } from "../context";
import { asMade, deliveryRecord, readDeliveredBase64 } from "../delivery";
import { registerScopedTool, toolError, toolResult } from "../results";
import { deliveryRecordSchema, formatSchema, maxWidthSchema, querySchema, returnTypeSchema, variantSchema } from "../schemas";

/**
 * fetch_logo (spec 2, seven-tool form): one logo by company name, domain, ticker, ISIN, email address or crypto symbol, the best
 * match of search_logos, delivered as a URL or base64.
 */
const inputSchema = z.object({
  query: querySchema.describe("Company name, domain or stock ticker"),
  variant: variantSchema
    .optional()
    .describe("Preferred variant: 'full' (wordmark) or 'icon'; falls back to the other with variantFallback: true"),
  maxWidth: maxWidthSchema.optional(),
  returnType: returnTypeSchema(["url", "base64"]),
  format: formatSchema,
});

export function registerFetchLogo(server: McpServer, ctx: ToolContext) {
  registerScopedTool(
    server,
    "fetch_logo",
    {
      title: "Fetch a logo",
      description:
        "Fetch the logo of one company by name, domain, ticker, ISIN, email address or crypto:SYMBOL: a public image URL (default) or base64 image data, " +
        "optionally scaled down to maxWidth; PNG unless format asks for WebP, AVIF, JPEG or the SVG vector. Counts the company towards the daily unique-company quota.",
      inputSchema,
      outputSchema: deliveryRecordSchema.extend({ ok: z.literal(true), base64: z.string().optional() }),
      failure: "Failed to fetch logo. Try again later",
    },
    async (args) => {
      const found = await bestMatch(ctx, args.query, args.variant);
      if (!found.ok) return toolError(found.error.message);

      const { company, logo, fallback } = found.value;
      const record = deliveryRecord(ctx.caller.base, company, logo, { maxWidth: args.maxWidth, fallback, format: args.format });
      if (args.returnType === "url") {
        const admitted = await admit(ctx, [company.companyId]);
        return admitted.ok ? toolResult({ ok: true, ...record }, [record]) : toolError(admitted.error.message);
      }
      const image = await handOut(ctx, [company.companyId], () => readDeliveredBase64(ctx, logo, args.maxWidth, { format: args.format }));
      if (!image.ok) return toolError(image.error.message);
      const made = asMade(record, image.value.made.contentType);
      return toolResult({ ok: true, ...made, base64: image.value.made.base64 }, [made]);
    },
  );
}
