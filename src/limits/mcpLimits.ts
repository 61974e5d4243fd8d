import type { Plan } from "../../schema";
import { planLimits } from "./plans";
import type { LimitDecision, LimitWindow } from "./rateLimiter";
import { askLimiter, limiterNames } from "./rateLimiterClient";

/** The two forms of the MCP endpoint (`/mcp` and `/mcp?toolset=three`). */
export type Toolset = "seven" | "three";

/**
 * Each HTTP call to /mcp counts one `mcp_request` of its account, in the account's own
 * RateLimiter object, so concurrent calls are counted exactly.
 *
 * Free counts per UTC day, reset at midnight: one daily counter, whose cap is 50 for the
 * seven-tool form and 20 for the three-tool form (a three-tool call is refused once the day's
 * count, from either form, has reached 20). Paid plans count per minute.
 */
export function mcpWindows(plan: Plan, toolset: Toolset): LimitWindow[] {
  const limits = planLimits[plan].mcp;
  const perDay = toolset === "three" ? limits.perDayThreeTool : limits.perDay;
  const windows: LimitWindow[] = [];
  if (perDay !== null) windows.push({ name: "mcp_request-day", period: "day", limit: perDay });
  if (limits.perMinute !== null) windows.push({ name: "mcp_request-minute", period: "minute", limit: limits.perMinute });
  return windows;
}

export type McpDecision = LimitDecision & { dailyLimit?: number };

/** The daily history MCP calls are counted under (RateLimiter `counter`), for usage reports. */
export const MCP_COUNTER = "mcp_request";

/**
 * Counts one HTTP call costing `messages` (src/mcp/endpoint.ts `chargeFor`: a batch costs one
 * per request in it, as many calls of one would): admitted whole or not at all.
 */
export async function countMcpRequest(
  env: Env,
  accountId: string,
  plan: Plan,
  toolset: Toolset,
  now = Date.now(),
  messages = 1,
): Promise<McpDecision> {
  const windows = mcpWindows(plan, toolset);
  // Asked even without windows: the call still goes into the account's daily history.
  const decision = await askLimiter(env, limiterNames.mcp(accountId), (limiter) => limiter.consume(windows, messages, now, MCP_COUNTER));
  const daily = windows.find((w) => w.name === decision.refusedBy && w.period === "day");
  return daily ? { ...decision, dailyLimit: daily.limit } : decision;
}
