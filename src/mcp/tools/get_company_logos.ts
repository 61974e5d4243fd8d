import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { admittedCompany, usageMeta } from "../admission";
import type { ToolContext } from "../context";
import { deliveryRecord, threeToolRecord } from "../delivery";
import { registerScopedTool, toolError, toolResult } from "../results";
import { companyIdSchema, deliveryRecordSchema, threeToolLogoSchema, usageMetaSchema, variantSchema } from "../schemas";

/**
 * get_company_logos (spec 2): every logo of one company, optionally only wordmarks or only
 * icons. Counts the company towards the unique-company quota when it has logos to list.
 */
const inputSchema = z.object({
  companyId: companyIdSchema,
  variant: variantSchema.optional().describe("Only 'full' logos (wordmarks) or only 'icon' logos"),
});

/** Spec "Company logos result": a delivery record without its output size and status. */
const companyLogoSchema = deliveryRecordSchema
  .pick({
    logoId: true,
    companyId: true,
    companyName: true,
    domain: true,
    variant: true,
    format: true,
    mimeType: true,
    url: true,
    resourceUri: true,
  })
  .extend({ sourceWidth: z.number(), sourceHeight: z.number() });

const TITLE = "List a company's logos";
const FAILURE = "Failed to get company logos. Try again later";

export function registerGetCompanyLogos(server: McpServer, ctx: ToolContext) {
  registerScopedTool(
    server,
    "get_company_logos",
    {
      title: TITLE,
      description:
        "List every logo of a company (wordmarks and icons, from each source) with public PNG URLs and source sizes. " +
        "Use variant to list only 'full' or only 'icon' logos. Counts the company towards the daily unique-company quota.",
      inputSchema,
      outputSchema: z.object({ logos: z.array(companyLogoSchema), _meta: usageMetaSchema }),
      failure: FAILURE,
    },
    async (args) => {
      const found = await admittedCompany(ctx, args.companyId, args.variant);
      if (!found.ok) return toolError(found.error.message);
      const { company, usage } = found.value;
      const logos = found.value.logos.map((logo) => companyLogoSchema.parse(deliveryRecord(ctx.caller.base, company, logo)));
      return toolResult({ logos, _meta: usageMeta(ctx, usage) }, logos);
    },
  );
}

/** Three-tool form: a bare array of the three-tool metadata records. */
export function registerGetCompanyLogosThree(server: McpServer, ctx: ToolContext) {
  registerScopedTool(
    server,
    "get_company_logos",
    {
      title: TITLE,
      description:
        "List every logo of a company (wordmarks and icons) with its size and stored format; use variant to list only 'full' or only 'icon' logos. " +
        "Counts the company towards the daily unique-company quota.",
      inputSchema,
      outputSchema: z.array(threeToolLogoSchema),
      failure: FAILURE,
    },
    async (args) => {
      const found = await admittedCompany(ctx, args.companyId, args.variant);
      if (!found.ok) return toolError(found.error.message);
      const { company, logos } = found.value;
      return toolResult(logos.map((logo) => threeToolRecord(company, logo)));
    },
  );
}
