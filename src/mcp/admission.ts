import type { LogoVariant } from "../../schema";
import type { Logo } from "../images/keys";
import { type CompanyMatch, findCompany, findLogo, logosOfCompany, searchCompanies } from "../catalogue/queries";
import { chooseLogo } from "../catalogue/resolveLogo";
import { discoveredCatalogue } from "../discovery/onMiss";
import { normaliseDomain } from "../lib/domain";
import { admitCompanies, checkCompanies, type CompanyUsage } from "../limits/companyQuotaClient";
import { fail, ok, type Result } from "../lib/errors";
import type { ToolContext } from "./context";

/**
 * The unique-company quota as the tools meet it: admitted once the companies are known and
 * before any logo data is returned, so a refused call hands out nothing. The finders below
 * are what every tool and the resource start from: the subject, found and admitted, or the
 * spec's message (`not_found` for a missing subject, the quota's own message otherwise).
 */
export function admit(ctx: ToolContext, companyIds: number[]): Promise<Result<CompanyUsage>> {
  return admitCompanies(ctx.env, ctx.caller.accountId, ctx.caller.plan, companyIds);
}

type Admitted<T> = Result<T & { usage: CompanyUsage }>;

async function admitted<T extends { company: CompanyMatch }>(ctx: ToolContext, subject: T, count = true): Promise<Admitted<T>> {
  const usage = await admit(ctx, count ? [subject.company.companyId] : []);
  return usage.ok ? ok({ ...subject, usage: usage.value }) : usage;
}

/** A logo by id (get_logo, the logo resource). */
export async function admittedLogo(ctx: ToolContext, logoId: number): Promise<Admitted<{ logo: Logo; company: CompanyMatch }>> {
  const found = await findLogo(ctx.catalogue, logoId);
  if (!found) return fail("not_found", `Logo with ID ${logoId} not found`);
  return admitted(ctx, found);
}

type Match = { logo: Logo; company: CompanyMatch; fallback: boolean };

/**
 * The best match of a search, and its logo of the preferred variant or else its best; not
 * admitted yet. A query that is a domain unknown to the catalogue asks the domain's own site.
 */
export async function bestMatch(ctx: ToolContext, query: string, variant: LogoVariant | undefined): Promise<Result<Match>> {
  let catalogue = ctx.catalogue;
  let [company] = await searchCompanies(catalogue, query, 1);
  const domain = company ? null : normaliseDomain(query.trim());
  const discovered = domain?.ok ? await discoveredCatalogue(ctx.env, domain.domain) : null;
  if (discovered) [company] = await searchCompanies((catalogue = discovered), query, 1);
  const chosen = company ? chooseLogo(await logosOfCompany(catalogue, company), variant) : null;
  if (!company || !chosen) return fail("not_found", `No logo found for "${query}"`);
  return ok({ company, ...chosen });
}

/** bestMatch, admitted (fetch_logo). */
export async function admittedMatch(ctx: ToolContext, query: string, variant: LogoVariant | undefined): Promise<Admitted<Match>> {
  const match = await bestMatch(ctx, query, variant);
  return match.ok ? admitted(ctx, match.value) : match;
}

/** Whether the companies would be admitted now, counting nothing: for work that must succeed before a company counts. */
export function admissible(ctx: ToolContext, companyIds: number[]): Promise<Result<CompanyUsage>> {
  return checkCompanies(ctx.env, ctx.caller.accountId, ctx.caller.plan, companyIds);
}

/** A company's logos, all or one variant's; a company with none to list costs no quota (get_company_logos). */
export async function admittedCompany(
  ctx: ToolContext,
  companyId: number,
  only: LogoVariant | undefined,
): Promise<Admitted<{ company: CompanyMatch; logos: Logo[] }>> {
  const company = await findCompany(ctx.catalogue, companyId);
  if (!company) return fail("not_found", `No company found with ID ${companyId}`);
  const logos = (await logosOfCompany(ctx.catalogue, company)).filter((logo) => only === undefined || logo.variant === only);
  return admitted(ctx, { company, logos }, logos.length > 0);
}

/** `_meta.usage` (spec "Usage summary"), on get_company_logos and insert_logo. */
export function usageMeta(ctx: ToolContext, companies: CompanyUsage) {
  return { usage: { ...(ctx.caller.requests ? { requests: ctx.caller.requests } : {}), companies } };
}
