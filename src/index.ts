import { app } from "./app";
import { log } from "./lib/log";
import { configurationProblems } from "./env";
import { consumeDiscoveries } from "./discovery/queue";
import { warmLookup } from "./lookup/warm";

export { RateLimiter } from "./limits/rateLimiter";
export { CompanyQuota } from "./limits/companyQuota";
export { DiscoveryCoordinator } from "./discovery/coordinator";

// Said once per isolate, at its first request: a deployment missing a secret fails loudly in
// the logs at start, not one request at a time (names and consequences only, never values).
let configurationChecked = false;

export default {
  fetch: (request, env, ctx) => {
    if (!configurationChecked) {
      configurationChecked = true;
      for (const problem of configurationProblems(env)) log.error("configuration_problem", { problem });
    }
    // A warm lookup is answered before the router (src/lookup/warm.ts); anything else is routed.
    return warmLookup(request, env, ctx) ?? app.fetch(request, env, ctx);
  },
  queue: (batch, env) => consumeDiscoveries(batch, env),
} satisfies ExportedHandler<Env>;
