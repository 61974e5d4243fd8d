/**
 * The client of the RateLimiter Durable Object: which object counts what, and the stub to ask
 * it. Callers never spell `env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(…))` themselves.
 *
 *   key:<keyId>                          a key's lookups (one shard)
 *   key:<keyId>:shard:<i>:of:<n>         shard i of a key split over n objects
 *   mcp:<accountId>                      an account's MCP calls
 *   sign-in:address:<ip> / account:<e>   sign-in attempts
 *   playground:address:<ip>              the landing page's playground, for visitors without a key
 */
export const limiterNames = {
  keyShard: (keyId: string, index: number, shards: number) => (shards === 1 ? `key:${keyId}` : `key:${keyId}:shard:${index}:of:${shards}`),
  mcp: (accountId: string) => `mcp:${accountId}`,
  signInAddress: (address: string) => `sign-in:address:${address}`,
  signInAccount: (email: string) => `sign-in:account:${email}`,
  playgroundAddress: (address: string) => `playground:address:${address}`,
};

export function rateLimiterFor(env: Pick<Env, "RATE_LIMITER">, name: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
}
