import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Logo } from "../../catalogue/entities";
import { findCompanyByDomain } from "../../catalogue/companies";
import type { CompanyMatch } from "../../catalogue/entities";
import { logosOfCompany } from "../../catalogue/logos";
import { chooseLogo } from "../../catalogue/resolveLogo";
import { discoveredCatalogue } from "../../discovery/onMiss";
import { normaliseDomain } from "../../lib/domain";
import { base64Length } from "../../lib/encoding";
import { admissible, admit, asAccountSees, refusedIfTakenDown } from "../admission";
import { overrideAsLogo, pinnedFor } from "../../corrections/overrides";
import type { ToolContext } from "../context";
import { base64Within, type Delivery, deliveryRecord, MAX_BASE64_CHARS, readDelivered } from "../delivery";
import { registerScopedTool, toolError, toolResult } from "../results";
import { deliveryRecordSchema, maxWidthSchema, returnTypeSchema, variantSchema } from "../schemas";

/**
 * fetch_logos (spec 2, seven-tool form): logos for many domains at once. Results keep the
 * input order and each domain succeeds or fails on its own; the unique-company quota admits
 * the batch's distinct companies together (duplicates once), so a refused batch hands out
 * nothing. In base64 mode the encoded data of the whole batch stays within 5 MB, and only the
 * companies whose images were read count (checked before reading, admitted after), so a
 * failed read or a batch refused for its size costs no quota.
 */
export const MAX_DOMAINS = { url: 25, base64: 5 } as const;

const inputSchema = z
  .object({
    domains: z
      .array(z.string({ message: "each domain must be a string" }).max(253, "each domain must be at most 253 characters"), {
        message: "domains must be a list of company domains",
      })
      .min(1, "domains must name at least one domain")
      .describe("Company domains, e.g. ['stripe.com', 'github.com']; at most 25 with url, 5 with base64"),
    variant: variantSchema
      .optional()
      .describe("Preferred variant for every domain: 'full' or 'icon'; falls back per domain with variantFallback: true"),
    returnType: returnTypeSchema(["url", "base64"]),
    maxWidth: maxWidthSchema.optional(),
  })
  .superRefine((args, issues) => {
    const max = MAX_DOMAINS[args.returnType];
    if (args.domains.length > max) {
      issues.addIssue({
        code: "custom",
        path: ["domains"],
        message: `domains: at most ${max} with returnType '${args.returnType}' (${MAX_DOMAINS.url} with 'url', ${MAX_DOMAINS.base64} with 'base64')`,
      });
    }
  });

type Entry =
  | { domain: string; ok: true; company: CompanyMatch; logo: Logo; fallback: boolean }
  | { domain: string; ok: false; error: string };

async function resolveDomain(ctx: ToolContext, domain: string, wanted: Logo["variant"] | undefined): Promise<Entry> {
  const host = normaliseDomain(domain);
  if (!host.ok) return { domain, ok: false, error: "Invalid domain format" };
  let catalogue = ctx.catalogue;
  let company = await findCompanyByDomain(catalogue, host.domain);
  const allowed = await refusedIfTakenDown(ctx, host.domain, company?.domain);
  if (!allowed.ok) return { domain, ok: false, error: allowed.error.message };
  // The account's own logo of a domain the catalogue does not know is answered as it is, the site never asked.
  const pinned = company ? undefined : pinnedFor(await ctx.overrides(), host.domain);
  if (pinned) {
    const own = { companyId: 0, companyName: pinned.domain, nameSource: "domain" as const, domain: pinned.domain, brandColor: null };
    return { domain, ok: true, company: own, logo: overrideAsLogo(pinned, undefined, 0), fallback: false };
  }
  const discovered = company ? null : await discoveredCatalogue(ctx.env, host.domain, ctx.caller);
  if (discovered) company = await findCompanyByDomain((catalogue = discovered), host.domain);
  if (!company) return { domain, ok: false, error: `No company found for domain ${domain}` };
  const chosen = chooseLogo(await logosOfCompany(catalogue, company), wanted);
  if (!chosen) return { domain, ok: false, error: `No logo found for domain ${domain}` };
  return { domain, ok: true, company, ...chosen, logo: await asAccountSees(ctx, company, chosen.logo, host.domain) };
}

const successEntrySchema = deliveryRecordSchema.omit({ domain: true }).extend({
  domain: z.string(),
  ok: z.literal(true),
  resolvedDomain: z.string(),
  base64: z.string().optional(),
});
const failedEntrySchema = z.object({ domain: z.string(), ok: z.literal(false), error: z.string() });
type ResultEntry = z.infer<typeof successEntrySchema> | z.infer<typeof failedEntrySchema>;

export function registerFetchLogos(server: McpServer, ctx: ToolContext) {
  registerScopedTool(
    server,
    "fetch_logos",
    {
      title: "Fetch logos for many domains",
      description:
        "Fetch the logos of up to 25 company domains (5 with base64) in one call. Results keep the input order; " +
        "a domain that fails is reported in its entry (ok: false, error) without affecting the others. " +
        "Each distinct company counts once towards the daily unique-company quota.",
      inputSchema,
      outputSchema: z.object({
        results: z.array(z.union([successEntrySchema, failedEntrySchema])),
        summary: z.object({ requested: z.number(), resolved: z.number(), failed: z.number() }),
      }),
      failure: "Failed to fetch logos. Try again later",
    },
    async (args) => {
      const entries = await Promise.all(args.domains.map((domain) => resolveDomain(ctx, domain, args.variant)));
      const found = entries.flatMap((entry) => (entry.ok ? [entry.company.companyId] : []));
      const base64 = args.returnType === "base64";
      const check = await (base64 ? admissible : admit)(ctx, found);
      if (!check.ok) return toolError(check.error.message);

      let base64Total = 0;
      const results: ResultEntry[] = [];
      const delivered: Delivery[] = [];
      const read: number[] = [];
      for (const entry of entries) {
        if (!entry.ok) {
          results.push(entry);
          continue;
        }
        const { domain: resolvedDomain, ...record } = deliveryRecord(ctx.caller.base, entry.company, entry.logo, {
          maxWidth: args.maxWidth,
          fallback: entry.fallback,
        });
        const success = { domain: entry.domain, ok: true as const, resolvedDomain, ...record };
        if (base64) {
          const png = await readDelivered(ctx, entry.logo, args.maxWidth);
          if (!png.ok) {
            results.push({ domain: entry.domain, ok: false, error: png.error.message });
            continue;
          }
          base64Total += base64Length(png.value.bytes.byteLength);
          if (base64Total > MAX_BASE64_CHARS) return toolError("Aggregate base64 payload size exceeds 5MB limit");
          const encoded = base64Within(ctx, png.value.bytes);
          if (!encoded.ok) return toolError(encoded.error.message);
          results.push({ ...success, base64: encoded.value });
          read.push(entry.company.companyId);
        } else {
          results.push(success);
        }
        delivered.push({ ...record, domain: resolvedDomain });
      }
      if (base64) {
        // Counted now that the data is in hand; a concurrent call may have taken the places meanwhile.
        const admitted = await admit(ctx, read);
        if (!admitted.ok) return toolError(admitted.error.message);
      }
      const resolved = results.filter((r) => r.ok).length;
      return toolResult(
        { results, summary: { requested: args.domains.length, resolved, failed: args.domains.length - resolved } },
        delivered,
      );
    },
  );
}
