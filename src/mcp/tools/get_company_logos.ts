import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ToolContext } from "../context";
import { deliveryRecord, threeToolRecord } from "../delivery";
import { FAILED, guarded, toolError, toolResult } from "../results";
import { companyId, threeToolLogo, usageMeta as usageMetaSchema, variant } from "../schemas";
import { admittedCompany, usageMeta } from "../usage";

/**
 * get_company_logos (spec 2): every logo of one company, optionally only wordmarks or only
 * icons. Counts the company towards the unique-company quota when it has logos to list.
 */
const input = z.object({
  companyId,
  variant: variant.optional().describe("Only 'full' logos (wordmarks) or only 'icon' logos"),
});

const companyLogo = z.object({
  logoId: z.number(),
  companyId: z.number(),
  companyName: z.string(),
  domain: z.string(),
  variant,
  format: z.literal("png"),
  mimeType: z.literal("image/png"),
  url: z.string(),
  resourceUri: z.string(),
  sourceWidth: z.number(),
  sourceHeight: z.number(),
});

const ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export function registerGetCompanyLogos(server: McpServer, ctx: ToolContext) {
  server.registerTool(
    "get_company_logos",
    {
      title: "List a company's logos",
      description:
        "List every logo of a company (wordmarks and icons, from each source) with public PNG URLs and source sizes. " +
        "Use variant to list only 'full' or only 'icon' logos. Counts the company towards the daily unique-company quota.",
      inputSchema: input,
      outputSchema: z.object({ logos: z.array(companyLogo), _meta: usageMetaSchema }),
      annotations: ANNOTATIONS,
    },
    (args) =>
      guarded("get_company_logos", FAILED, async () => {
        const found = await admittedCompany(ctx, args.companyId, args.variant);
        if (!found.ok) return toolError(found.error.message);
        const { company, usage } = found.value;
        const logos = found.value.logos.map((logo) => {
          const { logoId, companyId, companyName, domain, variant, format, mimeType, url, resourceUri, sourceWidth, sourceHeight } = deliveryRecord(
            ctx.caller.base,
            company,
            logo,
          );
          return { logoId, companyId, companyName, domain, variant, format, mimeType, url, resourceUri, sourceWidth, sourceHeight };
        });
        return toolResult({ logos, _meta: usageMeta(ctx, usage) }, logos);
      }),
  );
}

/** Three-tool form: a bare array of the three-tool metadata records. */
export function registerGetCompanyLogosThree(server: McpServer, ctx: ToolContext) {
  server.registerTool(
    "get_company_logos",
    {
      title: "List a company's logos",
      description:
        "List every logo of a company (wordmarks and icons) with its size and stored format; use variant to list only 'full' or only 'icon' logos. " +
        "Counts the company towards the daily unique-company quota.",
      inputSchema: input,
      outputSchema: z.array(threeToolLogo),
      annotations: ANNOTATIONS,
    },
    (args) =>
      guarded("get_company_logos", FAILED, async () => {
        const found = await admittedCompany(ctx, args.companyId, args.variant);
        if (!found.ok) return toolError(found.error.message);
        const { company, logos } = found.value;
        return toolResult(logos.map((logo) => threeToolRecord(company, logo)));
      }),
  );
}
