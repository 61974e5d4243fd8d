import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Logo } from "../../catalogue/entities";
import { logosOfCompanies } from "../../catalogue/logos";
import { type SearchHit, searchCompanies } from "../../catalogue/search";
import { preferredLogo } from "../../catalogue/resolveLogo";
import { takenDownAmong } from "../../catalogue/takedowns";
import type { ToolContext } from "../context";
import { metadataRecord, resourceUri, threeToolRecord } from "../delivery";
import { registerScopedTool, toolResult } from "../results";
import { logoMetadataSchema, querySchema, threeToolLogoSchema } from "../schemas";

/**
 * search_logos (spec 2): companies by name, domain, ticker, ISIN, email address or crypto symbol, and their logos as metadata
 * only. Costs no unique-company quota. A company contributes its best logo of each variant,
 * companies in rank order, until `limit` records.
 */
const inputSchema = z.object({
  query: querySchema.describe("Company name (or its start), domain, stock ticker, ISIN, email address or crypto:SYMBOL"),
  limit: z
    .number({ message: "limit must be a whole number from 1 to 20" })
    .int("limit must be a whole number from 1 to 20")
    .min(1, "limit must be a whole number from 1 to 20")
    .max(20, "limit must be a whole number from 1 to 20")
    .default(5)
    .describe("Number of results, 1-20 (default 5)"),
});

async function searchLogos(ctx: ToolContext, text: string, limit: number): Promise<{ hit: SearchHit; logo: Logo }[]> {
  const matched = await searchCompanies(ctx.catalogue, text, limit);
  // A company whose logos were taken down is not found at all (docs/corrections.md#takedowns).
  const takenDown = await takenDownAmong(
    ctx.catalogue,
    matched.map((hit) => hit.domain),
  );
  const hits = matched.filter((hit) => !takenDown.has(hit.domain));
  const logos = await logosOfCompanies(ctx.catalogue, hits);
  const found: { hit: SearchHit; logo: Logo }[] = [];
  for (const hit of hits) {
    const own = logos.filter((logo) => logo.companyId === hit.companyId);
    for (const variant of ["full", "icon"] as const) {
      const logo = preferredLogo(own.filter((l) => l.variant === variant));
      if (logo && found.length < limit) found.push({ hit, logo });
    }
  }
  return found;
}

const TITLE = "Search logos";
const DESCRIPTION =
  "Search company logos by company name (prefix, case and punctuation ignored, aliases included), domain (stripe.com), stock ticker (AAPL, NASDAQ:AAPL), " +
  "ISIN (US0378331005), email address (its domain's company; a person's address at a mail provider finds none) or crypto symbol (crypto:BTC). " +
  "Exact domain and ticker matches come first, then names by closeness and prominence. Returns metadata only; fetch a logo with get_logo.";
/** Spec "Errors, tool level": search failure. */
const FAILURE = "Search failed. Try again later";

export function registerSearchLogos(server: McpServer, ctx: ToolContext) {
  registerScopedTool(
    server,
    "search_logos",
    {
      title: TITLE,
      description: DESCRIPTION,
      inputSchema,
      outputSchema: z.object({ results: z.array(logoMetadataSchema) }),
      failure: FAILURE,
    },
    async (args) => {
      const found = await searchLogos(ctx, args.query, args.limit);
      const results = found.map(({ hit, logo }) => metadataRecord(hit, logo));
      return toolResult(
        { results },
        results.map((r) => ({ ...r, resourceUri: resourceUri(r.logoId) })),
      );
    },
  );
}

/** Three-tool form: a bare array, with each logo's size and stored format. */
export function registerSearchLogosThree(server: McpServer, ctx: ToolContext) {
  registerScopedTool(
    server,
    "search_logos",
    {
      title: TITLE,
      description: DESCRIPTION.replace("get_logo.", "get_logo (base64 or a signed URL)."),
      inputSchema,
      outputSchema: z.array(threeToolLogoSchema),
      failure: FAILURE,
    },
    async (args) => {
      const found = await searchLogos(ctx, args.query, args.limit);
      return toolResult(found.map(({ hit, logo }) => threeToolRecord(hit, logo)));
    },
  );
}
