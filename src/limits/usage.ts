import type { Plan } from "../../schema";
import { type CompanyUsage, companyUsage } from "./companyQuotaClient";
import { mcpWindows } from "./mcpLimits";
import { limiterNames, rateLimiterFor } from "./rateLimiterClient";

/**
 * Usage against a plan's limits, as the billing status and the REST usage endpoint report
 * it: each window's count, its limit and when it starts again.
 */
export interface WindowUsage {
  used: number;
  limit: number;
  resetsAt: string;
}

export const windowUsage = (w: { used: number; limit: number; resetAt: number }): WindowUsage => ({
  used: w.used,
  limit: w.limit,
  resetsAt: new Date(w.resetAt).toISOString(),
});

/** An account's MCP calls in its plan's window, and its unique companies today. */
export async function accountUsage(
  env: Env,
  accountId: string,
  plan: Plan,
): Promise<{ mcpRequests: (WindowUsage & { window: "day" | "minute" })[]; companiesToday: CompanyUsage | null }> {
  const [mcp, companies] = await Promise.all([
    rateLimiterFor(env, limiterNames.mcp(accountId)).usage(mcpWindows(plan, "seven")),
    companyUsage(env, accountId, plan),
  ]);
  return {
    mcpRequests: mcp.map((w) => ({ window: w.name === "mcp_request-day" ? ("day" as const) : ("minute" as const), ...windowUsage(w) })),
    companiesToday: companies.ok ? companies.value : null,
  };
}
