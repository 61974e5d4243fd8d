import type { LogoVariant } from "../../schema";
import type { Logo } from "../catalogue/entities";
import { findCompany, findCompanyByDomain } from "../catalogue/companies";
import type { CompanyMatch } from "../catalogue/entities";
import { findLogo, logosOfCompany } from "../catalogue/logos";
import { domainNameKey, nameKey } from "../catalogue/names";
import { hostOfUrl, keyedQuery, type SearchHit, searchCompanies } from "../catalogue/search";
import { PERSONAL_ADDRESS } from "../catalogue/emailAddresses";
import { chooseLogo, preferredLogo } from "../catalogue/resolveLogo";
import { takedownOf, takenDownMessage } from "../catalogue/takedowns";
import { overrideAsLogo, pinnedFor } from "../corrections/overrides";
import { discoveredCatalogue } from "../discovery/onMiss";
import { type DomainResult, normaliseDomain } from "../lib/domain";
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
  // An override of a domain the catalogue does not know (company 0) is the account's own logo: no company to count.
  return admitCompanies(
    ctx.env,
    ctx.caller.accountId,
    ctx.caller.plan,
    companyIds.filter((id) => id !== 0),
  );
}

/** A domain taken down (docs/corrections.md#takedowns), as the tools say it: `taken_down`, with the reason. */
export async function refusedIfTakenDown(ctx: ToolContext, ...domains: (string | null | undefined)[]): Promise<Result<true>> {
  const reason = await takedownOf(ctx.catalogue, ...domains);
  const named = domains.find((d) => d);
  return reason === undefined ? ok(true) : fail("taken_down", takenDownMessage(named ?? "", reason));
}

/**
 * The logo the account gets for a company's: its own override of the company's domain (or of the
 * domain asked), standing in for the catalogue's (docs/corrections.md, "Fixing a logo for yourself").
 */
export async function asAccountSees(
  ctx: ToolContext,
  company: CompanyMatch,
  logo: Logo,
  ...asked: (string | null | undefined)[]
): Promise<Logo> {
  const pinned = pinnedFor(await ctx.overrides(), ...asked, company.domain);
  return pinned ? overrideAsLogo(pinned, logo) : logo;
}

/** An override of a domain the catalogue has no company for: the account's logo, under a company of its own (id 0). */
async function pinnedOnly(ctx: ToolContext, host: string): Promise<Match | null> {
  const pinned = pinnedFor(await ctx.overrides(), host);
  if (!pinned) return null;
  return {
    company: { companyId: 0, companyName: pinned.domain, nameSource: "domain" as const, domain: pinned.domain, brandColor: null },
    logo: overrideAsLogo(pinned, undefined, 0),
    fallback: false,
  };
}

type Admitted<T> = Result<T & { usage: CompanyUsage }>;

async function admitted<T extends { company: CompanyMatch }>(ctx: ToolContext, subject: T, count = true): Promise<Admitted<T>> {
  const usage = await admit(ctx, count ? [subject.company.companyId] : []);
  return usage.ok ? ok({ ...subject, usage: usage.value }) : usage;
}

/** A logo by id and its company, not admitted yet (get_logo, the logo resource). */
export async function foundLogo(ctx: ToolContext, logoId: number): Promise<Result<{ logo: Logo; company: CompanyMatch }>> {
  const found = await findLogo(ctx.catalogue, logoId);
  if (!found) return fail("not_found", `Logo with ID ${logoId} not found`);
  const allowed = await refusedIfTakenDown(ctx, found.company.domain);
  if (!allowed.ok) return allowed;
  return ok({ company: found.company, logo: await asAccountSees(ctx, found.company, found.logo) });
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
  // An email address names its domain, as a domain does; a person's address names no company.
  const keyed = keyedQuery(trimmed);
  const address = keyed?.matchedBy === "email" ? keyed.address : null;
  if (address?.kind === "invalid") return fail("invalid_argument", address.message);
  if (address?.kind === "personal") return fail("not_found", PERSONAL_ADDRESS);
  const host: DomainResult = address ? { ok: true, domain: address.domain } : normaliseDomain(hostOfUrl(trimmed) ?? trimmed);
  const asked = host.ok ? host.domain : null;
  let catalogue = ctx.catalogue;
  const hits = await searchCompanies(catalogue, query, 2);
  const hit = hits[0] && ownedName(hits, query) ? hits[0] : undefined;
  let company: CompanyMatch | null | undefined = host.ok && hit?.matchedBy === "name" ? undefined : hit;
  const allowed = await refusedIfTakenDown(ctx, asked, company?.domain);
  if (!allowed.ok) return allowed;
  if (!company && asked !== null) {
    // The account's own logo of a domain the catalogue does not know: no need to ask the site.
    const pinned = await pinnedOnly(ctx, asked);
    if (pinned) return ok(pinned);
    const discovered = await discoveredCatalogue(ctx.env, asked, ctx.caller);
    if (discovered) company = await findCompanyByDomain((catalogue = discovered), asked);
  }
  const chosen = company ? chooseLogo(await logosOfCompany(catalogue, company), variant) : null;
  if (!company || !chosen) return fail("not_found", `No logo found for "${query}"`);
  return ok({ company, ...chosen, logo: await asAccountSees(ctx, company, chosen.logo, asked) });
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
  const allowed = await refusedIfTakenDown(ctx, company.domain);
  if (!allowed.ok) return allowed;
  const all = await logosOfCompany(ctx.catalogue, company);
  // The account's override stands in for the company's default icon.
  const icon = preferredLogo(all.filter((logo) => logo.variant === "icon"));
  const seen = icon ? await asAccountSees(ctx, company, icon) : undefined;
  const logos = all.map((logo) => (logo === icon && seen ? seen : logo)).filter((logo) => only === undefined || logo.variant === only);
  return admitted(ctx, { company, logos }, logos.length > 0);
}

/** `_meta.usage` (spec "Usage summary"), on get_company_logos and insert_logo. */
export function usageMeta(ctx: ToolContext, companies: CompanyUsage) {
  return { usage: { ...(ctx.caller.requests ? { requests: ctx.caller.requests } : {}), companies } };
}
