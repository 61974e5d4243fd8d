import { admitCompanies, type CompanyUsage } from "../limits/companyLimits";
import type { Result } from "../lib/errors";
import type { ToolContext } from "./context";

/**
 * The unique-company quota as the tools meet it: admitted once the companies are known and
 * before any logo data is returned, so a refused call hands out nothing.
 */
export function admit(ctx: ToolContext, companyIds: number[]): Promise<Result<CompanyUsage>> {
  return admitCompanies(ctx.env, ctx.caller.accountId, ctx.caller.plan, companyIds);
}

/** `_meta.usage` (spec "Usage summary"), on get_company_logos and insert_logo. */
export function usageMeta(ctx: ToolContext, companies: CompanyUsage) {
  return { usage: { ...(ctx.caller.requests ? { requests: ctx.caller.requests } : {}), companies } };
}
