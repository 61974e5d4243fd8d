import { dependency } from "../lib/dependencies";

/**
 * The client of the RateLimiter Durable Object: which object counts what, and the stub to ask
 * it. Callers never spell `env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(…))` themselves.
 *
 *   key:<keyId>                          a key's lookups a minute, and its days (one shard)
 *   key:<keyId>:shard:<i>:of:<n>         shard i of a key split over n objects
 *   lookups:<accountId>                  an account's lookups a month, all its keys together
 *   mcp:<accountId>                      an account's MCP calls
 *   discovery:<accountId>                the discoveries an account's requests started
 *   sign-in:address:<ip>                 sign-in attempts from an address,
 *   sign-in:account:<email>:from:<ip>    for an account from an address,
 *   sign-in:account:<email>              for an account from anywhere
 *   sign-in:device:<id>                  from a browser that signed in before (a device token)
 *   authorize:address:<ip>               OAuth /authorize requests from an address
 *   discovery:address:<ip>               the discoveries requests from an address started
 *   discovery:deployment                 every discovery the deployment started
 *   confirmation-mail:<accountId>        confirmation links an account had mailed
 *   playground:address:<ip>              the landing page's playground, for visitors without an account
 *   playground:account:<accountId>       the dashboard's playground, for an account
 */
export const limiterNames = {
  keyShard: (keyId: string, index: number, shards: number) => (shards === 1 ? `key:${keyId}` : `key:${keyId}:shard:${index}:of:${shards}`),
  lookups: (accountId: string) => `lookups:${accountId}`,
  mcp: (accountId: string) => `mcp:${accountId}`,
  discovery: (accountId: string) => `discovery:${accountId}`,
  signInAddress: (address: string) => `sign-in:address:${address}`,
  signInAccountAtAddress: (email: string, address: string) => `sign-in:account:${email}:from:${address}`,
  signInAccount: (email: string) => `sign-in:account:${email}`,
  signInDevice: (id: string) => `sign-in:device:${id}`,
  authorizeAddress: (address: string) => `authorize:address:${address}`,
  discoveryAddress: (address: string) => `discovery:address:${address}`,
  discoveryDeployment: () => "discovery:deployment",
  confirmationMail: (accountId: string) => `confirmation-mail:${accountId}`,
  playgroundAddress: (address: string) => `playground:address:${address}`,
  playgroundAccount: (accountId: string) => `playground:account:${accountId}`,
};

export function rateLimiterFor(env: Pick<Env, "RATE_LIMITER">, name: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
}

/**
 * One call to the limiter `name`, failing as `Unavailable` when the object does not answer:
 * the caller then admits nothing (limits fail closed: a request is never served uncounted).
 */
export function askLimiter<T>(
  env: Pick<Env, "RATE_LIMITER">,
  name: string,
  call: (limiter: ReturnType<typeof rateLimiterFor>) => Promise<T>,
): Promise<T> {
  return dependency("rate limiter", () => call(rateLimiterFor(env, name)));
}
