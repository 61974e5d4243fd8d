import type { Plan } from "../../schema";
import type { VerifiedKey } from "../keys/verify";
import { askCompanyQuota } from "./companyQuotaClient";
import { lookupHistory } from "./lookupLimits";
import { MCP_COUNTER } from "./mcpLimits";
import { lastDays } from "./periods";
import { askLimiter, limiterNames } from "./rateLimiterClient";

/**
 * An account's usage day by day, read from where it is counted: each key's lookups from its
 * RateLimiter objects, MCP calls from the account's RateLimiter, unique companies from its
 * CompanyQuota. Each keeps HISTORY_DAYS days.
 */
export interface DailyUsage {
  /** UTC day starts, Unix milliseconds, oldest first. */
  days: number[];
  /** Lookups per key per day, in the order of the keys asked for. */
  lookups: Array<{ keyId: string; counts: number[] }>;
  /** All keys' lookups per day. */
  totalLookups: number[];
  mcpCalls: number[];
  companies: number[];
}

export async function dailyUsage(
  env: Env,
  accountId: string,
  plan: Plan,
  keys: Array<Pick<VerifiedKey, "id" | "perMinuteOverride">>,
  days: number,
  now = Date.now(),
): Promise<DailyUsage> {
  const starts = lastDays(days, now);
  const [perKey, mcpCalls, companies] = await Promise.all([
    Promise.all(keys.map((key) => lookupHistory(env, { ...key, plan }, starts))),
    askLimiter(env, limiterNames.mcp(accountId), (limiter) => limiter.history(MCP_COUNTER, starts)),
    askCompanyQuota(env, accountId, (quota) => quota.history(starts)),
  ]);
  return {
    days: starts,
    lookups: keys.map((key, i) => ({ keyId: key.id, counts: perKey[i]! })),
    totalLookups: starts.map((_, day) => perKey.reduce((sum, counts) => sum + counts[day]!, 0)),
    mcpCalls,
    companies,
  };
}
