import type { Plan } from "../../schema";
import { dependency } from "../lib/dependencies";
import { fail, ok, type Result } from "../lib/errors";
import type { CompanyQuotaDecision } from "./companyQuota";
import { planLimits } from "./plans";
import { log } from "../lib/log";

/**
 * The client of the CompanyQuota Durable Object: the daily unique-company quota of the MCP
 * tools (spec "Agent endpoint plans"), shared by every tool that hands out a logo. One object
 * per account admits a whole set of companies or none, so concurrent calls are counted exactly
 * and a batch's duplicates once.
 */
export function companyQuotaFor(env: Pick<Env, "COMPANY_QUOTA">, accountId: string) {
  return env.COMPANY_QUOTA.get(env.COMPANY_QUOTA.idFromName(`companies:${accountId}`));
}

/** A call to the account's object, or Unavailable when it fails or does not answer in time. */
export function askCompanyQuota<T>(
  env: Pick<Env, "COMPANY_QUOTA">,
  accountId: string,
  call: (quota: ReturnType<typeof companyQuotaFor>) => Promise<T>,
): Promise<T> {
  return dependency("company quota", () => call(companyQuotaFor(env, accountId)));
}

export interface CompanyUsage {
  current: number;
  limit: number;
}

const UNAVAILABLE = "Quota service temporarily unavailable. Try again later.";

type QuotaCall = (
  env: Pick<Env, "COMPANY_QUOTA">,
  accountId: string,
  plan: Plan,
  companyIds: number[],
  now?: number,
) => Promise<Result<CompanyUsage>>;

/** Admits the companies, all or none, counting the ones not yet seen today. */
export const admitCompanies: QuotaCall = (env, accountId, plan, companyIds, now = Date.now()) =>
  decide(env, accountId, plan, (quota, limit) => quota.admit(companyIds, limit, now));

/** Whether the companies would be admitted now, counting nothing (work to do before admitting). */
export const checkCompanies: QuotaCall = (env, accountId, plan, companyIds, now = Date.now()) =>
  decide(env, accountId, plan, (quota, limit) => quota.check(companyIds, limit, now));

async function decide(
  env: Pick<Env, "COMPANY_QUOTA">,
  accountId: string,
  plan: Plan,
  ask: (quota: ReturnType<typeof companyQuotaFor>, limit: number) => Promise<CompanyQuotaDecision>,
): Promise<Result<CompanyUsage>> {
  let decision: CompanyQuotaDecision;
  try {
    decision = await askCompanyQuota(env, accountId, (quota) => ask(quota, planLimits[plan].companiesPerDay));
  } catch (error) {
    log.error("company_quota.unavailable", { error });
    return fail("unavailable", UNAVAILABLE);
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

/** Today's unique companies against the plan's limit, counting nothing: for usage reports. */
export async function companyUsage(
  env: Pick<Env, "COMPANY_QUOTA">,
  accountId: string,
  plan: Plan,
  now = Date.now(),
): Promise<Result<CompanyUsage>> {
  const limit = planLimits[plan].companiesPerDay;
  try {
    const current = await askCompanyQuota(env, accountId, (quota) => quota.usage(now));
    return ok({ current, limit });
  } catch (error) {
    log.error("company_quota.unavailable", { error });
    return fail("unavailable", UNAVAILABLE);
  }
}
