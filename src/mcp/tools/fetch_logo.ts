import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { toBase64 } from "../../lib/encoding";
import type { ToolContext } from "../context";
import { deliveryRecord, RETRIEVAL_FAILED, readPng, TOO_LARGE } from "../delivery";
import { FAILED, guarded, toolError, toolResult } from "../results";
import { deliveryRecord as deliverySchema, maxWidth, query, variant } from "../schemas";
import { admittedMatch } from "../usage";

/**
 * fetch_logo (spec 2, seven-tool form): one logo by company name, domain or ticker, the best
 * match of search_logos, delivered as a URL or base64.
 */
const input = z.object({
  query: query.describe("Company name, domain or stock ticker"),
  variant: variant.optional().describe("Preferred variant: 'full' (wordmark) or 'icon'; falls back to the other with variantFallback: true"),
  maxWidth: maxWidth.optional(),
  returnType: z.enum(["url", "base64"], { message: "returnType must be 'url' or 'base64'" }).default("url").describe("'url' (default) or 'base64'"),
});

export function registerFetchLogo(server: McpServer, ctx: ToolContext) {
  server.registerTool(
    "fetch_logo",
    {
      title: "Fetch a logo",
      description:
        "Fetch the logo of one company by name, domain or ticker: a public PNG URL (default) or base64 PNG data, " +
        "optionally scaled down to maxWidth. Counts the company towards the daily unique-company quota.",
      inputSchema: input,
      outputSchema: deliverySchema.extend({ ok: z.literal(true), base64: z.string().optional() }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded("fetch_logo", FAILED, async () => {
        const found = await admittedMatch(ctx, args.query, args.variant);
        if (!found.ok) return toolError(found.error.message);

        const { company, logo, fallback } = found.value;
        const record = deliveryRecord(ctx.caller.base, company, logo, { maxWidth: args.maxWidth, fallback });
        if (args.returnType === "url") return toolResult({ ok: true, ...record }, [record]);
        const png = await readPng(ctx, logo, args.maxWidth);
        if (!png.ok) return toolError(png.reason === "too_large" ? TOO_LARGE : RETRIEVAL_FAILED);
        return toolResult({ ok: true, ...record, base64: toBase64(png.bytes) }, [record]);
      }),
  );
}
