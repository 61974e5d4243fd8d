import type { Plan } from "../../schema";
import { planLimits } from "./plans";
import type { LimitWindow } from "./rateLimiter";
import { askLimiter, limiterNames } from "./rateLimiterClient";

/** Who a discovery is started for: the account its daily budget is counted against. */
export interface DiscoveryAsker {
  accountId: string;
  plan: Plan;
}

export const DISCOVERY_COUNTER = "discovery";

/** The one window of an account's discoveries: its plan's figure a UTC day. */
export const discoveryWindows = (plan: Plan): LimitWindow[] => [
  { name: DISCOVERY_COUNTER, period: "day", limit: planLimits[plan].discoveriesPerDay },
];

/**
 * Counts one discovery the asker's request would start, against its plan's daily budget
 * (planLimits.discoveriesPerDay); false once the day's budget is spent. Throws Unavailable when
 * the limiter does not answer: the caller then starts nothing, as limits fail closed.
 */
export async function spendDiscovery(env: Pick<Env, "RATE_LIMITER">, asker: DiscoveryAsker, now = Date.now()): Promise<boolean> {
  const windows = discoveryWindows(asker.plan);
  const decision = await askLimiter(env, limiterNames.discovery(asker.accountId), (limiter) =>
    limiter.consume(windows, 1, now, DISCOVERY_COUNTER),
  );
  return decision.allowed;
}

/** The discoveries an account's requests started today, against its plan's budget. */
export async function discoveryUsage(env: Pick<Env, "RATE_LIMITER">, accountId: string, plan: Plan, now = Date.now()) {
  const [today] = await askLimiter(env, limiterNames.discovery(accountId), (limiter) => limiter.usage(discoveryWindows(plan), now));
  return today!;
}
