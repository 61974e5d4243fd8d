import type { Plan } from "../../schema";
import { planLimits } from "./plans";
import { fail, ok, type Result } from "../lib/errors";
import type { CompanyQuotaDecision } from "./companyQuota";

/**
 * The daily unique-company quota of the MCP tools (spec "Agent endpoint plans"), shared by
 * every tool that hands out a logo: one CompanyQuota object per account admits a whole set of
 * companies or none, so concurrent calls are counted exactly and a batch's duplicates once.
 */
export const companyQuotaName = (accountId: string) => `companies:${accountId}`;

export interface CompanyUsage {
  current: number;
  limit: number;
}

export async function admitCompanies(
  env: Pick<Env, "COMPANY_QUOTA">,
  accountId: string,
  plan: Plan,
  companyIds: number[],
  now = Date.now(),
): Promise<Result<CompanyUsage>> {
  const limit = planLimits[plan].companiesPerDay;
  let decision: CompanyQuotaDecision;
  try {
    const quota = env.COMPANY_QUOTA.get(env.COMPANY_QUOTA.idFromName(companyQuotaName(accountId)));
    decision = await quota.admit(companyIds, limit, now);
  } catch (error) {
    console.error("company quota: unavailable", error);
    return fail("internal", "Quota service temporarily unavailable. Try again later.");
  }
  if (!decision.allowed) {
    const resets = new Date(decision.resetAt).toISOString();
    return fail(
      "rate_limited",
      `Daily company limit (${decision.limit}) exceeded. You've accessed ${decision.current} unique companies today. Resets at ${resets}.`,
    );
  }
  return ok({ current: decision.current, limit: decision.limit });
}
