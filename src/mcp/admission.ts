import type { LogoVariant } from "../../schema";
import type { Logo } from "../catalogue/entities";
import { findCompany, findCompanyByDomain } from "../catalogue/companies";
import type { CompanyMatch } from "../catalogue/entities";
import { findLogo, logosOfCompany } from "../catalogue/logos";
import { domainNameKey, nameKey } from "../catalogue/names";
import { hostOfUrl, type SearchHit, searchCompanies } from "../catalogue/search";
import { chooseLogo } from "../catalogue/resolveLogo";
import { discoveredCatalogue } from "../discovery/onMiss";
import { normaliseDomain } from "../lib/domain";
import { admitCompanies, checkCompanies, type CompanyUsage } from "../limits/companyQuotaClient";
import { fail, ok, type Result } from "../lib/errors";
import type { ToolContext } from "./context";

/**
 * The unique-company quota as the tools meet it: admitted once the companies are known and
 * before any logo data is returned, so a refused call hands out nothing. A URL is handed out
 * as soon as the company is admitted; bytes (base64, a file, a resource read) go through
 * `handOut`, so a read or upload that fails costs no quota. The finders below are what every
 * tool and the resource start from: the subject, or the spec's message (`not_found` for a
 * missing subject, the quota's own message otherwise).
 */
export function admit(ctx: ToolContext, companyIds: number[]): Promise<Result<CompanyUsage>> {
  return admitCompanies(ctx.env, ctx.caller.accountId, ctx.caller.plan, companyIds);
}

type Admitted<T> = Result<T & { usage: CompanyUsage }>;

async function admitted<T extends { company: CompanyMatch }>(ctx: ToolContext, subject: T, count = true): Promise<Admitted<T>> {
  const usage = await admit(ctx, count ? [subject.company.companyId] : []);
  return usage.ok ? ok({ ...subject, usage: usage.value }) : usage;
}

/** A logo by id and its company, not admitted yet (get_logo, the logo resource). */
export async function foundLogo(ctx: ToolContext, logoId: number): Promise<Result<{ logo: Logo; company: CompanyMatch }>> {
  const found = await findLogo(ctx.catalogue, logoId);
  return found ? ok(found) : fail("not_found", `Logo with ID ${logoId} not found`);
}

type Match = { logo: Logo; company: CompanyMatch; fallback: boolean };

/**
 * The best match of a search, and its logo of the preferred variant or else its best; not
 * admitted yet. A query that is a domain names that domain's company, as fetch_logos and the
 * lookup read it: one the catalogue does not know asks the domain's own site, and a company
 * found only by its name or the start of its domain (`acme.co` finding `acme.com`) is another's.
 * A discovered company answers a name only as its domain is named, exactly, and only when no
 * other discovered company is named so too (ownedName).
 */
export async function bestMatch(ctx: ToolContext, query: string, variant: LogoVariant | undefined): Promise<Result<Match>> {
  const trimmed = query.trim();
  const host = normaliseDomain(hostOfUrl(trimmed) ?? trimmed);
  let catalogue = ctx.catalogue;
  const hits = await searchCompanies(catalogue, query, 2);
  const hit = hits[0] && ownedName(hits, query) ? hits[0] : undefined;
  let company: CompanyMatch | null | undefined = host.ok && hit?.matchedBy === "name" ? undefined : hit;
  if (!company && host.ok) {
    const discovered = await discoveredCatalogue(ctx.env, host.domain, ctx.caller);
    if (discovered) company = await findCompanyByDomain((catalogue = discovered), host.domain);
  }
  const chosen = company ? chooseLogo(await logosOfCompany(catalogue, company), variant) : null;
  if (!company || !chosen) return fail("not_found", `No logo found for "${query}"`);
  return ok({ company, ...chosen });
}

/**
 * Whether the best hit may answer a name query: a catalogue company, a domain or ticker match,
 * or a discovered company whose domain's name is the query, when the next hit is not another
 * discovered company of that name (a tie goes to neither, not to whoever came first).
 */
function ownedName(hits: SearchHit[], query: string): boolean {
  const [best, next] = hits;
  if (best?.matchedBy !== "name" || best.nameSource === "catalogue") return true;
  const key = nameKey(query);
  if (domainNameKey(best.domain) !== key) return false;
  return !(next && next.matchedBy === "name" && next.nameSource !== "catalogue" && domainNameKey(next.domain) === key);
}

/** Whether the companies would be admitted now, counting nothing: for work that must succeed before a company counts. */
export function admissible(ctx: ToolContext, companyIds: number[]): Promise<Result<CompanyUsage>> {
  return checkCompanies(ctx.env, ctx.caller.accountId, ctx.caller.plan, companyIds);
}

/**
 * Hands out what `work` makes from the companies' logos, counting them only if it succeeds:
 * checked first, so a refused call reads and uploads nothing, and admitted after, so a failed
 * read or upload costs no quota (as a search does not). A concurrent call may take the last
 * place in between; this one is then refused before anything is handed out, and `takeBack`
 * removes what the work left outside (an uploaded file).
 */
export async function handOut<T>(
  ctx: ToolContext,
  companyIds: number[],
  work: () => Promise<Result<T>>,
  takeBack?: (made: T) => Promise<void>,
): Promise<Result<{ made: T; usage: CompanyUsage }>> {
  const before = await admissible(ctx, companyIds);
  if (!before.ok) return before;
  const made = await work();
  if (!made.ok) return made;
  const usage = await admit(ctx, companyIds);
  if (!usage.ok) {
    await takeBack?.(made.value);
    return usage;
  }
  return ok({ made: made.value, usage: usage.value });
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
