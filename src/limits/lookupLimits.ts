import { planLimits } from "../billing/plans";
import type { VerifiedKey } from "../keys/verify";
import type { LimitDecision, LimitWindow } from "./rateLimiter";

/**
 * Lookup limits of a key: its per-minute limit (the key's override, else its plan's) and its
 * plan's monthly quota, counted together in the key's RateLimiter object.
 */
export function lookupWindows(key: VerifiedKey): LimitWindow[] {
  const plan = planLimits[key.plan].lookup;
  return [
    { name: "lookup-minute", period: "minute", limit: key.perMinuteOverride ?? plan.perMinute },
    { name: "lookup-month", period: "month", limit: plan.perMonth },
  ];
}

export async function consumeLookup(env: Env, key: VerifiedKey, now = Date.now()): Promise<LimitDecision> {
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${key.id}`));
  return limiter.consume(lookupWindows(key), 1, now);
}
