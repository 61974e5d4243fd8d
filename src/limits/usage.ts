import type { Plan } from "../../schema";
import { type CompanyUsage, companyUsage } from "./companyQuotaClient";
import { discoveryUsage } from "./discoveryLimits";
import { mcpWindows, type Toolset } from "./mcpLimits";
import { askLimiter, limiterNames } from "./rateLimiterClient";

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

export type McpWindowUsage = WindowUsage & { window: "day" | "minute"; toolset: Toolset };

const TOOLSETS: Toolset[] = ["seven", "three"];

/**
 * An account's MCP calls in its plan's window, its unique companies today, and the
 * discoveries its requests started today (src/limits/discoveryLimits.ts). The two forms
 * share one count but not one cap (Free: 50 a day for the seven-tool form, 20 for the
 * three-tool form), so each form's window is reported with its own limit.
 */
export async function accountUsage(
  env: Env,
  accountId: string,
  plan: Plan,
  /** The account's discoveries a day (accountDiscoveriesPerDay: its plan's once its email is confirmed). */
  discoveriesPerDay: number,
): Promise<{ mcpRequests: McpWindowUsage[]; companiesToday: CompanyUsage | null; discoveriesToday: WindowUsage }> {
  const [perForm, companies, discoveries] = await Promise.all([
    Promise.all(
      TOOLSETS.map((toolset) => askLimiter(env, limiterNames.mcp(accountId), (limiter) => limiter.usage(mcpWindows(plan, toolset)))),
    ),
    companyUsage(env, accountId, plan),
    discoveryUsage(env, accountId, discoveriesPerDay),
  ]);
  return {
    mcpRequests: TOOLSETS.flatMap((toolset, i) =>
      perForm[i]!.map((w) => ({
        window: w.name === "mcp_request-day" ? ("day" as const) : ("minute" as const),
        toolset,
        ...windowUsage(w),
      })),
    ),
    companiesToday: companies.ok ? companies.value : null,
    discoveriesToday: windowUsage(discoveries),
  };
}
