import { dependency } from "../lib/dependencies";
import type { DiscoveryAsker } from "../limits/discoveryLimits";
import type { CoordinatedOutcome } from "./coordinator";

/**
 * The client of the DiscoveryCoordinator Durable Object: one object per registrable domain.
 * Callers never spell `env.DISCOVERY_COORDINATOR.get(…idFromName(…))` themselves.
 */
export function discoveryFor(env: Pick<Env, "DISCOVERY_COORDINATOR">, domain: string) {
  return env.DISCOVERY_COORDINATOR.get(env.DISCOVERY_COORDINATOR.idFromName(`discovery:${domain}`));
}

/**
 * A discovery of `domain` through its coordinator, waiting at most `budgetMs` for it: Unavailable
 * when the object fails, or has not answered within that wait and the deadline of every call.
 */
export function askDiscovery(
  env: Pick<Env, "DISCOVERY_COORDINATOR">,
  domain: string,
  options: { budgetMs: number; refresh?: boolean; asker?: DiscoveryAsker },
): Promise<CoordinatedOutcome> {
  return dependency(
    "discovery",
    () => discoveryFor(env, domain).discover(domain, options) as Promise<CoordinatedOutcome>,
    options.budgetMs,
  );
}
