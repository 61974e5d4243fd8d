/**
 * The client of the DiscoveryCoordinator Durable Object: one object per registrable domain.
 * Callers never spell `env.DISCOVERY_COORDINATOR.get(…idFromName(…))` themselves.
 */
export function discoveryFor(env: Pick<Env, "DISCOVERY_COORDINATOR">, domain: string) {
  return env.DISCOVERY_COORDINATOR.get(env.DISCOVERY_COORDINATOR.idFromName(`discovery:${domain}`));
}
